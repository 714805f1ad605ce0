package model

import (
	"fmt"
	"time"
)

// The storage tables' rows: VolumeVO and SnapshotVO; the lookups by UUID are
// GenericDaoBase.findByUuidIncludingRemoved, LiveVolume GenericDaoBase.findByUuid
// (which skips removed rows).

// Volume types.
const (
	VolumeRoot     = "ROOT"
	VolumeDataDisk = "DATADISK"
)

// Volume is a disk. deployVirtualMachine creates a VM's ROOT volume (device
// 0) and, with diskofferingid, one DATADISK (device 1); createVolume,
// attachVolume (volumeops.go), detachVolume, deleteVolume and resizeVolume
// (volumelife.go) work on the same table (a detached volume has no VMID and no DeviceID).
//
// States follow CloudStack: Allocated (not yet on primary storage: the VM
// was never started), Ready, Destroy (its VM was destroyed, or it was
// deleted with the VM; recoverable) and Expunged. An expunged volume keeps
// its row with Removed set, as CloudStack resolves removed UUIDs.
type Volume struct {
	ID                string     `json:"id"`
	InternalID        int64      `json:"internalid"`
	Name              string     `json:"name"`
	Type              string     `json:"type"` // ROOT or DATADISK
	ZoneID            string     `json:"zoneid"`
	AccountID         string     `json:"accountid"`
	VMID              string     `json:"virtualmachineid,omitempty"`
	DeviceID          *int       `json:"deviceid,omitempty"` // set while attached
	SizeBytes         int64      `json:"size"`
	DiskOfferingID    string     `json:"diskofferingid,omitempty"`
	ServiceOfferingID string     `json:"serviceofferingid,omitempty"` // ROOT volumes
	TemplateID        string     `json:"templateid,omitempty"`        // ROOT volumes
	Hypervisor        string     `json:"hypervisor"`
	State             string     `json:"state"`
	Path              string     `json:"path,omitempty"`    // set once created on primary storage
	Storage           string     `json:"storage,omitempty"` // primary storage pool name
	Created           time.Time  `json:"created"`
	Attached          *time.Time `json:"attached,omitempty"`
	Removed           *time.Time `json:"removed,omitempty"`
	SnapshotID        string     `json:"snapshotid,omitempty"` // created from this snapshot
	// GuestIndex is the place the guest's kernel gave the disk when it
	// appeared (guestdisks.go); set while attached.
	GuestIndex *int `json:"guestindex,omitempty"`
	// BusName is a VMware disk's controller bus and unit (vmwarebus.go).
	BusName string `json:"busname,omitempty"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (v *Volume) UUID() string { return v.ID }

// primaryStorage is the pool volumes are created on: advanced.cfg's first
// primary storage.
const primaryStorage = "PS0"

// NewVolume adds a volume attached to vm at deviceID.
func (st *State) NewVolume(vm *VirtualMachine, typ string, deviceID int, size int64, now time.Time) *Volume {
	id, internal := st.NewID(KindVolume)
	prefix := "DATA"
	if typ == VolumeRoot {
		prefix = "ROOT"
	}
	dev := deviceID
	at := now
	v := &Volume{ID: id, InternalID: internal, Name: fmt.Sprintf("%s-%d", prefix, vm.InternalID), Type: typ,
		ZoneID: vm.ZoneID, AccountID: vm.AccountID, VMID: vm.ID, DeviceID: &dev, SizeBytes: size,
		Hypervisor: vm.Hypervisor, State: VolumeAllocated, Created: now, Attached: &at}
	v.GuestIndex = st.FreeGuestIndex(vm.ID)
	st.Volumes = append(st.Volumes, v)
	return v
}

// VolumesOf lists the volumes attached to a VM, ROOT first.
func (st *State) VolumesOf(vmID string) []*Volume {
	var out []*Volume
	for _, v := range st.Volumes {
		if v.Removed == nil && v.VMID == vmID {
			if v.Type == VolumeRoot {
				out = append([]*Volume{v}, out...)
			} else {
				out = append(out, v)
			}
		}
	}
	return out
}

// CreateOnStorage moves an Allocated volume to Ready, as the first start of
// its VM does.
func (v *Volume) CreateOnStorage() {
	if v.State == VolumeAllocated {
		v.State, v.Path, v.Storage = VolumeReady, NewUUID(), primaryStorage
	}
}

// Detach leaves a volume without a VM.
func (v *Volume) Detach() {
	v.VMID, v.DeviceID, v.Attached, v.GuestIndex, v.BusName = "", nil, nil, nil, ""
}

// Expunge removes a volume for good.
func (v *Volume) Expunge(now time.Time) {
	v.Detach()
	v.State, v.Removed = volumeExpunged, &now
}

// VMHypervisor is the hypervisor of the VM's host, or last host, or its own.
func (st *State) VMHypervisor(vm *VirtualMachine) string {
	for _, id := range []string{vm.HostID, vm.LastHostID} {
		if h, ok := ByID(st.Hosts, id); ok && id != "" {
			return h.Hypervisor
		}
	}
	return vm.Hypervisor
}

// LiveVolume finds a volume that is not expunged.
func (st *State) LiveVolume(id string) (*Volume, bool) {
	v, ok := ByID(st.Volumes, id)
	return v, ok && v.Removed == nil
}

// Snapshot is a manual volume snapshot. A deleted one keeps its row with
// Removed set, as CloudStack resolves removed UUIDs.
type Snapshot struct {
	ID             string     `json:"id"`
	InternalID     int64      `json:"internalid"`
	Name           string     `json:"name"`
	VolumeID       string     `json:"volumeid"`
	ZoneID         string     `json:"zoneid"`
	AccountID      string     `json:"accountid"`
	DiskOfferingID string     `json:"diskofferingid,omitempty"`
	SizeBytes      int64      `json:"size"` // the volume's size when taken
	Hypervisor     string     `json:"hypervisor"`
	State          string     `json:"state"`
	Created        time.Time  `json:"created"`
	Removed        *time.Time `json:"removed,omitempty"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (s *Snapshot) UUID() string { return s.ID }

// FreeGuestIndex is the index a disk appearing in the VM gets: the lowest
// one no attached disk has.
func (st *State) FreeGuestIndex(vmID string) *int {
	used := map[int]bool{}
	for _, v := range st.VolumesOf(vmID) {
		if v.GuestIndex != nil {
			used[*v.GuestIndex] = true
		}
	}
	i := 0
	for used[i] {
		i++
	}
	return &i
}
