package cpi

import "github.com/cloudfoundry/bosh-cpi-go/apiv1"

// SnapshotDisk implements apiv1.CPI.
func (c CPI) SnapshotDisk(apiv1.DiskCID, apiv1.DiskMeta) (apiv1.SnapshotCID, error) {
	return apiv1.SnapshotCID{}, notImplemented("snapshot_disk")
}

// DeleteSnapshot implements apiv1.CPI.
func (c CPI) DeleteSnapshot(apiv1.SnapshotCID) error { return notImplemented("delete_snapshot") }
