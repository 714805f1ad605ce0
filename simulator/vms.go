package simulator

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

func init() {
	kernel.Register(kernel.Command{Name: "listVirtualMachines", IDKind: model.KindVM, Sync: listVirtualMachines})
}

// listVirtualMachines is QueryManagerImpl.searchForUserVMs →
// searchForUserVMIdsAndCount: expunged VMs are never listed (user_vm_view
// has no removed rows); name is host name EQ (MySQL's collation makes it
// case-insensitive); hostid is read only from a root admin; tags match
// when any one key/value pair does (the tag join ORs them); user data is
// shown only with userdata=true (ListVMsCmd).
func listVirtualMachines(c *kernel.Call) (any, error) {
	p := c.Params
	if hv := p.Get("hypervisor"); hv != "" && hypervisorType(hv) == "" {
		return nil, kernel.ParamError("Invalid HypervisorType %s", hv) // HypervisorType.getType == None
	}
	if p.Get("id") != "" && len(p.List("ids")) > 0 {
		return nil, kernel.ParamError("Specify either id or ids but not both parameters")
	}
	rootAdmin := c.Account.Type == 1
	l := kernel.Lister[*model.VirtualMachine]{Key: "virtualmachine", ID: (*model.VirtualMachine).UUID,
		Name: func(vm *model.VirtualMachine) string { return vm.Name },
		Keyword: func(vm *model.VirtualMachine) []string {
			return vmKeywordFields(c.State, vm, p.Get("keyword"), rootAdmin)
		},
		Zone: func(vm *model.VirtualMachine) string { return vm.ZoneID }, View: vmView}
	if p.Bool("userdata", false) {
		l.View = func(c *kernel.Call, vm *model.VirtualMachine) map[string]any {
			v := vmView(c, vm)
			if vm.UserData != "" {
				v["userdata"] = vm.UserData
			}
			return v
		}
	}
	// Accounts that are not admins do not see Destroyed and Expunging VMs
	// while allow.user.view.destroyed.vm is false, its default.
	hideDestroyed := !c.Account.IsAdmin()
	return l.Run(c, c.State.VMs, func(vm *model.VirtualMachine) bool {
		return vm.Removed == nil && vmStateMatches(p.Get("state"), vm.State) &&
			(!hideDestroyed || (vm.State != model.VMDestroyed && vm.State != model.VMExpunging)) &&
			(!rootAdmin || kernel.OptEq(p.Get("hostid"), vm.HostID)) && kernel.OptEq(p.Get("templateid"), vm.TemplateID) &&
			kernel.OptEq(p.Get("serviceofferingid"), vm.ServiceOfferingID) && kernel.OptEq(p.Get("userid"), vm.UserID) &&
			kernel.OptEq(p.Get("hypervisor"), vm.Hypervisor) && kernel.OptEq(p.Get("keypair"), strings.Join(vm.KeyPairs, ",")) &&
			(p.Get("networkid") == "" || vm.NICOn(p.Get("networkid")) != nil) &&
			(p.Get("affinitygroupid") == "" || model.ContainsFold(vm.AffinityGroupIDs, p.Get("affinitygroupid"))) &&
			(p.Get("securitygroupid") == "" || model.ContainsFold(vm.SecurityGroupIDs, p.Get("securitygroupid"))) &&
			(!p.Has("haenable") || p.Bool("haenable", false) == vm.HAEnable) &&
			taggedWithAny(c.State, "UserVm", vm.ID, p.Map("tags"))
	})
}

// vmKeywordFields are the fields searchForUserVMIdsAndCount matches keyword
// against with LIKE: display name, host name, the NICs' addresses, the
// static NAT address and, for a root admin, the instance name; the state
// is compared with EQ, so it is a field only when it equals the keyword.
func vmKeywordFields(st *model.State, vm *model.VirtualMachine, kw string, rootAdmin bool) []string {
	fields := []string{vm.DisplayName, vm.Name}
	if strings.EqualFold(vm.State, kw) {
		fields = append(fields, vm.State)
	}
	if rootAdmin {
		fields = append(fields, vm.InstanceName)
	}
	for _, n := range vm.NICs {
		fields = append(fields, n.IPAddress)
	}
	if ip := staticNATOf(st, vm.ID); ip != nil {
		fields = append(fields, ip.Address)
	}
	return fields
}

// taggedWithAny is the tag join of listVirtualMachines and listNetworks:
// the resource type and (key0 = value0 OR key1 = value1 ...); an empty value
// matches any value, as the simulator's other tag filters have it.
func taggedWithAny(st *model.State, typ, id string, want []map[string]string) bool {
	for _, w := range want {
		if taggedWith(st, typ, id, []map[string]string{w}) {
			return true
		}
	}
	return len(want) == 0
}

// vmStateMatches is the state filter: "present" is stateNIN (Destroyed,
// Expunging), any other value stateEQ.
func vmStateMatches(want, have string) bool {
	switch {
	case want == "":
		return true
	case strings.EqualFold(want, "Present"):
		return have != model.VMDestroyed && have != model.VMExpunging
	}
	return strings.EqualFold(want, have)
}

// vmView is UserVmResponse as listVirtualMachines and the VM jobs show it:
// UserVmJoinDaoImpl.newUserVmResponse with details=all (the default).
func vmView(c *kernel.Call, vm *model.VirtualMachine) map[string]any {
	z, a, u := c.State.Zone(vm.ZoneID), c.State.Account(vm.AccountID), c.State.UserByID(vm.UserID)
	d := c.State.Domain(a.DomainID)
	v := map[string]any{"id": vm.ID, "name": vm.Name, "displayname": vm.DisplayName,
		"instancename": vm.InstanceName, "state": vm.State, "zoneid": z.ID, "zonename": z.Name,
		"account": a.Name, "domainid": d.ID, "domain": d.Name, "domainpath": d.DisplayPath(),
		"userid": vm.UserID, "created": kernel.CsTime(vm.Created), "hypervisor": vm.Hypervisor,
		"cpunumber": vm.CPUNumber, "cpuspeed": vm.CPUSpeed, "memory": vm.Memory, "haenable": vm.HAEnable,
		"passwordenabled": vm.PasswordEnabled, "rootdeviceid": 0, "rootdevicetype": "ROOT",
		"displayvm": true, "isdynamicallyscalable": false, "deleteprotection": false, "hasannotations": false,
		"bootmode": "legacy", "boottype": "Bios", "arch": "x86_64", "securitygroup": vmSecurityGroupViews(c, vm),
		"affinitygroup": vmAffinityGroupViews(c, vm), "tags": resourceTagViews(c, "UserVm", vm.ID),
		"details": orEmpty(vm.Details), "nic": nicViews(c, vm)}
	if u != nil {
		v["username"] = u.Username
	}
	addVMRefs(c, v, vm)
	return v
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
	if ip := staticNATOf(c.State, vm.ID); ip != nil {
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
