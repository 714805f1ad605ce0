package simulator

import (
	"fmt"
	"time"
)

// Volume types.
const (
	volumeRoot     = "ROOT"
	volumeDataDisk = "DATADISK"
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
}

func (v *Volume) uuid() string { return v.ID }

// primaryStorage is the pool volumes are created on: advanced.cfg's first
// primary storage.
const primaryStorage = "PS0"

// newVolume adds a volume attached to vm at deviceID.
func (st *state) newVolume(vm *VirtualMachine, typ string, deviceID int, size int64, now time.Time) *Volume {
	id, internal := st.newID(kindVolume)
	prefix := "DATA"
	if typ == volumeRoot {
		prefix = "ROOT"
	}
	dev := deviceID
	at := now
	v := &Volume{ID: id, InternalID: internal, Name: fmt.Sprintf("%s-%d", prefix, vm.InternalID), Type: typ,
		ZoneID: vm.ZoneID, AccountID: vm.AccountID, VMID: vm.ID, DeviceID: &dev, SizeBytes: size,
		Hypervisor: vm.Hypervisor, State: volumeAllocated, Created: now, Attached: &at}
	v.GuestIndex = st.freeGuestIndex(vm.ID)
	st.Volumes = append(st.Volumes, v)
	return v
}

// volumesOf lists the volumes attached to a VM, ROOT first.
func (st *state) volumesOf(vmID string) []*Volume {
	var out []*Volume
	for _, v := range st.Volumes {
		if v.Removed == nil && v.VMID == vmID {
			if v.Type == volumeRoot {
				out = append([]*Volume{v}, out...)
			} else {
				out = append(out, v)
			}
		}
	}
	return out
}

// createOnStorage moves an Allocated volume to Ready, as the first start of
// its VM does.
func (v *Volume) createOnStorage() {
	if v.State == volumeAllocated {
		v.State, v.Path, v.Storage = volumeReady, newUUID(), primaryStorage
	}
}

// detach leaves a volume without a VM.
func (v *Volume) detach() { v.VMID, v.DeviceID, v.Attached, v.GuestIndex = "", nil, nil, nil }

// expunge removes a volume for good.
func (v *Volume) expunge(now time.Time) {
	v.detach()
	v.State, v.Removed = volumeExpunged, &now
}

// cdromDeviceID is the device id CloudStack reserves for the CD-ROM drive on
// every hypervisor (VolumeHostTopologyServiceImpl.CDROM_DEVICE_ID): it is
// never handed out, and asking for it fails ("deviceId should be 0,1,2,4-N").
const cdromDeviceID = 3

func init() {
	register(command{name: "listVolumes", idKind: kindVolume, sync: listVolumes})
	registerTaggable("Volume", func(st *state, id string) (string, bool) {
		v, ok := byID(st.Volumes, id)
		if !ok || v.Removed != nil {
			return "", false
		}
		return v.AccountID, true
	})
}

// listVolumes never shows expunged volumes. As QueryManagerImpl.searchForVolumes does, name
// is an exact (case-insensitive) match, type a LIKE %type% match, and
// keyword a substring of the name, the type or the state.
func listVolumes(c *Call) (any, error) {
	l := lister[*Volume]{key: "volume", id: (*Volume).uuid, name: func(v *Volume) string { return v.Name },
		keyword: func(v *Volume) []string { return []string{v.Name, v.Type, v.State} },
		zone:    func(v *Volume) string { return v.ZoneID }, view: c.volumeView}
	p := c.Params
	return l.run(c, c.st.Volumes, func(v *Volume) bool {
		return v.Removed == nil && like(v.Type, p.Get("type")) && optEq(p.Get("virtualmachineid"), v.VMID) &&
			optEq(p.Get("diskofferingid"), v.DiskOfferingID) && optEq(p.Get("state"), v.State) &&
			optEq(p.Get("serviceofferingid"), v.ServiceOfferingID) &&
			c.st.taggedWith("Volume", v.ID, p.Map("tags"))
	})
}

// volumeView is VolumeJoinDaoImpl.newVolumeResponse.
func (c *Call) volumeView(v *Volume) map[string]any {
	z := c.st.zone(v.ZoneID)
	out := map[string]any{"id": v.ID, "name": v.Name, "type": v.Type, "zoneid": z.ID, "zonename": z.Name,
		"size": v.SizeBytes, "state": v.State, "created": csTime(v.Created), "provisioningtype": "thin", "destroyed": v.State == volumeDestroy,
		"isextractable": false, "displayvolume": true, "quiescevm": false, "supportsstoragesnapshot": false,
		"hasannotations": false, "deleteprotection": false, "tags": c.resourceTagViews("Volume", v.ID)}
	c.addOwner(out, v.AccountID)
	if c.fullView() {
		// VolumeJoinDaoImpl.newVolumeResponse: the hypervisor, the pool
		// ("none" before the volume is on one) and the path for the root
		// admin's view only.
		out["hypervisor"], out["storagetype"], out["storage"] = v.Hypervisor, "shared", firstNonEmpty(v.Storage, "none")
		if v.Path != "" {
			out["path"] = v.Path
		}
	}
	if vm, ok := byID(c.st.VMs, v.VMID); ok && v.VMID != "" {
		out["virtualmachineid"], out["vmname"], out["vmdisplayname"] = vm.ID, vm.Name, vm.DisplayName
		out["vmstate"], out["vmtype"] = vm.State, "User"
		if v.DeviceID != nil {
			out["deviceid"] = *v.DeviceID
		}
		if v.Attached != nil {
			out["attached"] = csTime(*v.Attached)
		}
	}
	if o, ok := byID(c.st.DiskOfferings, v.DiskOfferingID); ok {
		out["diskofferingid"], out["diskofferingname"], out["diskofferingdisplaytext"] = o.ID, o.Name, o.DisplayText
	}
	if o, ok := byID(c.st.ServiceOfferings, v.ServiceOfferingID); ok {
		out["serviceofferingid"], out["serviceofferingname"], out["serviceofferingdisplaytext"] = o.ID, o.Name, o.DisplayText
	}
	if v.TemplateID != "" {
		out["templateid"] = v.TemplateID
	}
	if v.SnapshotID != "" {
		out["snapshotid"] = v.SnapshotID
	}
	return out
}

// fullView is ResponseView.Full, which the root admin's commands (the
// …CmdByAdmin classes) answer with.
func (c *Call) fullView() bool { return c.Account != nil && c.Account.Type == 1 }

// volumeString is VolumeVO's toString, as CloudStack's error texts show it.
func (st *state) volumeString(v *Volume) string {
	vm := "null"
	if owner, ok := byID(st.VMs, v.VMID); ok && v.VMID != "" {
		vm = fmt.Sprint(owner.InternalID)
	}
	return fmt.Sprintf("Vol[%d|name=%s|vm=%s|%s]", v.InternalID, v.Name, vm, v.Type)
}
