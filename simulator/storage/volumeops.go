package storage

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/offering"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// The volume commands follow VolumeApiServiceImpl (4.22): createVolume
// checks its input in the create phase and answers errors at once; the
// other async commands check everything in their job, so their errors are
// failed jobs. Jobs complete under the state lock one at a time, which is
// what CloudStack's per-VM work queue does for attach and detach: two
// concurrent attaches to one VM get different device ids.

// volumeOpsCommands are the commands of volumeops.go (registerCommands).
func volumeOpsCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createVolume", Async: createVolume},
		{Name: "attachVolume", IDKind: model.KindVolume, Async: attachVolume},
	}
}

// maxDataVolumes is hypervisor_capabilities.max_data_volumes_limit for the
// hypervisor (and version) of the VM's host: the rows CloudStack 4.22 ships
// for what the simulated hosts report. XenServer 8.2.0: 253
// (schema-41500to41510); KVM: 32 (every KVM row); VMware 8.0: 59
// (schema-41720to41800). The Simulator hypervisor has no row, so
// CloudStack's fallback of 6 applies.
func maxDataVolumes(hypervisor string) int {
	switch hypervisor {
	case "XenServer":
		return 253
	case "KVM":
		return 32
	case "VMware":
		return 59
	}
	return offering.DefaultMaxDataVolumes
}

// VMString is VMInstanceVO's toString as error texts show it.
func VMString(vm *model.VirtualMachine) string {
	return fmt.Sprintf(`VM instance {"id": "%d", "name": "%s", "uuid": "%s", "type"="User"}`, vm.InternalID, vm.InstanceName, vm.ID)
}

// deviceIDFor is VolumeApiServiceImpl.getDeviceId: a requested device id must be in range, not
// the CD-ROM's 3 and free; otherwise the lowest free id from 1, skipping 3,
// on every hypervisor. The range is the data disk limit plus the ROOT disk
// and the CD-ROM, so device ids run 0 to limit+1.
func deviceIDFor(st *model.State, vm *model.VirtualMachine, requested *int64) (int, error) {
	maxID := maxDataVolumes(st.VMHypervisor(vm)) + 1
	used := map[int]*model.Volume{}
	for _, v := range st.VolumesOf(vm.ID) {
		if v.DeviceID != nil {
			used[*v.DeviceID] = v
		}
	}
	if requested != nil {
		d := *requested
		if d < 0 || d > int64(maxID) || d == cdromDeviceID {
			return 0, kernel.InternalError("deviceId should be 0,1,2,4-%d", maxID)
		}
		if v := used[int(d)]; v != nil {
			return 0, kernel.InternalError("deviceId %d is used by vol %s on vm %s", d, VolumeString(st, v), VMString(vm))
		}
		return int(d), nil
	}
	for id := 1; id <= maxID; id++ {
		if id != cdromDeviceID && used[id] == nil {
			return id, nil
		}
	}
	return 0, kernel.InternalError("All device Ids are used by vm %s", VMString(vm))
}

// volumeInternalID is the internal id CloudStack's texts show for a volume
// UUID parameter (the parameter itself when no volume has it).
func volumeInternalID(st *model.State, id string) string {
	if v, ok := model.ByID(st.Volumes, id); ok {
		return fmt.Sprint(v.InternalID)
	}
	return id
}

