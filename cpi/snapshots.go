package cpi

import (
	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
)

// SnapshotDisk implements apiv1.CPI: the snapshot carries the metadata as
// tags.
func (c CPI) SnapshotDisk(cid apiv1.DiskCID, meta apiv1.DiskMeta) (apiv1.SnapshotCID, error) {
	vol, err := c.mustFindDisk(cid)
	if err != nil {
		return apiv1.SnapshotCID{}, err
	}
	snap, err := c.cloud.CreateSnapshot(vol.ID, metadataTags(meta))
	if err != nil {
		return apiv1.SnapshotCID{}, diskError(err, "snapshotting disk %s", vol.ID)
	}
	return apiv1.NewSnapshotCID(snap.ID), nil
}

// DeleteSnapshot implements apiv1.CPI: gone already is success.
func (c CPI) DeleteSnapshot(cid apiv1.SnapshotCID) error {
	snap, err := c.cloud.FindSnapshot(cid.AsString())
	if err != nil {
		return wrap(err, "looking up snapshot %s", cid.AsString())
	}
	if snap == nil || snap.Gone() {
		return nil
	}
	return wrap(c.cloud.DeleteSnapshot(snap.ID), "deleting snapshot %s", snap.ID)
}
