package cpi

import (
	"fmt"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudprops"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// DiskUpdater is update_disk as later bosh-cpi-go declares it (apiv1.DiskUpdater);
// the pinned module lacks it, so main serves the method itself.
type DiskUpdater interface {
	UpdateDisk(cid apiv1.DiskCID, newMiB int, cp apiv1.DiskCloudProps) (apiv1.DiskCID, error)
}

var _ DiskUpdater = CPI{}

// diskChange is what update_disk does to a volume: nothing, a resize on its
// offering, or a move to another offering (at sizeGB when customized).
type diskChange struct {
	offering *cloudstack.DiskOffering
	sizeGB   int64
	resize   bool // same offering, larger
	move     bool // another offering
}

// UpdateDisk is update_disk: the disk takes the size and the disk type's
// offering (the same disk_offering create_disk reads) in place and keeps its
// CID. A larger size on the same offering is resizeVolume; another offering is
// changeOfferingForVolume (CloudStack 4.17+). NotSupported, on which the
// director copies the data to a new disk, answers what CloudStack cannot do in
// place: a smaller disk, or a change CloudStack refuses (its checks, or a
// CloudStack without the command). Bad input is a CloudError: a copy would
// fail the same way.
func (c disks) UpdateDisk(cid apiv1.DiskCID, newMiB int, cp apiv1.DiskCloudProps) (apiv1.DiskCID, error) {
	if newMiB <= 0 {
		return apiv1.DiskCID{}, cloudError(fmt.Errorf("update_disk of disk %s: the new size must be a positive number of MiB, got %d",
			cid.AsString(), newMiB))
	}
	props, err := cloudprops.ReadDisk(cp, "disk")
	if err != nil {
		return apiv1.DiskCID{}, cloudError(fmt.Errorf("update_disk of disk %s: %w", cid.AsString(), err))
	}
	vol, err := mustFindDisk(c.cloud, cid)
	if err != nil {
		return apiv1.DiskCID{}, err
	}
	offering, err := c.persistentDiskOffering(props.DiskOffering)
	if err != nil {
		return apiv1.DiskCID{}, wrap(err, "update_disk of disk %s", cid.AsString())
	}
	change, err := planDiskChange(vol, offering, newMiB)
	if err == nil {
		err = c.attachedMayResize(vol, change)
	}
	if err == nil {
		err = c.applyDiskChange(vol, change)
	}
	if err != nil {
		return apiv1.DiskCID{}, err
	}
	return cid, nil
}

// planDiskChange compares the volume with what create_disk would make of the
// size and offering: a customized offering at the size rounded up to GiB, a
// fixed one at its own size, which must hold the size.
func planDiskChange(vol *cloudstack.Volume, o *cloudstack.DiskOffering, newMiB int) (diskChange, error) {
	change := diskChange{offering: o, sizeGB: int64(gib(newMiB))}
	if !o.Customized {
		if o.SizeGB*1024 < int64(newMiB) {
			return change, cloudError(fmt.Errorf("disk offering %q has %d GiB, less than the %d MiB asked for disk %s",
				o.Name, o.SizeGB, newMiB, vol.ID))
		}
		change.sizeGB = o.SizeGB
	}
	same := o.ID == vol.OfferingID
	switch {
	case same && (change.sizeGB == vol.SizeGB || (!o.Customized && change.sizeGB < vol.SizeGB && vol.SizeGB*1024 >= int64(newMiB))):
		// Already there; a fixed offering's disk grown earlier still holds the size.
	case change.sizeGB < vol.SizeGB:
		return change, notSupported(fmt.Errorf("disk %s is %d GiB; CloudStack cannot shrink it to %d GiB in place", vol.ID, vol.SizeGB, change.sizeGB))
	case same:
		change.resize = true
	default:
		change.move = true
	}
	return change, nil
}

// attachedMayResize refuses, before asking, a new size for a disk attached to
// a VM CloudStack cannot resize it on: changeOfferingForVolume reports that
// as a failed operation, not as a refusal. The director detaches the disk
// before update_disk, so this is for a disk an operator left attached.
func (c disks) attachedMayResize(vol *cloudstack.Volume, change diskChange) error {
	if vol.VMID == "" || change.sizeGB == vol.SizeGB || (!change.resize && !change.move) {
		return nil
	}
	vm, err := mustFindVM(c.cloud, apiv1.NewVMCID(vol.VMID))
	if err != nil {
		return err
	}
	if !vm.ResizesAttachedDisks() {
		return notSupported(fmt.Errorf("disk %s is attached to %s VM %s, which is %s: CloudStack resizes its disks only while it is stopped or they are detached",
			vol.ID, vm.Hypervisor, vm.ID, vm.State))
	}
	return nil
}

// applyDiskChange makes the change, and checks what CloudStack answered:
// after a migration changeOfferingForVolume logs a failed resize and succeeds,
// so a volume short of the size is resized on its new offering.
func (c disks) applyDiskChange(vol *cloudstack.Volume, change diskChange) error {
	o := change.offering
	switch {
	case change.resize:
		return changeError(c.cloud.ResizeVolume(vol.ID, int(change.sizeGB), ""), "resizing disk %s to %d GiB", vol.ID, change.sizeGB)
	case !change.move:
		return nil
	}
	size := 0
	if o.Customized {
		size = int(change.sizeGB)
	}
	after, err := c.cloud.ChangeVolumeOffering(vol.ID, o.ID, size)
	if err != nil {
		return changeError(err, "moving disk %s to disk offering %q at %d GiB", vol.ID, o.Name, change.sizeGB)
	}
	if after.OfferingID != o.ID {
		return cloudError(fmt.Errorf("CloudStack changed the offering of disk %s but reports offering %s, not %q (%s)", vol.ID, after.OfferingID, o.Name, o.ID))
	}
	if after.SizeGB >= change.sizeGB {
		return nil
	}
	c.logger.Warn("disk", "disk %s is on disk offering %q but %d GiB, not %d: resizing it", vol.ID, o.Name, after.SizeGB, change.sizeGB)
	return changeError(c.cloud.ResizeVolume(vol.ID, int(change.sizeGB), ""), "resizing disk %s to %d GiB after its offering change", vol.ID, change.sizeGB)
}

// changeError types a refused change NotSupported (the director then copies
// the disk), capacity NoDiskSpace, and the rest CloudError.
func changeError(err error, format string, args ...any) error {
	if err != nil && cloudstack.IsChangeRefused(err) {
		return notSupported(fmt.Errorf("%s: CloudStack cannot do it in place: %w", fmt.Sprintf(format, args...), err))
	}
	return diskError(err, format, args...)
}

func notSupported(err error) error { return &Error{kind: "NotSupported", err: err} }
