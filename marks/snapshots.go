package marks

import "strings"

// SnapshotNamePrefix opens the unique name snapshot_disk gives every
// snapshot (bosh-snapshot-<uuid>), by which a snapshot_disk that lost
// CloudStack's answer finds it.
const SnapshotNamePrefix = "bosh-snapshot-"

// SnapshotName is the name snapshot_disk gives a snapshot (unique is a
// fresh uuid).
func SnapshotName(unique string) string { return SnapshotNamePrefix + unique }

// MadeBySnapshotDisk says the CPI's snapshot_disk made the snapshot named
// so.
func MadeBySnapshotDisk(name string) bool {
	return strings.HasPrefix(name, SnapshotNamePrefix)
}

// IncompleteOwner is the process a resource's incomplete mark (its tags)
// names, and whether it has the mark: snapshot_disk tags its snapshot with
// it in the createSnapshot call and removes it once the snapshot is backed
// up.
func IncompleteOwner(tags map[string]string) (string, bool) {
	owner, ok := tags[IncompleteTag]
	return owner, ok
}

// LeftIncomplete says the director's call that tagged a resource
// incomplete (its tags) is gone from this host: what it made is a
// leftover.
func LeftIncomplete(tags map[string]string, director string) bool {
	return tags[DirectorTag] == director && ProcessGone(tags[IncompleteTag])
}