// createVolume is VolumeApiServiceImpl.allocVolume, then the job. With a disk offering the
// volume is only allocated: virtualmachineid is ignored, as CloudStack
// ignores it unless the volume comes from a snapshot ("to be used with
// snapshot Id"). From a snapshot the volume is created on primary storage
// (Ready) and attached to virtualmachineid when given.
func createVolume(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	owner, err := c.Owner() // allocVolume: getEntityOwnerId, the project's account with projectid
	if err != nil {
		return nil, err
	}
	offeringID, snapshotID := p.Get("diskofferingid"), p.Get("snapshotid")
	if offeringID == "" && snapshotID == "" {
		return nil, kernel.ParamError("At least one of disk Offering ID or snapshot ID must be passed whilst creating volume")
	}
	snap, _ := model.ByID(c.State.Snapshots, snapshotID)
	if snap != nil && offeringID != "" {
		if parent, ok := model.ByID(c.State.Volumes, snap.VolumeID); ok && parent.Type != model.VolumeRoot {
			return nil, kernel.ParamError("Disk Offering ID cannot be passed whilst creating volume from snapshot other than ROOT disk snapshots")
		}
	}
	src, err := volumeOffering(c, offeringID)
	if err != nil {
		return nil, err
	}
	zoneID := p.Get("zoneid")
	if snapshotID != "" {
		if err := volumeFromSnapshot(c, src, snap, snapshotID); err != nil {
			return nil, err
		}
		zoneID = model.FirstNonEmpty(zoneID, snap.ZoneID)
	}
	zone := c.State.Zone(zoneID)
	if zone == nil || zoneID == "" {
		return nil, kernel.ParamError("Unable to find zone by id %s", model.FirstNonEmpty(zoneID, "null"))
	}
	v := allocVolume(c, zone, src, owner) // VolumeApiServiceImpl.allocVolume's owner
	c.Changed()
	return createVolumeJob(c, v, snap, src.vm, zone), nil
}

// volumeSource is what a new volume is made of: a disk offering and size,
// and, from a snapshot, the VM to attach it to.
type volumeSource struct {
	offering *model.DiskOffering
	size     int64
	vm       *model.VirtualMachine
}

// volumeOffering is allocVolume's disk offering checks: a customized
// offering takes the size given (in range), a fixed one its own. No
// offering ("") is no source yet.
func volumeOffering(c *kernel.Call, offeringID string) (*volumeSource, error) {
	src := &volumeSource{}
	if offeringID == "" {
		return src, nil
	}
	p := c.Params
	sizeGB, hasSize := p.Int("size", 0), p.Has("size")
	if hasSize && sizeGB <= 0 {
		return nil, kernel.ParamError("Disk size must be larger than 0")
	}
	o, ok := model.ByID(c.State.DiskOfferings, offeringID)
	if !ok {
		return nil, kernel.ParamError("Please specify a valid disk offering.")
	}
	src.offering = o
	switch {
	case o.Customized && !hasSize:
		return nil, kernel.ParamError("This disk offering requires a custom size specified")
	case o.Customized:
		if err := customSizeInRange(sizeGB); err != nil {
			return nil, err
		}
		src.size = sizeGB << 30
	case hasSize:
		return nil, kernel.ParamError("This disk offering does not allow custom size")
	default:
		src.size = o.DiskSize << 30
	}
	return src, validateVolumeSize(src.size)
}

// volumeFromSnapshot is allocVolume's snapshot checks: a backed-up snapshot,
// its offering and size unless an offering was given (then at least the
// snapshot's size), and a running or stopped virtualmachineid.
func volumeFromSnapshot(c *kernel.Call, src *volumeSource, snap *model.Snapshot, snapshotID string) error {
	if snap == nil || snap.Removed != nil {
		return kernel.ParamError("unable to find a snapshot with id %s", snapshotInternalID(snap, snapshotID))
	}
	if snap.State != snapshotBackedUp {
		return kernel.ParamError("Snapshot id=%d is not in %s state yet and can't be used for volume creation", snap.InternalID, snapshotBackedUp)
	}
	if src.offering == nil {
		src.offering, _ = model.ByID(c.State.DiskOfferings, snap.DiskOfferingID)
		src.size = snap.SizeBytes
	} else if src.size < snap.SizeBytes {
		return kernel.ParamError("Invalid size for volume creation: %dGB, snapshot size is: %dGB", src.size>>30, snap.SizeBytes>>30)
	}
	id := c.Params.Get("virtualmachineid")
	if id == "" {
		return nil
	}
	found, ok := model.ByID(c.State.VMs, id)
	if !ok || found.Removed != nil {
		return kernel.ParamError("Please specify a valid User VM.")
	}
	if found.State != model.VMRunning && found.State != model.VMStopped {
		return kernel.ParamError("Please specify a VM that is either running or stopped.")
	}
	src.vm = found
	return nil
}

