package simulator

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// Detaching, deleting and resizing volumes.

func init() {
	register(
		command{name: "deleteVolume", idKind: model.KindVolume, sync: deleteVolume},
		command{name: "detachVolume", idKind: model.KindVolume, async: detachVolume},
		command{name: "resizeVolume", idKind: model.KindVolume, async: resizeVolume},
	)
}

// detachVolume is VolumeApiServiceImpl.detachVolumeFromVM: by id, or by virtualmachineid and
// deviceid; all checks in the job. The volume keeps its storage.
func detachVolume(c *Call) (*asyncJob, error) {
	p := c.Params
	id, vmID, hasDevice := p.Get("id"), p.Get("virtualmachineid"), p.Has("deviceid")
	device := p.Int("deviceid", -1)
	return &asyncJob{instanceType: "Volume", instanceID: strings.ToLower(id),
		cmdClass: "org.apache.cloudstack.api.command.admin.volume.DetachVolumeCmdByAdmin",
		run: func() (any, error) {
			if (id == "" && (!hasDevice || vmID == "")) || (id != "" && (hasDevice || vmID != "")) {
				return nil, paramError("Please provide either a volume id, or a tuple(device id, instance id)")
			}
			var v *model.Volume
			if id != "" {
				if found, ok := c.st.LiveVolume(id); ok {
					v = found
				} else {
					return nil, paramError("Unable to find volume with ID: %s", volumeInternalID(c.st, id))
				}
			} else {
				for _, candidate := range c.st.VolumesOf(vmID) {
					if candidate.DeviceID != nil && int64(*candidate.DeviceID) == device {
						v = candidate
					}
				}
				if v == nil { // findByInstanceAndDeviceId(...).get(0) on an empty list
					return nil, internalError("Index 0 out of bounds for length 0")
				}
			}
			owner := model.FirstNonEmpty(vmID, v.VMID)
			if owner == "" {
				return nil, paramError("The specified volume is not attached to a VM.")
			}
			vm, ok := model.ByID(c.st.VMs, owner)
			if !ok || (vm.State != model.VMRunning && vm.State != model.VMStopped && vm.State != model.VMDestroyed) {
				return nil, paramError("Please specify a VM that is either running or stopped.")
			}
			if v.Type == model.VolumeRoot {
				if err := rootDetachAttachAllowed(vm); err != nil {
					return nil, err
				}
			}
			v.Detach()
			c.changed()
			return map[string]any{"volume": c.volumeView(v)}, nil
		}}, nil
}

// deleteVolume (synchronous) is VolumeApiServiceImpl.deleteVolume, destroyVolume with expunge: a detached
// volume is expunged at once, its row kept with removed set.
func deleteVolume(c *Call) (any, error) {
	id := c.Params.Get("id")
	v, ok := c.st.LiveVolume(id)
	switch {
	case !ok:
		return nil, paramError("Unable to find volume with ID: %s", volumeInternalID(c.st, id))
	case snapshotInProgress(c.st, v.ID):
		return nil, paramError("There are snapshot operations in progress on the volume, unable to delete it")
	case v.VMID != "":
		if vm, found := model.ByID(c.st.VMs, v.VMID); found && vm.Removed == nil {
			return nil, paramError("Please specify a volume that is not attached to any VM.")
		}
	}
	v.Expunge(c.eng.now())
	removeTagsOf(c.st, "Volume", v.ID)
	c.changed()
	return success(), nil
}

// resizeVolume follows VolumeApiServiceImpl.resizeVolume. Without a new
// disk offering the size may change unless the offering's size is strict
// (4.17's disksizestrictness; no simulator offering is strict), so since
// 4.17 a volume of a fixed offering resizes too - before, only a customized
// offering allowed it. With a new offering, a fixed one sets the size and a
// customized one takes size. Shrinking needs shrinkok; an Allocated volume
// just changes in the database; XenServer cannot resize a disk attached to
// a VM that is not Stopped.
func resizeVolume(c *Call) (*asyncJob, error) {
	p := c.Params
	r := resizeRequest{id: p.Get("id"), newOfferingID: p.Get("diskofferingid"), shrinkOK: p.Bool("shrinkok", false),
		sizeGB: p.Int("size", 0), hasSize: p.Has("size")}
	return &asyncJob{instanceType: "Volume", instanceID: strings.ToLower(r.id),
		cmdClass: "org.apache.cloudstack.api.command.admin.volume.ResizeVolumeCmdByAdmin",
		run:      func() (any, error) { return c.resize(r) }}, nil
}

// resizeRequest is resizeVolume's parameters, read when the job is queued.
type resizeRequest struct {
	id, newOfferingID string
	shrinkOK, hasSize bool
	sizeGB            int64
}

// resize is the job of resizeVolume.
func (c *Call) resize(r resizeRequest) (any, error) {
	v, ok := c.st.LiveVolume(r.id)
	if !ok {
		return nil, paramError("No such volume")
	}
	if snapshotInProgress(c.st, v.ID) {
		return nil, internalError("There is/are unbacked up snapshot(s) on this volume, resize volume is not permitted, please try again later.")
	}
	offering, _ := model.ByID(c.st.DiskOfferings, v.DiskOfferingID)
	var newOffering *model.DiskOffering
	if r.newOfferingID != "" {
		newOffering, _ = model.ByID(c.st.DiskOfferings, r.newOfferingID)
	}
	hv, err := resizableOn(v)
	if err != nil {
		return nil, err
	}
	vm, attached := model.ByID(c.st.VMs, v.VMID)
	attached = attached && v.VMID != ""
	newSize, err := resizeTarget(r, v.SizeBytes, offering, newOffering)
	if err != nil {
		return nil, err
	}
	if newOffering != nil && v.Type == model.VolumeRoot && attached && newSize != v.SizeBytes && vm.State != model.VMStopped {
		return nil, paramError("Cannot resize ROOT volume [%s] when VM is not on Stopped State. VM %s is in state %s", v.Name, vm.InstanceName, vm.State)
	}
	if current := v.SizeBytes; current != newSize {
		if err := validateVolumeSize(newSize); err != nil {
			return nil, err
		}
		if current > newSize && !r.shrinkOK {
			return nil, paramError("Going from existing size of %d to size of %d would shrink the volume."+
				"Need to sign off by supplying the shrinkok parameter with value of true.", current, newSize)
		}
		if v.State == model.VolumeReady && attached && hv == "XenServer" && vm.State != model.VMStopped {
			return nil, paramError("The VM must be stopped or the disk detached in order to resize with the XenServer Hypervisor.")
		}
	}
	v.SizeBytes = newSize
	if newOffering != nil {
		v.DiskOfferingID = newOffering.ID
	}
	c.changed()
	return map[string]any{"volume": c.volumeView(v)}, nil
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
		return "", paramError("Hypervisor %s does not support volume resize", hv)
	}
	if v.State != model.VolumeReady && v.State != model.VolumeAllocated {
		return "", paramError("Volume should be in ready or allocated state before attempting a resize. Volume %s is in state %s.", v.ID, v.State)
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
			return 0, paramError("The new disk offering requires that a size be specified.")
		}
		if err := customSizeInRange(r.sizeGB); err != nil {
			return 0, err
		}
		return r.sizeGB << 30, nil
	case newOffering != nil && r.hasSize:
		return 0, paramError("You cannot pass in a custom disk size to a non-custom disk offering.")
	}
	return current, nil
}
