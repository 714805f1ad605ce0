package cpi

import "github.com/cloudfoundry/bosh-cpi-go/apiv1"

// CreateDisk implements apiv1.CPI.
func (c CPI) CreateDisk(int, apiv1.DiskCloudProps, *apiv1.VMCID) (apiv1.DiskCID, error) {
	return apiv1.DiskCID{}, notImplemented("create_disk")
}

// DeleteDisk implements apiv1.CPI.
func (c CPI) DeleteDisk(apiv1.DiskCID) error { return notImplemented("delete_disk") }

// AttachDisk implements apiv1.CPI (API v1).
func (c CPI) AttachDisk(apiv1.VMCID, apiv1.DiskCID) error { return notImplemented("attach_disk") }

// AttachDiskV2 implements apiv1.CPI (API v2).
func (c CPI) AttachDiskV2(apiv1.VMCID, apiv1.DiskCID) (apiv1.DiskHint, error) {
	return apiv1.DiskHint{}, notImplemented("attach_disk")
}

// DetachDisk implements apiv1.CPI.
func (c CPI) DetachDisk(apiv1.VMCID, apiv1.DiskCID) error { return notImplemented("detach_disk") }

// SetDiskMetadata implements apiv1.CPI.
func (c CPI) SetDiskMetadata(apiv1.DiskCID, apiv1.DiskMeta) error {
	return notImplemented("set_disk_metadata")
}

// HasDisk implements apiv1.CPI.
func (c CPI) HasDisk(apiv1.DiskCID) (bool, error) { return false, notImplemented("has_disk") }

// ResizeDisk implements apiv1.CPI.
func (c CPI) ResizeDisk(apiv1.DiskCID, int) error { return notImplemented("resize_disk") }
