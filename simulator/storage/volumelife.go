package storage

import (
	"slices"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// Detaching, deleting and resizing volumes.

// volumeLifeCommands are the commands of volumelife.go (registerCommands).
func volumeLifeCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "deleteVolume", IDKind: model.KindVolume, Sync: deleteVolume},
		{Name: "detachVolume", IDKind: model.KindVolume, Async: detachVolume},
		{Name: "resizeVolume", IDKind: model.KindVolume, Async: resizeVolume},
	}
}

// detachVolume is VolumeApiServiceImpl.detachVolumeFromVM: by id, or by virtualmachineid and
// deviceid; all checks in the job. The volume keeps its storage.
func detachVolume(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	id, vmID, hasDevice := p.Get("id"), p.Get("virtualmachineid"), p.Has("deviceid")
	device := p.Int("deviceid", -1)
	return &kernel.AsyncJob{InstanceType: "Volume", InstanceID: strings.ToLower(id),
		CmdClass: "org.apache.cloudstack.api.command.admin.volume.DetachVolumeCmdByAdmin",
		Run: func() (any, error) {
			if (id == "" && (!hasDevice || vmID == "")) || (id != "" && (hasDevice || vmID != "")) {
				return nil, kernel.ParamError("Please provide either a volume id, or a tuple(device id, instance id)")
			}
			var v *model.Volume
			if id != "" {
				if found, ok := c.State.LiveVolume(id); ok {
					v = found
				} else {
					return nil, kernel.ParamError("Unable to find volume with ID: %s", volumeInternalID(c.State, id))
				}
			} else {
				for _, candidate := range c.State.VolumesOf(vmID) {
					if candidate.DeviceID != nil && int64(*candidate.DeviceID) == device {
						v = candidate
					}
				}
				if v == nil { // findByInstanceAndDeviceId(...).get(0) on an empty list
					return nil, kernel.InternalError("Index 0 out of bounds for length 0")
				}
			}
			owner := model.FirstNonEmpty(vmID, v.VMID)
			if owner == "" {
				return nil, kernel.ParamError("The specified volume is not attached to a VM.")
			}
			vm, ok := model.ByID(c.State.VMs, owner)
			if !ok || (vm.State != model.VMRunning && vm.State != model.VMStopped && vm.State != model.VMDestroyed) {
				return nil, kernel.ParamError("Please specify a VM that is either running or stopped.")
			}
			if v.Type == model.VolumeRoot {
				if err := rootDetachAttachAllowed(vm); err != nil {
					return nil, err
				}
			}
			v.Detach()
			c.Changed()
			return map[string]any{"volume": views.VolumeView(c, v)}, nil
		}}, nil
}

// deleteVolume (synchronous) is VolumeApiServiceImpl.deleteVolume, destroyVolume with expunge: a detached
// volume is expunged at once, its row kept with removed set.
func deleteVolume(c *kernel.Call) (any, error) {
	id := c.Params.Get("id")
	v, ok := c.State.LiveVolume(id)
	switch {
	case !ok:
		return nil, kernel.ParamError("Unable to find volume with ID: %s", volumeInternalID(c.State, id))
	case snapshotInProgress(c.State, v.ID):
		return nil, kernel.ParamError("There are snapshot operations in progress on the volume, unable to delete it")
	case v.VMID != "":
		if vm, found := model.ByID(c.State.VMs, v.VMID); found && vm.Removed == nil {
			return nil, kernel.ParamError("Please specify a volume that is not attached to any VM.")
		}
	}
	v.Expunge(c.Engine.Now())
	tag.RemoveTagsOf(c.State, "Volume", v.ID)
	c.Changed()
	return kernel.Success(), nil
}

