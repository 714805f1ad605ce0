package cpi

import (
	"fmt"
	"strconv"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudprops"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// disks is the part behind the disk methods: volumes, put on the VM a CID
// names, on the offering the disk type or the config names.
type disks struct {
	callDeps
	cloud     diskCloud
	offerings offerings
	leftovers diskLeftovers
}

// diskCloud is what the disk part asks of CloudStack.
type diskCloud interface {
	cloudstack.Volumes
	cloudstack.VMFinder
	cloudstack.ZoneCatalog
	cloudstack.DiskCatalog
	cloudstack.Tags
}

// CreateDisk implements apiv1.CPI: in the VM's zone when a VM is named.
func (c disks) CreateDisk(sizeMiB int, cp apiv1.DiskCloudProps, vmCID *apiv1.VMCID) (apiv1.DiskCID, error) {
	if sizeMiB <= 0 {
		return apiv1.DiskCID{}, cloudError(fmt.Errorf("disk size %d MiB must be positive", sizeMiB))
	}
	props, err := cloudprops.ReadDisk(cp, "disk")
	if err != nil {
		return apiv1.DiskCID{}, cloudError(err)
	}
	zoneID, vm, err := c.diskZone(vmCID)
	if err != nil {
		return apiv1.DiskCID{}, err
	}
	vmID := ""
	if vm != nil {
		vmID = vm.ID
	}
	offering, err := c.persistentDiskOffering(props.DiskOffering)
	if err != nil {
		return apiv1.DiskCID{}, cloudError(err)
	}
	size := 0
	if offering.Customized {
		size = gib(sizeMiB)
	} else if offering.SizeGB*1024 < int64(sizeMiB) {
		return apiv1.DiskCID{}, cloudError(fmt.Errorf("disk offering %q has %d GiB, less than the %d MiB asked for",
			offering.Name, offering.SizeGB, sizeMiB))
	}
	name, err := newDiskName(vmID)
	if err != nil {
		return apiv1.DiskCID{}, err
	}
	if vmID != "" {
		c.leftovers.removeInterruptedDisks(vmID)
	}
	start := time.Now()
	vol, err := c.cloud.CreateVolume(name, zoneID, offering.ID, size, c.diskMarks(vm))
	if err != nil {
		return apiv1.DiskCID{}, c.leftovers.undoCreateDisk(name, start, diskError(err, "creating a %d MiB disk %s", sizeMiB, name), err)
	}
	return apiv1.NewDiskCID(vol.ID), nil
}

// persistentDiskOffering is the disk type's offering, else the configured
// default, else the customized one the ephemeral disk would also take
// (customDiskOffering): a disk type with no offering works with nothing
// configured, and the log says what was chosen.
func (c disks) persistentDiskOffering(ref string) (*cloudstack.DiskOffering, error) {
	if ref = firstOf(ref, c.cfg.CloudStack.DefaultDiskOffering); ref != "" {
		return c.cloud.FindDiskOffering(ref)
	}
	o, err := c.offerings.customDiskOffering("no disk_offering in cloud_properties and no cloudstack.default_disk_offering")
	if err != nil {
		return nil, fmt.Errorf("no disk_offering in cloud_properties and no cloudstack.default_disk_offering, "+
			"and no customized disk offering to fall back on: %w", err)
	}
	return o, nil
}

// diskMarks tag a disk as this director's, for the agent of the VM it is
// for: createVolume takes no tags, so they go beside its job.
func (c disks) diskMarks(vm *cloudstack.VM) map[string]string {
	tags := map[string]string{marks.DirectorTag: c.ctx.DirectorUUID}
	if vm != nil {
		tags[marks.AgentTag] = vm.Tags[marks.AgentTag]
	}
	return tags
}

// diskZone is the zone of the VM the disk is for (and that VM), or the
// default zone.
func (c disks) diskZone(vmCID *apiv1.VMCID) (string, *cloudstack.VM, error) {
	if vmCID != nil {
		vm, err := mustFindVM(c.cloud, *vmCID)
		if err != nil {
			return "", nil, err
		}
		return vm.ZoneID, vm, nil
	}
	zones, err := c.cloud.FindZones([]string{c.cfg.CloudStack.DefaultZone})
	if err != nil {
		return "", nil, cloudError(err)
	}
	return zones[0].ID, nil, nil
}

// DeleteDisk implements apiv1.CPI: gone already is success; attached is an
// error, since deleting it would take it from a running VM.
func (c disks) DeleteDisk(cid apiv1.DiskCID) error {
	vol, err := c.cloud.FindVolume(cid.AsString())
	if err != nil {
		return wrap(err, "looking up disk %s", cid.AsString())
	}
	if vol == nil || vol.Gone() {
		return nil
	}
	if vol.VMID != "" {
		return cloudError(fmt.Errorf("disk %s is attached to VM %s; detach it first", vol.ID, vol.VMID))
	}
	return diskError(c.cloud.DeleteVolume(vol.ID), "deleting disk %s", vol.ID)
}

// HasDisk implements apiv1.CPI.
func (c disks) HasDisk(cid apiv1.DiskCID) (bool, error) {
	vol, err := c.cloud.FindVolume(cid.AsString())
	if err != nil {
		return false, wrap(err, "looking up disk %s", cid.AsString())
	}
	return vol != nil && !vol.Gone(), nil
}

func mustFindDisk(cloud cloudstack.VolumeFinder, cid apiv1.DiskCID) (*cloudstack.Volume, error) {
	vol, err := cloud.FindVolume(cid.AsString())
	if err != nil {
		return nil, wrap(err, "looking up disk %s", cid.AsString())
	}
	if vol == nil || vol.Gone() {
		return nil, diskNotFound(cid.AsString())
	}
	return vol, nil
}

// AttachDisk implements apiv1.CPI (API v1).
func (c disks) AttachDisk(vmCID apiv1.VMCID, diskCID apiv1.DiskCID) error {
	_, err := c.AttachDiskV2(vmCID, diskCID)
	return err
}

// AttachDiskV2 implements apiv1.CPI (API v2): the hint tells the agent
// where the disk appears; old stemcells get it through the registry too.
func (c disks) AttachDiskV2(vmCID apiv1.VMCID, diskCID apiv1.DiskCID) (apiv1.DiskHint, error) {
	vm, err := mustFindVM(c.cloud, vmCID)
	if err != nil {
		return apiv1.DiskHint{}, err
	}
	vol, err := mustFindDisk(c.cloud, diskCID)
	if err != nil {
		return apiv1.DiskHint{}, err
	}
	attached := false
	switch {
	case vol.VMID == vm.ID:
		c.logger.Info("disk", "disk %s is already attached to VM %s", vol.ID, vm.ID)
	case vol.VMID != "":
		return apiv1.DiskHint{}, cloudError(fmt.Errorf("disk %s is attached to another VM, %s", vol.ID, vol.VMID))
	case vol.ZoneID != vm.ZoneID:
		return apiv1.DiskHint{}, cloudError(fmt.Errorf("disk %s is in zone %s, VM %s in zone %s", vol.ID, vol.ZoneID, vm.ID, vm.ZoneID))
	default:
		if vol, err = c.cloud.AttachVolume(vol.ID, vm.ID); err != nil {
			return apiv1.DiskHint{}, diskError(err, "attaching disk %s to VM %s", diskCID.AsString(), vm.ID)
		}
		attached = true
	}
	if vm.Hypervisor == hypervisor.VMware && hasConfigDrive(vm) {
		return unitHint(vm, vol)
	}
	hint := diskHint(vm, vol)
	if err := c.updateRegistryDisks(vm, func(p map[string]any) { p[vol.ID] = hint }); err != nil {
		return apiv1.DiskHint{}, c.undoAttach(vm, vol, attached, err)
	}
	return apiv1.NewDiskHintFromMap(hint), nil
}

// unitHint is the hint of a disk on a VM of bosh.io's vSphere stemcell
// (its settings come from a CD-ROM, never from the registry): the disk's
// SCSI unit as a string, as the vSphere CPI answers attach_disk without
// disk UUIDs, which the agent's scsi resolver finds on the root disk's
// SCSI host. CloudStack's device id is not the unit (a hot-added disk
// takes the controller's next free unit), so the unit is read from the
// volume's chaininfo, which the attach stores from the hypervisor's answer
// (VolumeApiServiceImpl.sendAttachVolumeCommand).
func unitHint(vm *cloudstack.VM, vol *cloudstack.Volume) (apiv1.DiskHint, error) {
	if !vol.HasSCSIUnit {
		return apiv1.DiskHint{}, cloudError(fmt.Errorf("disk %s is attached to VM %s, but CloudStack does not say its "+
			"SCSI unit (listVolumes chaininfo has no scsiN:U diskDeviceBusName), which the vSphere stemcell's agent "+
			"needs to find it: is the VM's dataDiskController detail a SCSI type?", vol.ID, vm.ID))
	}
	return apiv1.NewDiskHintFromString(strconv.Itoa(vol.SCSIUnit)), nil
}

// diskHint tells the agent where the disk appears in the guest. The agent
// of the CloudStack stemcell resolves it with bosh-agent's virtio resolver:
// its id lookup globs /dev/disk/by-id for the disk CID (which no guest
// device carries), then its mapped resolver takes path as given, following
// a symlink, or a /dev/sdX path as /dev/xvdX, /dev/vdX or /dev/sdX in turn.
// id is the KVM serial, for agents that match on it. On XenServer a VM of
// bosh.io's OpenStack stemcell (it has a config drive) gets the path
// alone: its agent's virtio resolver, given an id of 20 characters or
// more, runs udevadm trigger and settle and waits for it under
// /dev/disk/by-id before falling back to the path (bosh-agent's
// idDevicePathResolver and virtioDevicePathResolver), and no Xen guest
// device carries the KVM serial; with no id it takes the path at once.
func diskHint(vm *cloudstack.VM, vol *cloudstack.Volume) map[string]any {
	path := vol.GuestPath(vm.Hypervisor)
	if vm.Hypervisor == hypervisor.XenServer && hasConfigDrive(vm) {
		return map[string]any{"path": path}
	}
	return map[string]any{
		"path":      path,
		"volume_id": strconv.FormatInt(vol.DeviceID, 10),
		"id":        vol.KVMSerial(),
	}
}

// DetachDisk implements apiv1.CPI: detached already is success; attached
// elsewhere is DiskNotAttached.
func (c disks) DetachDisk(vmCID apiv1.VMCID, diskCID apiv1.DiskCID) error {
	vm, err := mustFindVM(c.cloud, vmCID)
	if err != nil {
		return err
	}
	vol, err := mustFindDisk(c.cloud, diskCID)
	if err != nil {
		return err
	}
	if vol.VMID != "" && vol.VMID != vm.ID {
		return &Error{kind: "DiskNotAttached", err: fmt.Errorf("disk %s is attached to VM %s, not %s", vol.ID, vol.VMID, vm.ID)}
	}
	detached := false
	if vol.VMID == vm.ID {
		if err := c.cloud.DetachVolume(vol.ID); err != nil {
			return diskError(err, "detaching disk %s from VM %s", vol.ID, vm.ID)
		}
		detached = true
	}
	if err := c.updateRegistryDisks(vm, func(p map[string]any) { delete(p, vol.ID) }); err != nil {
		return c.undoDetach(vm, vol, detached, err)
	}
	return nil
}

// ResizeDisk implements apiv1.CPI: grow only; shrinking is NotSupported so
// the director copies to a new disk instead; a size of 0 or less is bad
// input.
func (c disks) ResizeDisk(cid apiv1.DiskCID, newMiB int) error {
	if newMiB <= 0 {
		// A null size decodes as 0: bad input, not something to copy around.
		return cloudError(fmt.Errorf("resize_disk of disk %s: the new size must be a positive number of MiB, got %d "+
			"(a missing or null size reads as 0)", cid.AsString(), newMiB))
	}
	vol, err := mustFindDisk(c.cloud, cid)
	if err != nil {
		return err
	}
	newGB := gib(newMiB)
	switch {
	case int64(newGB) == vol.SizeGB:
		return nil
	case int64(newGB) < vol.SizeGB:
		return notSupported(fmt.Errorf("disk %s is %d GiB; CloudStack cannot shrink it to %d GiB", vol.ID, vol.SizeGB, newGB))
	}
	offering, err := c.cloud.FindDiskOffering(vol.OfferingID)
	if err != nil {
		return cloudError(err)
	}
	target := ""
	if !offering.Customized {
		custom, err := c.resizeTarget(vol.ID, offering.Name)
		if err != nil {
			return err
		}
		target = custom.ID
	}
	return diskError(c.cloud.ResizeVolume(vol.ID, newGB, target), "resizing disk %s to %d GiB", vol.ID, newGB)
}

// resizeTarget is the customized offering a disk on a fixed one moves to:
// cloudstack.default_custom_disk_offering, else the default disk offering
// if customized, else "Custom".
func (c disks) resizeTarget(volID, fixed string) (*cloudstack.DiskOffering, error) {
	if c.cfg.CloudStack.DefaultCustomDiskOffering != "" {
		o, err := c.offerings.customDiskOffering(fmt.Sprintf("resize_disk of disk %s off its fixed offering %q", volID, fixed))
		return o, cloudError(err)
	}
	custom, err := c.cloud.FindDiskOffering(firstOf(c.cfg.CloudStack.DefaultDiskOffering, cloudstack.CustomDiskOfferingName))
	if err != nil || !custom.Customized {
		return nil, notSupported(fmt.Errorf("disk %s has a fixed offering and no customized one to move to", volID))
	}
	return custom, nil
}

// SetDiskMetadata implements apiv1.CPI.
func (c disks) SetDiskMetadata(cid apiv1.DiskCID, meta apiv1.DiskMeta) error {
	vol, err := mustFindDisk(c.cloud, cid)
	if err != nil {
		return err
	}
	return wrap(c.cloud.SetTags(cloudstack.ResourceVolume, vol.ID, vol.Tags, metadataTags(meta)), "tagging disk %s", vol.ID)
}

func diskNotFound(cid string) error {
	return &Error{kind: "DiskNotFound", err: fmt.Errorf("disk %s not found in CloudStack", cid)}
}

// diskError types CloudStack's capacity refusals as NoDiskSpace.
func diskError(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	if cloudstack.IsCapacity(err) {
		return &Error{kind: "NoDiskSpace", retry: true, err: fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)}
	}
	return wrap(err, format, args...)
}
