package network

import (
	"net/netip"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// lBMemberCommands are the commands of loadbalancer_members.go (registerCommands).
func lBMemberCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "assignToLoadBalancerRule", IDKind: kindFirewallRule, Async: assignToLoadBalancerRule},
		{Name: "removeFromLoadBalancerRule", IDKind: kindFirewallRule, Async: removeFromLoadBalancerRule},
		{Name: "listLoadBalancerRuleInstances", IDKind: kindFirewallRule, Sync: listLoadBalancerRuleInstances},
	}
}

// vmIPMap reads vmidipmap as getVmIdIpListMap does: VM internal id order is
// kept by returning pairs. checkIP is AssignToLoadBalancerRuleCmd's IPv4
// check, which RemoveFromLoadBalancerRuleCmd lacks.
func vmIPMap(c *kernel.Call, checkIP bool) ([]model.LBMember, *kernel.APIError) {
	var out []model.LBMember
	for _, m := range c.Params.Map("vmidipmap") {
		vmID, vmIP := javaString(m, "vmid"), javaString(m, "vmip")
		vm, ok := model.ByID(c.State.VMs, vmID)
		if !ok {
			return nil, kernel.ParamError("Unable to find virtual machine ID: %s", vmID)
		}
		if addr, err := netip.ParseAddr(vmIP); checkIP && (err != nil || !addr.Is4()) {
			return nil, kernel.ParamError("Invalid ip address %s passed in vmidipmap for vmid %s", vmIP, vmID)
		}
		out = append(out, model.LBMember{VMID: vm.ID, VMIP: m["vmip"]})
	}
	return out, nil
}

// javaString is a map entry as Java's string concatenation prints it: a
// missing one is "null" (cloudstack-go sends vmidipmap as key/value pairs,
// so CloudStack finds no vmid).
func javaString(m map[string]string, key string) string {
	if v, ok := m[key]; ok {
		return v
	}
	return "null"
}

// assignToLoadBalancerRule is LoadBalancingRulesManagerImpl.assignToLoadBalancer,
// run in the job.
func assignToLoadBalancerRule(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, r, err := lbJob(c, "AssignToLoadBalancerRuleCmd", "Unable to find load balancer rule: ")
	if err != nil {
		return nil, err
	}
	ids := c.Params.List("virtualmachineids")
	job.Run = func() (any, error) {
		pairs, err := vmIPMap(c, true)
		if err != nil {
			return nil, err
		}
		add, err := lbMembersToAdd(c, r, ids, pairs)
		if err != nil {
			return nil, err
		}
		r.LB.Members = append(r.LB.Members, add...)
		applyLB(c, r)
		return kernel.Success(), nil
	}
	return job, nil
}

// lbMembersToAdd checks each VM as assignToLoadBalancer does and returns
// the new mappings: the VM's address on the rule's network unless vmidipmap
// names addresses (which must be the primary one: the simulator has no
// secondary addresses); a VM named in both gets both.
func lbMembersToAdd(c *kernel.Call, r *model.NetRule, ids []string, pairs []model.LBMember) ([]model.LBMember, *kernel.APIError) {
	if len(ids) == 0 && len(pairs) == 0 {
		return nil, kernel.ParamError("Both instanceids and vmidipmap  can't be null")
	}
	wanted := map[string][]string{}
	var order []string
	note := func(vmID, ip string) {
		key := strings.ToLower(vmID)
		if _, seen := wanted[key]; !seen {
			order = append(order, key)
		}
		if ip != "" {
			wanted[key] = append(wanted[key], ip)
		} else if wanted[key] == nil {
			wanted[key] = []string{}
		}
	}
	for _, m := range pairs {
		note(m.VMID, m.VMIP)
	}
	for _, id := range ids {
		note(id, "")
	}
	var add []model.LBMember
	for _, key := range order {
		vm, _ := model.ByID(c.State.VMs, key)
		ips, err := lbMemberIPs(c, r, vm, wanted[key], model.ContainsFold(ids, key))
		if err != nil {
			return nil, err
		}
		for _, ip := range ips {
			add = append(add, model.LBMember{VMID: vm.ID, VMIP: ip})
		}
	}
	return add, nil
}

