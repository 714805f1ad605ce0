package simulator

import (
	"fmt"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// cdromDeviceID is the device id CloudStack reserves for the CD-ROM drive on
// every hypervisor (VolumeHostTopologyServiceImpl.CDROM_DEVICE_ID): it is
// never handed out, and asking for it fails ("deviceId should be 0,1,2,4-N").
const cdromDeviceID = 3

func init() {
	kernel.Register(kernel.Command{Name: "listVolumes", IDKind: model.KindVolume, Sync: listVolumes})
	registerTaggable("Volume", func(st *model.State, id string) (string, bool) {
		v, ok := model.ByID(st.Volumes, id)
		if !ok || v.Removed != nil {
			return "", false
		}
		return v.AccountID, true
	})
}

// listVolumes never shows expunged volumes. As QueryManagerImpl.searchForVolumes does, name
// is an exact (case-insensitive) match, type a LIKE %type% match, and
// keyword a substring of the name, the type or the state.
func listVolumes(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.Volume]{Key: "volume", ID: (*model.Volume).UUID, Name: func(v *model.Volume) string { return v.Name },
		Keyword: func(v *model.Volume) []string { return []string{v.Name, v.Type, v.State} },
		Zone:    func(v *model.Volume) string { return v.ZoneID }, View: volumeView}
	p := c.Params
	return l.Run(c, c.State.Volumes, func(v *model.Volume) bool {
		return v.Removed == nil && kernel.Like(v.Type, p.Get("type")) && kernel.OptEq(p.Get("virtualmachineid"), v.VMID) &&
			kernel.OptEq(p.Get("diskofferingid"), v.DiskOfferingID) && kernel.OptEq(p.Get("state"), v.State) &&
			kernel.OptEq(p.Get("serviceofferingid"), v.ServiceOfferingID) &&
			taggedWith(c.State, "Volume", v.ID, p.Map("tags"))
	})
}

// volumeView is VolumeJoinDaoImpl.newVolumeResponse.
func volumeView(c *kernel.Call, v *model.Volume) map[string]any {
	z := c.State.Zone(v.ZoneID)
	out := map[string]any{"id": v.ID, "name": v.Name, "type": v.Type, "zoneid": z.ID, "zonename": z.Name,
		"size": v.SizeBytes, "state": v.State, "created": kernel.CsTime(v.Created), "provisioningtype": "thin", "destroyed": v.State == model.VolumeDestroy,
		"isextractable": false, "displayvolume": true, "quiescevm": false, "supportsstoragesnapshot": false,
		"hasannotations": false, "deleteprotection": false, "tags": resourceTagViews(c, "Volume", v.ID)}
	addOwner(c, out, v.AccountID)
	if fullView(c) {
		// VolumeJoinDaoImpl.newVolumeResponse: the hypervisor, the pool
		// ("none" before the volume is on one) and the path for the root
		// admin's view only.
		out["hypervisor"], out["storagetype"], out["storage"] = v.Hypervisor, "shared", model.FirstNonEmpty(v.Storage, "none")
		if v.Path != "" {
			out["path"] = v.Path
		}
	}
	if vm, ok := model.ByID(c.State.VMs, v.VMID); ok && v.VMID != "" {
		out["virtualmachineid"], out["vmname"], out["vmdisplayname"] = vm.ID, vm.Name, vm.DisplayName
		out["vmstate"], out["vmtype"] = vm.State, "User"
		if v.DeviceID != nil {
			out["deviceid"] = *v.DeviceID
		}
		if v.Attached != nil {
			out["attached"] = kernel.CsTime(*v.Attached)
		}
	}
	if o, ok := model.ByID(c.State.DiskOfferings, v.DiskOfferingID); ok {
		out["diskofferingid"], out["diskofferingname"], out["diskofferingdisplaytext"] = o.ID, o.Name, o.DisplayText
	}
	if o, ok := model.ByID(c.State.ServiceOfferings, v.ServiceOfferingID); ok {
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
func fullView(c *kernel.Call) bool { return c.Account != nil && c.Account.Type == 1 }

// volumeString is VolumeVO's toString, as CloudStack's error texts show it.
func volumeString(st *model.State, v *model.Volume) string {
	vm := "null"
	if owner, ok := model.ByID(st.VMs, v.VMID); ok && v.VMID != "" {
		vm = fmt.Sprint(owner.InternalID)
	}
	return fmt.Sprintf("Vol[%d|name=%s|vm=%s|%s]", v.InternalID, v.Name, vm, v.Type)
}