// resizeVolume follows VolumeApiServiceImpl.resizeVolume. Without a new
// disk offering the size may change unless the offering's size is strict
// (4.17's disksizestrictness), so since 4.17 a volume of a fixed offering
// resizes too - before, only a customized offering allowed it. With a new offering, a fixed one sets the size and a
// customized one takes size. Shrinking needs shrinkok; an Allocated volume
// just changes in the database; XenServer cannot resize a disk attached to
// a VM that is not Stopped.
func resizeVolume(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	r := resizeRequest{id: p.Get("id"), newOfferingID: p.Get("diskofferingid"), shrinkOK: p.Bool("shrinkok", false),
		sizeGB: p.Int("size", 0), hasSize: p.Has("size")}
	return &kernel.AsyncJob{InstanceType: "Volume", InstanceID: strings.ToLower(r.id),
		CmdClass: "org.apache.cloudstack.api.command.admin.volume.ResizeVolumeCmdByAdmin",
		Run:      func() (any, error) { return resize(c, r) }}, nil
}

// resizeRequest is resizeVolume's parameters, read when the job is queued.
type resizeRequest struct {
	id, newOfferingID string
	shrinkOK, hasSize bool
	sizeGB            int64
}

// resize is the job of resizeVolume.
func resize(c *kernel.Call, r resizeRequest) (any, error) {
	v, ok := c.State.LiveVolume(r.id)
	if !ok {
		return nil, kernel.ParamError("No such volume")
	}
	if snapshotInProgress(c.State, v.ID) {
		return nil, kernel.InternalError("There is/are unbacked up snapshot(s) on this volume, resize volume is not permitted, please try again later.")
	}
	offering, _ := model.ByID(c.State.DiskOfferings, v.DiskOfferingID)
	var newOffering *model.DiskOffering
	if r.newOfferingID != "" {
		newOffering, _ = model.ByID(c.State.DiskOfferings, r.newOfferingID)
	}
	hv, err := resizableOn(v)
	if err != nil {
		return nil, err
	}
	vm, attached := model.ByID(c.State.VMs, v.VMID)
	attached = attached && v.VMID != ""
	if err := resizeOfferingChecks(c, v, vm, r, offering, newOffering); err != nil {
		return nil, err
	}
	newSize, err := resizeTarget(r, v.SizeBytes, offering, newOffering)
	if err != nil {
		return nil, err
	}
	if newOffering != nil && v.Type == model.VolumeRoot && attached && newSize != v.SizeBytes && vm.State != model.VMStopped {
		return nil, kernel.ParamError("Cannot resize ROOT volume [%s] when VM is not on Stopped State. VM %s is in state %s", v.Name, vm.InstanceName, vm.State)
	}
	if current := v.SizeBytes; current != newSize {
		if err := validateVolumeSize(newSize); err != nil {
			return nil, err
		}
		if current > newSize && !r.shrinkOK {
			return nil, kernel.ParamError("Going from existing size of %d to size of %d would shrink the volume."+
				"Need to sign off by supplying the shrinkok parameter with value of true.", current, newSize)
		}
		if v.State == model.VolumeReady && attached && hv == "XenServer" && vm.State != model.VMStopped {
			return nil, kernel.ParamError("The VM must be stopped or the disk detached in order to resize with the XenServer Hypervisor.")
		}
	}
	v.SizeBytes = newSize
	if newOffering != nil {
		v.DiskOfferingID = newOffering.ID
	}
	c.Changed()
	return map[string]any{"volume": views.VolumeView(c, v)}, nil
}

// resizableOn is the hypervisor the volume is resized on ("None" for an
// Allocated volume, not on a storage pool yet), when that hypervisor
// resizes volumes and the volume is Ready or Allocated.
func resizableOn(v *model.Volume) (string, error) {
	hv := v.Hypervisor
	if v.State == model.VolumeAllocated {
		hv = "None" // not on a storage pool yet
	}
	switch hv {
	case "KVM", "XenServer", "VMware", "Any", "None":
	default:
		return "", kernel.ParamError("Hypervisor %s does not support volume resize", hv)
	}
	if v.State != model.VolumeReady && v.State != model.VolumeAllocated {
		return "", kernel.ParamError("Volume should be in ready or allocated state before attempting a resize. Volume %s is in state %s.", v.ID, v.State)
	}
	return hv, nil
}

