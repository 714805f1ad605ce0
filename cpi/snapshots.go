package cpi

import (
	"strings"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// snapshots is the part behind snapshot_disk and delete_snapshot.
type snapshots struct {
	callDeps
	cloud     snapshotCloud
	leftovers snapshotLeftovers
}

// snapshotCloud is what the snapshot part asks of CloudStack: snapshots,
// their tags, and the disk a snapshot is of.
type snapshotCloud interface {
	cloudstack.Snapshots
	cloudstack.Tags
	cloudstack.VolumeFinder
}

// SnapshotDisk implements apiv1.CPI: the snapshot carries the metadata as
// tags.
func (c snapshots) SnapshotDisk(cid apiv1.DiskCID, meta apiv1.DiskMeta) (apiv1.SnapshotCID, error) {
	vol, err := mustFindDisk(c.cloud, cid)
	if err != nil {
		return apiv1.SnapshotCID{}, err
	}
	name, err := newSnapshotName()
	if err != nil {
		return apiv1.SnapshotCID{}, err
	}
	c.leftovers.removeInterruptedSnapshots(vol.ID)
	tags := metadataTags(meta)
	if c.ctx.DirectorUUID != "" {
		tags[marks.DirectorTag] = c.ctx.DirectorUUID
	}
	// Incomplete until this call is sure to answer: a snapshot_disk
	// killed before then leaves a snapshot the next one removes.
	tags[marks.IncompleteTag] = marks.ThisProcess()
	start := time.Now()
	// The mark is cleared only once the snapshot is backed up: one that
	// lost its mark earlier would look complete to the sweep after a kill
	// meanwhile, so the two jobs stay in series.
	snap, err := c.cloud.CreateSnapshot(vol.ID, name, tags)
	made := err == nil
	if made {
		err = c.cloud.SetTags(cloudstack.ResourceSnapshot, snap.ID, map[string]string{marks.IncompleteTag: tags[marks.IncompleteTag]},
			map[string]string{marks.IncompleteTag: ""})
	}
	if err != nil {
		failed := diskError(err, "snapshotting disk %s as %s", vol.ID, name)
		return apiv1.SnapshotCID{}, c.leftovers.undoSnapshot(vol.ID, name, start, failed, err, made)
	}
	return apiv1.NewSnapshotCID(snap.ID), nil
}

func newSnapshotName() (string, error) {
	name, err := newVMName()
	return marks.SnapshotName(strings.TrimPrefix(name, "vm-")), err
}

// DeleteSnapshot implements apiv1.CPI: gone already is success.
func (c snapshots) DeleteSnapshot(cid apiv1.SnapshotCID) error {
	snap, err := c.cloud.FindSnapshot(cid.AsString())
	if err != nil {
		return wrap(err, "looking up snapshot %s", cid.AsString())
	}
	if snap == nil || snap.Gone() {
		return nil
	}
	return wrap(c.cloud.DeleteSnapshot(snap.ID), "deleting snapshot %s", snap.ID)
}
