package vm

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// vmCommands are the commands of vms.go (registerCommands).
func vmCommands() []kernel.Command {
	return []kernel.Command{{Name: "listVirtualMachines", IDKind: model.KindVM, Sync: listVirtualMachines}}
}

// listVirtualMachines is QueryManagerImpl.searchForUserVMs →
// searchForUserVMIdsAndCount: expunged VMs are never listed (user_vm_view
// has no removed rows); name is host name EQ (MySQL's collation makes it
// case-insensitive); hostid is read only from a root admin; tags match
// when any one key/value pair does (the tag join ORs them); user data is
// shown only with userdata=true (ListVMsCmd).
func listVirtualMachines(c *kernel.Call) (any, error) {
	p := c.Params
	if hv := p.Get("hypervisor"); hv != "" && model.HypervisorType(hv) == "" {
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
		Zone: func(vm *model.VirtualMachine) string { return vm.ZoneID }, View: views.VMView,
		Owner: func(vm *model.VirtualMachine) string { return vm.AccountID }} // AccountManagerImpl.buildACLSearchCriteria scopes it by projectid
	if p.Bool("userdata", false) {
		l.View = func(c *kernel.Call, vm *model.VirtualMachine) map[string]any {
			v := views.VMView(c, vm)
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
			tag.TaggedWithAny(c.State, "UserVm", vm.ID, p.Map("tags"))
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
	if ip := model.StaticNATOf(st, vm.ID); ip != nil {
		fields = append(fields, ip.Address)
	}
	return fields
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