// allocVolume adds the Allocated DATADISK row, named as given or
// getRandomVolumeName.
func allocVolume(c *kernel.Call, zone *model.Zone, src *volumeSource, owner *model.Account) *model.Volume {
	name := c.Params.Get("name")
	if strings.TrimSpace(name) == "" {
		name = model.NewUUID() // getRandomVolumeName
	}
	id, internal := c.State.NewID(model.KindVolume)
	v := &model.Volume{ID: id, InternalID: internal, Name: name, Type: model.VolumeDataDisk, ZoneID: zone.ID,
		AccountID: owner.ID, SizeBytes: src.size, Hypervisor: "None", State: model.VolumeAllocated, Created: c.Engine.Now()}
	if src.offering != nil {
		v.DiskOfferingID = src.offering.ID
	}
	c.State.Volumes = append(c.State.Volumes, v)
	return v
}

// createVolumeJob creates a volume from a snapshot on primary storage and
// attaches it to vm when given; an offering's volume stays Allocated.
func createVolumeJob(c *kernel.Call, v *model.Volume, snap *model.Snapshot, vm *model.VirtualMachine, zone *model.Zone) *kernel.AsyncJob {
	return &kernel.AsyncJob{InstanceType: "Volume", InstanceID: v.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.admin.volume.CreateVolumeCmdByAdmin",
		Run: func() (any, error) {
			if snap != nil {
				v.SnapshotID, v.Hypervisor = snap.ID, c.State.ZoneHypervisor(zone.ID)
				v.CreateOnStorage()
				if vm != nil {
					if err := attach(c, vm, v, nil); err != nil {
						return nil, kernel.InternalError("Volume: %s created successfully, but failed to attach the newly created volume to VM: %d due to error: %s",
							v.ID, vm.InternalID, kernel.AsAPIError(err).Text)
					}
				}
				c.Changed()
			}
			return map[string]any{"volume": views.VolumeView(c, v)}, nil
		},
		// A failed creation leaves the volume destroyed (DestroyRequested).
		Fail: func(*kernel.APIError) {
			v.State = model.VolumeDestroy
			c.Changed()
		},
	}
}

func snapshotInternalID(s *model.Snapshot, id string) string {
	if s != nil {
		return fmt.Sprint(s.InternalID)
	}
	return id
}

// customSizeInRange is VolumeApiServiceImpl.validateCustomDiskOfferingSizeRange.
func customSizeInRange(gb int64) error {
	if gb < model.CustomDiskMinSizeGB || gb > model.CustomDiskMaxSizeGB {
		return kernel.ParamError("Volume size: %d GB is out of allowed range. Min: %d. Max: %d", gb, model.CustomDiskMinSizeGB, model.CustomDiskMaxSizeGB)
	}
	return nil
}

// validateVolumeSize is VolumeApiServiceImpl.validateVolumeSizeInBytes.
func validateVolumeSize(size int64) error {
	switch {
	case size < 0 || (size > 0 && size < 1<<30):
		return kernel.ParamError("Please specify a size of at least 1 GB.")
	case size > offering.MaxVolumeSizeGB<<30:
		return kernel.ParamError("Requested volume size is %s, but the maximum size allowed is %d GB.", model.HumanSize(size), offering.MaxVolumeSizeGB)
	}
	return nil
}