// resizeTarget is the new size in bytes: size for the current offering
// (within the custom range when customized), a fixed new offering's own,
// or size for a customized new offering.
func resizeTarget(r resizeRequest, current int64, offering, newOffering *model.DiskOffering) (int64, error) {
	switch {
	case newOffering == nil && r.hasSize:
		if offering != nil && offering.Customized {
			if err := customSizeInRange(r.sizeGB); err != nil {
				return 0, err
			}
		}
		return r.sizeGB << 30, nil
	case newOffering != nil && newOffering.DiskSize > 0:
		return newOffering.DiskSize << 30, nil
	case newOffering != nil && newOffering.Customized:
		if !r.hasSize {
			return 0, kernel.ParamError("The new disk offering requires that a size be specified.")
		}
		if err := customSizeInRange(r.sizeGB); err != nil {
			return 0, err
		}
		return r.sizeGB << 30, nil
	case newOffering != nil && r.hasSize:
		return 0, kernel.ParamError("You cannot pass in a custom disk size to a non-custom disk offering.")
	}
	return current, nil
}

// resizeOfferingChecks are resizeVolume's offering checks: without a new
// offering, a size only where the offering's size is not strict; with one,
// not a removed offering, the same strictness (and, strict, the same size),
// for a ROOT volume no strictly assigned offering and the same encryption, and
// the same storage tags (StringUtils.areTagsEqual).
func resizeOfferingChecks(c *kernel.Call, v *model.Volume, vm *model.VirtualMachine, r resizeRequest, offering, newOffering *model.DiskOffering) error {
	if offering == nil {
		offering = &model.DiskOffering{} // departure, as in changeOfferingForVolume: ROOT volumes carry none
	}
	if newOffering == nil {
		if r.hasSize && offering.SizeStrictness {
			return kernel.ParamError("Resize of volume %s is not allowed, since disk size is strictly fixed as per the disk offering", v.ID)
		}
		return nil
	}
	switch {
	case newOffering.Inactive:
		return kernel.ParamError("Requested disk offering has been removed.")
	case offering.SizeStrictness != newOffering.SizeStrictness:
		return kernel.ParamError("Disk offering size strictness does not match with new disk offering")
	case offering.SizeStrictness && offering.DiskSize != newOffering.DiskSize:
		return kernel.ParamError("Resize volume for %s is not allowed since disk offering's size is fixed", v.Name)
	}
	if v.Type == model.VolumeRoot && vm != nil {
		if so, ok := model.ByID(c.State.ServiceOfferings, vm.ServiceOfferingID); ok && so.DiskStrictness {
			return kernel.ParamError("Cannot resize ROOT volume [%s] with new disk offering since existing disk offering is strictly assigned to the ROOT volume.", v.Name)
		}
		if offering.Encrypt != newOffering.Encrypt {
			return kernel.ParamError("Current disk offering's encryption(%t) does not match target disk offering's encryption(%t)", offering.Encrypt, newOffering.Encrypt)
		}
	}
	switch {
	case offering.Tags != nil && !sameTags(offering.Tags, newOffering.Tags):
		return kernel.ParamError("The tags on the new and old disk offerings must match.")
	case offering.Tags == nil && newOffering.Tags != nil:
		return kernel.ParamError("There are no tags on the current disk offering. The new disk offering needs to have no tags, as well.")
	}
	return nil
}

// sameTags is StringUtils.areTagsEqual: each side's comma-separated tags,
// lowercased, contain all of the other's.
func sameTags(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	as, bs := strings.Split(strings.ToLower(*a), ","), strings.Split(strings.ToLower(*b), ",")
	return containsAll(as, bs) && containsAll(bs, as)
}

func containsAll(a, b []string) bool {
	for _, t := range b {
		if !slices.Contains(a, t) {
			return false
		}
	}
	return true
}