// lbMemberIPs checks one VM and returns the addresses to map.
func lbMemberIPs(c *kernel.Call, r *model.NetRule, vm *model.VirtualMachine, ips []string, listed bool) ([]string, *kernel.APIError) {
	if vm == nil || vm.Removed != nil || vm.State == model.VMDestroyed || vm.State == model.VMExpunging {
		return nil, kernel.ParamError("Invalid instance id specified")
	}
	if !strings.EqualFold(vm.AccountID, r.AccountID) { // RulesManagerImpl.checkRuleAndUserVm
		return nil, kernel.ParamError("New rule %s and vm id=%d belong to different accounts", r, vm.InternalID)
	}
	nic := vm.NICOn(r.NetworkID)
	if nic == nil {
		return nil, kernel.ParamError("VM with id specified cannot be added because it doesn't belong in the same network.")
	}
	primary := nic.IPAddress
	check := ips
	if len(check) == 0 {
		check = []string{primary}
	}
	for _, m := range r.LB.Members {
		if strings.EqualFold(m.VMID, vm.ID) && model.ContainsFold(check, m.VMIP) {
			return nil, kernel.ParamError("VM %d with %s is already mapped to load balancer.", vm.InternalID, m.VMIP)
		}
	}
	for _, ip := range ips {
		if ip != primary { // NicSecondaryIpDao finds none
			return nil, kernel.ParamError("VM ip %s specified does not belong to nic in network %d", ip, c.State.Network(r.NetworkID).InternalID)
		}
	}
	out := append([]string{}, ips...)
	if len(ips) == 0 || listed {
		out = append(out, primary)
	}
	return dedupe(out), nil
}

// dedupe keeps the first of equal strings (the HashSet of the persisting loop).
func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !model.ContainsFold(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// removeFromLoadBalancerRule is LoadBalancingRulesManagerImpl.removeFromLoadBalancerInternal,
// run in the job. Every refusal there is answered as
// RemoveFromLoadBalancerRuleCmd.execute does: 431 "Failed to remove
// instance from load balancer rule". A VM that is not behind the rule is
// no error (its mappings are an empty list).
func removeFromLoadBalancerRule(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, r, err := lbJob(c, "RemoveFromLoadBalancerRuleCmd", "Unable to find load balancer rule: ")
	if err != nil {
		return nil, err
	}
	ids := c.Params.List("virtualmachineids")
	job.Run = func() (any, error) {
		pairs, err := vmIPMap(c, false)
		if err != nil {
			return nil, err
		}
		failed := kernel.ServerParamError("Failed to remove instance from load balancer rule")
		if len(ids) == 0 && len(pairs) == 0 {
			return nil, failed
		}
		for _, m := range pairs {
			if !model.ContainsMember(r.LB.Members, m) {
				return nil, failed
			}
		}
		r.LB.RemoveMembers(ids, pairs)
		applyLB(c, r)
		return kernel.Success(), nil
	}
	return job, nil
}

// listLoadBalancerRuleInstances is ListLoadBalancerRuleInstancesCmd and
// LoadBalancingRulesManagerImpl.listLoadBalancerInstances: the rule's VMs
// that are not Destroyed, Expunging, Error or Unknown, each once. Every
// mapped VM counts as applied, so applied=false lists none. It neither
// pages nor reads keyword.
func listLoadBalancerRuleInstances(c *kernel.Call) (any, error) {
	id := c.Params.Get("id")
	r := c.State.LBRule(id)
	if r == nil {
		return nil, kernel.InternalError("Unable to find the load balancer with ID [%d].", ruleInternalID(c.State, id))
	}
	var vms []*model.VirtualMachine
	for _, m := range r.LB.Members {
		vm, ok := model.ByID(c.State.VMs, m.VMID)
		if !ok || vm.Removed != nil || containsVM(vms, vm) {
			continue
		}
		switch vm.State {
		case model.VMDestroyed, model.VMExpunging, model.VMError, model.VMUnknown:
			continue
		}
		vms = append(vms, vm)
	}
	if !c.Params.Bool("applied", true) {
		vms = nil
	}
	rows := make([]map[string]any, 0, len(vms))
	for _, vm := range vms {
		rows = append(rows, views.LBInstanceView(c, r, vm))
	}
	key := "loadbalancerruleinstance"
	if c.Params.Bool("lbvmips", false) {
		key = "lbrulevmidip"
	}
	return kernel.ListBody(key, len(rows), rows), nil
}

func containsVM(list []*model.VirtualMachine, vm *model.VirtualMachine) bool {
	for _, x := range list {
		if x == vm {
			return true
		}
	}
	return false
}
