package cpi

import (
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// snapshotLeftovers is the part that removes what snapshot_disk calls
// left: it only lists, waits for and deletes snapshots.
type snapshotLeftovers struct {
	callDeps
	cloud cloudstack.SnapshotLeftovers
}

// removeInterruptedSnapshots deletes the disk's snapshots that this
// director's snapshot_disk calls left marked incomplete when they died
// (kill -9, a lost machine): the process the mark names is gone from this
// host. A snapshot a job still works on is waited for first: the killed
// call's job goes on, and its tags come with its end. Failures are
// logged: a leftover blocks nothing.
func (c snapshotLeftovers) removeInterruptedSnapshots(volumeID string) {
	snaps, err := c.cloud.VolumeSnapshots(volumeID)
	if err != nil {
		c.logger.Warn("disk", "looking for snapshots interrupted snapshot_disk calls left of disk %s: %s", volumeID, err)
		return
	}
	c.deleteLeftovers("snapshot", "snapshot_disk", "of disk "+volumeID, func(yield func(leftover) bool) {
		for _, s := range snaps {
			if s = c.settled(volumeID, s); s != nil && c.interruptedSnapshot(s) && !yield(leftover{s.ID, s.Name}) {
				return
			}
		}
	}, c.cloud.DeleteSnapshot)
}

// settled waits for a snapshot its snapshot_disk's job still works on: the
// killed call's job goes on, and its tags come with its end. nil when it
// cannot be told.
func (c snapshotLeftovers) settled(volumeID string, s *cloudstack.Snapshot) *cloudstack.Snapshot {
	if !s.Busy() || !marks.MadeBySnapshotDisk(s.Name) {
		return s
	}
	settled, err := c.cloud.SettledSnapshot(volumeID, s.Name, time.Now().Add(c.cfg.CloudStack.JobTimeout.D()))
	if err != nil {
		return nil
	}
	return settled
}

// interruptedSnapshot: this director's snapshot_disk marked it incomplete,
// and the process the mark names is gone from this host.
func (c snapshotLeftovers) interruptedSnapshot(s *cloudstack.Snapshot) bool {
	return !s.Busy() && !s.Gone() && marks.LeftIncomplete(s.Tags, c.ctx.DirectorUUID)
}

// undoSnapshot finds, after an uncertain outcome, the snapshot the call may
// have made by its unique name, waits (within the job timeout from start)
// until it is backed up or failed, and deletes it. made says the snapshot
// exists whatever cause says (a refused request to clear its mark).
func (c snapshotLeftovers) undoSnapshot(volumeID, name string, start time.Time, failed, cause error, made bool) error {
	if !made && cloudstack.NotActedOn(cause) {
		return failed
	}
	snap, err := c.cloud.SettledSnapshot(volumeID, name, start.Add(c.cfg.CloudStack.JobTimeout.D()))
	var found *madeThing
	if snap != nil {
		found = &madeThing{id: snap.ID, state: snap.State, busy: snap.Busy()}
	}
	u := undoing{kind: "snapshot", name: name, where: " of disk " + volumeID, method: "snapshot_disk"}
	return c.removeMade(failed, u, found, err, c.cloud.DeleteSnapshot)
}