// attachVolume is VolumeApiServiceImpl.attachVolumeToVM, all of it in the job.
func attachVolume(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	id, vmID := p.Get("id"), p.Get("virtualmachineid")
	var deviceID *int64
	if p.Has("deviceid") {
		d := p.Int("deviceid", 0)
		deviceID = &d
	}
	return &kernel.AsyncJob{InstanceType: "Volume", InstanceID: strings.ToLower(id),
		CmdClass: "org.apache.cloudstack.api.command.admin.volume.AttachVolumeCmdByAdmin",
		Run: func() (any, error) {
			v, ok := c.State.LiveVolume(id)
			switch {
			case !ok || (v.Type != model.VolumeDataDisk && v.Type != model.VolumeRoot):
				return nil, kernel.ParamError("Please specify a volume with the valid type: ROOT or DATADISK")
			case v.VMID != "":
				return nil, kernel.ParamError("Please specify a volume that is not attached to any VM.")
			case v.State == model.VolumeDestroy:
				return nil, kernel.ParamError("Please specify a volume that is not destroyed.")
			case v.State != model.VolumeAllocated && v.State != model.VolumeReady:
				return nil, kernel.ParamError("Volume state must be in Allocated, Ready or in Uploaded state")
			}
			vm, ok := model.ByID(c.State.VMs, vmID)
			switch {
			case !ok || vm.Removed != nil:
				return nil, kernel.ParamError("Please specify a valid User VM.")
			case vm.State != model.VMRunning && vm.State != model.VMStopped:
				return nil, kernel.ParamError("Please specify a VM that is either running or stopped.")
			case !strings.EqualFold(vm.ZoneID, v.ZoneID):
				return nil, kernel.ParamError("Please specify a VM that is in the same zone as the volume.")
			}
			if err := attach(c, vm, v, deviceID); err != nil {
				return nil, err
			}
			return map[string]any{"volume": views.VolumeView(c, v)}, nil
		}}, nil
}

// attach checks the device id and the data disk limit, creates the volume on
// primary storage when the VM's disks are there already (lazy allocation:
// a VM that never started gets it created when it starts) and attaches it.
func attach(c *kernel.Call, vm *model.VirtualMachine, v *model.Volume, deviceID *int64) error {
	vols := c.State.VolumesOf(vm.ID)
	if deviceID != nil && *deviceID == 0 {
		if err := rootDetachAttachAllowed(vm); err != nil {
			return err
		}
		for _, other := range vols {
			if other.DeviceID != nil && *other.DeviceID == 0 {
				return kernel.ParamError("Vm already has root volume attached to it")
			}
		}
	} else {
		data := 0
		for _, other := range vols {
			if other.Type == model.VolumeDataDisk {
				data++
			}
		}
		if limit := maxDataVolumes(c.State.VMHypervisor(vm)); data >= limit {
			return kernel.ParamError("The specified VM already has the maximum number of data disks (%d) attached. Please specify another VM.", limit)
		}
	}
	dev, err := deviceIDFor(c.State, vm, deviceID)
	if err != nil {
		return err
	}
	if v.State == model.VolumeAllocated && vmOnStorage(vols) {
		v.CreateOnStorage()
	}
	now := c.Engine.Now()
	v.VMID, v.DeviceID, v.Attached, v.GuestIndex = vm.ID, &dev, &now, c.State.FreeGuestIndex(vm.ID)
	if v.Hypervisor == "" || v.Hypervisor == "None" {
		v.Hypervisor = vm.Hypervisor
	}
	if vm.State == model.VMRunning && c.State.VMHypervisor(vm) == "VMware" {
		// The AttachCommand's answer carries the disk's bus; a stopped
		// VM's attach is a database change, its bus given at start.
		c.State.HotAttachVMwareBus(vm, v)
	}
	c.Changed()
	return nil
}

// vmOnStorage reports whether a VM's disks exist on primary storage: its
// ROOT volume, or without one a data volume, is no longer Allocated.
func vmOnStorage(vols []*model.Volume) bool {
	for _, v := range vols {
		if v.Type == model.VolumeRoot {
			return v.State != model.VolumeAllocated
		}
	}
	for _, v := range vols {
		if v.State != model.VolumeAllocated {
			return true
		}
	}
	return false
}

// rootDetachAttachAllowed is VolumeApiServiceImpl.validateRootVolumeDetachAttach: only a Stopped
// VM may lose or regain its ROOT volume.
func rootDetachAttachAllowed(vm *model.VirtualMachine) error {
	switch vm.Hypervisor {
	case "XenServer", "VMware", "KVM", "Simulator":
	default:
		return kernel.ParamError("Root volume detach is not supported for hypervisor type %s", vm.Hypervisor)
	}
	if vm.State != model.VMStopped {
		return kernel.ParamError("Root volume detach can happen only when vm is in states: Stopped or Destroyed")
	}
	return nil
}
