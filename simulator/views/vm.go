// Package views holds the response builders CloudStack keeps in
// ApiResponseHelper, ViewResponseHelper and the *JoinDaoImpl classes: how a
// row is answered, so that an API family answering with another family's
// object (a load balancer's member VMs, a VM's volumes) needs only this
// package, never the other family.
package views

import (
	"math"
	"strconv"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// VMView is UserVmResponse as listVirtualMachines and the VM jobs show it:
// UserVmJoinDaoImpl.newUserVmResponse with details=all (the default).
func VMView(c *kernel.Call, vm *model.VirtualMachine) map[string]any {
	z, a, u := c.State.Zone(vm.ZoneID), c.State.Account(vm.AccountID), c.State.UserByID(vm.UserID)
	d := c.State.Domain(a.DomainID)
	v := map[string]any{"id": vm.ID, "name": vm.Name, "displayname": vm.DisplayName,
		"instancename": vm.InstanceName, "state": vm.State, "zoneid": z.ID, "zonename": z.Name,
		"account": a.Name, "domainid": d.ID, "domain": d.Name, "domainpath": d.DisplayPath(),
		"userid": vm.UserID, "created": kernel.CsTime(vm.Created), "hypervisor": vm.Hypervisor,
		"cpunumber": vm.CPUNumber, "cpuspeed": vm.CPUSpeed, "memory": vm.Memory, "haenable": vm.HAEnable,
		"passwordenabled": vm.PasswordEnabled, "rootdeviceid": 0, "rootdevicetype": "ROOT",
		"displayvm": true, "isdynamicallyscalable": false, "deleteprotection": false, "hasannotations": false,
		"arch": "x86_64", "securitygroup": vmSecurityGroupViews(c, vm),
		"affinitygroup": vmAffinityGroupViews(c, vm), "tags": resourceTagViews(c, "UserVm", vm.ID),
		"details": orEmpty(vm.Details), "nic": nicViews(c, vm)}
	v["boottype"], v["bootmode"] = bootView(vm.Details)
	if u != nil {
		v["username"] = u.Username
	}
	ownerName(c, v, a) // UserVmJoinDaoImpl.newUserVmResponse: project or account
	addVMRefs(c, v, vm)
	addVMStats(v, vm.Stats)
	return v
}

// addVMStats is newUserVmResponse's "stats calculation": only when
// ApiDBUtils.getVmStatistics has stats for the VM (the stats collector has
// seen it Running), the CPU use as DecimalFormat("#.##") + "%" and the
// counters cast to long.
func addVMStats(v map[string]any, st *model.VMStats) {
	if st == nil {
		return
	}
	v["cpuused"] = strconv.FormatFloat(math.Round(st.CPUUtilization*100)/100, 'f', -1, 64) + "%"
	for k, f := range map[string]float64{"networkkbsread": st.NetworkReadKBs, "networkkbswrite": st.NetworkWriteKBs,
		"diskkbsread": st.DiskReadKBs, "diskkbswrite": st.DiskWriteKBs, "diskioread": st.DiskReadIOs,
		"diskiowrite": st.DiskWriteIOs, "memorykbs": st.MemoryKBs, "memoryintfreekbs": st.IntFreeMemKBs,
		"memorytargetkbs": st.TargetMemKBs} {
		v[k] = int64(f)
	}
}

// addVMRefs adds the fields naming related entities that exist.
func addVMRefs(c *kernel.Call, v map[string]any, vm *model.VirtualMachine) {
	if h, ok := model.ByID(c.State.Hosts, vm.HostID); ok && vm.UsesHost() {
		v["hostid"], v["hostname"] = h.ID, h.Name
	}
	if so, ok := model.ByID(c.State.ServiceOfferings, vm.ServiceOfferingID); ok {
		v["serviceofferingid"], v["serviceofferingname"] = so.ID, so.Name
	}
	if os, ok := model.ByID(c.State.OSTypes, vm.OSTypeID); ok {
		v["ostypeid"], v["guestosid"], v["osdisplayname"] = os.ID, os.ID, os.Description
	}
	if vm.TemplateID != "" {
		v["templateid"] = vm.TemplateID
	}
	// UserVmJoinDaoImpl.newUserVmResponse: the template's name and display
	// text (the view joins removed templates too), and the VM's pending job.
	if t, ok := model.ByID(c.State.Templates, vm.TemplateID); ok {
		v["templatename"], v["templatedisplaytext"] = t.Name, t.DisplayText
	}
	// UserVmJoinDaoImpl.newUserVmResponse (details all or iso): the attached
	// ISO's id, name and display text.
	if iso, ok := model.ByID(c.State.Templates, vm.ISOID); ok && vm.ISOID != "" {
		v["isoid"], v["isoname"], v["isodisplaytext"] = iso.ID, iso.Name, iso.DisplayText
	}
	if j := pendingJobOn(c.State, vm.ID); j != nil {
		v["jobid"], v["jobstatus"] = j.ID, j.Status
	}
	if len(vm.KeyPairs) > 0 {
		v["keypairs"] = strings.Join(vm.KeyPairs, ",")
	}
	if vm.Group != "" {
		v["group"] = vm.Group
	}
	if len(vm.NICs) > 0 {
		v["ipaddress"] = vm.NICs[0].IPAddress
	}
	if ip := model.StaticNATOf(c.State, vm.ID); ip != nil {
		v["publicip"], v["publicipid"] = ip.Address, ip.ID
	}
}

// vmAffinityGroupViews are the VM's affinity groups as UserVmResponse lists
// them.
func vmAffinityGroupViews(c *kernel.Call, vm *model.VirtualMachine) []map[string]any {
	out := []map[string]any{}
	for _, id := range vm.AffinityGroupIDs {
		if g, ok := model.ByID(c.State.AffinityGroups, id); ok {
			v := map[string]any{"id": g.ID, "name": g.Name, "type": g.Type}
			if g.Description != "" {
				v["description"] = g.Description
			}
			addOwner(c, v, g.AccountID)
			out = append(out, v)
		}
	}
	return out
}

func vmSecurityGroupViews(c *kernel.Call, vm *model.VirtualMachine) []map[string]any {
	out := []map[string]any{}
	for _, id := range vm.SecurityGroupIDs {
		if g, ok := model.ByID(c.State.SecurityGroups, id); ok {
			out = append(out, map[string]any{"id": g.ID, "name": g.Name, "description": g.Description,
				"ingressrule": []any{}, "egressrule": []any{}, "tags": []any{}})
		}
	}
	return out
}

// nicViews are the VM's NICs as UserVmJoinDaoImpl.setUserVmResponse builds
// them: no deviceid ("where do we find" it: never set) and no
// virtualmachineid ("makes no sense on a nested nic object"); the NICs come
// in device order. Not re-checked: mtu.
func nicViews(c *kernel.Call, vm *model.VirtualMachine) []map[string]any {
	out := []map[string]any{}
	for _, n := range vm.NICs {
		net := c.State.Network(n.NetworkID)
		nv := map[string]any{"id": n.ID, "networkid": n.NetworkID, "ipaddress": n.IPAddress,
			"macaddress": n.MACAddress, "isdefault": n.IsDefault, "traffictype": "Guest",
			"secondaryip": []any{}, "extradhcpoption": []any{}, "mtu": 1500}
		if net != nil {
			nv["networkname"], nv["netmask"], nv["gateway"], nv["type"] = net.Name, net.Netmask, net.Gateway, net.Type
			nv["broadcasturi"], nv["isolationuri"] = "vlan://"+net.VLAN, "vlan://"+net.VLAN
		}
		out = append(out, nv)
	}
	return out
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// pendingJobOn is the job user_vm_view joins: one still pending on the VM.
func pendingJobOn(st *model.State, vmID string) *model.Job {
	for _, j := range st.Jobs {
		if j.Status == kernel.JobPending && j.InstanceType == "VirtualMachine" && strings.EqualFold(j.InstanceID, vmID) {
			return j
		}
	}
	return nil
}

// addOwner adds the account and domain fields every owned entity's response
// carries.
func addOwner(c *kernel.Call, v map[string]any, accountID string) {
	a := c.State.Account(accountID)
	if a == nil {
		return
	}
	ownerName(c, v, a)
	if d := c.State.Domain(a.DomainID); d != nil {
		v["domainid"], v["domain"], v["domainpath"] = d.ID, d.Name, d.DisplayPath()
	}
}

// AffinityGroupView is AffinityGroupJoinDaoImpl.newAffinityGroupResponse.
func AffinityGroupView(c *kernel.Call, g *model.AffinityGroup) map[string]any {
	ids := []string{}
	for _, vm := range model.Members(c.State, g) {
		ids = append(ids, vm.ID)
	}
	v := map[string]any{"id": g.ID, "name": g.Name, "type": g.Type, "virtualmachineIds": ids}
	if g.Description != "" {
		v["description"] = g.Description
	}
	addOwner(c, v, g.AccountID)
	return v
}

// bootView is the VM's boottype and bootmode as
// UserVmJoinDaoImpl.newUserVmResponse answers them: Uefi and the UEFI
// detail's value in lower case when the VM has that detail, else Bios and
// legacy.
func bootView(details map[string]string) (string, string) {
	for k, v := range details {
		if strings.EqualFold(k, "UEFI") {
			return "Uefi", strings.ToLower(v)
		}
	}
	return "Bios", "legacy"
}
