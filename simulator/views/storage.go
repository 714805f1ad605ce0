package views

import (
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// VolumeView is VolumeJoinDaoImpl.newVolumeResponse.
func VolumeView(c *kernel.Call, v *model.Volume) map[string]any {
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
	if ci := v.ChainInfo(); ci != "" {
		out["chaininfo"] = ci // VolumeJoinDaoImpl.newVolumeResponse: setChainInfo, for every caller
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

// SnapshotView is SnapshotJoinDaoImpl.newSnapshotResponse.
func SnapshotView(c *kernel.Call, s *model.Snapshot) map[string]any {
	out := map[string]any{"id": s.ID, "name": s.Name, "snapshottype": "MANUAL", "intervaltype": "MANUAL",
		"volumeid": s.VolumeID, "created": kernel.CsTime(s.Created), "state": s.State, "physicalsize": s.SizeBytes,
		"virtualsize": s.SizeBytes, "revertable": false, "hasannotations": false, "chainsize": 0,
		"tags": resourceTagViews(c, "Snapshot", s.ID)}
	addOwner(c, out, s.AccountID)
	if z := c.State.Zone(s.ZoneID); z != nil {
		out["zoneid"], out["zonename"] = z.ID, z.Name
	}
	if v, ok := model.ByID(c.State.Volumes, s.VolumeID); ok {
		out["volumename"], out["volumetype"], out["volumestate"] = v.Name, v.Type, v.State
	}
	return out
}
