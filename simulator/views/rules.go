package views

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// hasRules is FirewallRulesDaoImpl.countRulesByIpId > 0: any rule on the
// address that is not removed, whatever its state.
func hasRules(st *model.State, ipID string) bool {
	for _, r := range st.Rules {
		if r.Removed == nil && strings.EqualFold(r.IPID, ipID) {
			return true
		}
	}
	return false
}

// FirewallRuleView is ApiLoadBalancerFirewallResponseServiceImpl.createFirewallResponse.
func FirewallRuleView(c *kernel.Call, r *model.NetRule) map[string]any {
	v := map[string]any{"id": r.ID, "protocol": r.Protocol, "cidrlist": strings.Join(r.CIDRs, ","),
		"destcidrlist": "", "networkid": r.NetworkID, "fordisplay": r.Display, "traffictype": "Ingress",
		"tags": resourceTagViews(c, "FirewallRule", r.ID), "state": r.ViewState()}
	if r.StartPort != nil {
		v["startport"] = *r.StartPort
	}
	if r.EndPort != nil {
		v["endport"] = *r.EndPort
	}
	if r.ICMPCode != nil {
		v["icmpcode"] = *r.ICMPCode
	}
	if r.ICMPType != nil {
		v["icmptype"] = *r.ICMPType
	}
	if ip, ok := model.ByID(c.State.PublicIPs, r.IPID); ok {
		v["ipaddressid"], v["ipaddress"] = ip.ID, ip.Address
	}
	return v
}

// IPForwardingView is ApiLoadBalancerFirewallResponseServiceImpl.
// createIpForwardingRuleResponse. IpForwardingRuleResponse declares
// ipaddressid a Long and the address's database id goes there, so it is a
// JSON number, not the address's UUID.
func IPForwardingView(c *kernel.Call, r *model.NetRule) map[string]any {
	v := map[string]any{"id": r.ID, "protocol": r.Protocol, "startport": *r.StartPort, "endport": *r.EndPort,
		"state": r.ViewState()}
	ip, ok := model.ByID(c.State.PublicIPs, r.IPID)
	if !ok {
		return v
	}
	v["ipaddressid"], v["ipaddress"] = ip.InternalID, ip.Address
	if vm, found := model.ByID(c.State.VMs, ip.VMID); found && ip.VMIP != "" && vm.Removed == nil {
		v["virtualmachineid"], v["virtualmachinename"] = vm.ID, vm.Name
		v["virtualmachinedisplayname"] = model.FirstNonEmpty(vm.DisplayName, vm.Name)
	}
	return v
}

// LBView is ApiLoadBalancerFirewallResponseServiceImpl.createLoadBalancerResponse.
func LBView(c *kernel.Call, r *model.NetRule) map[string]any {
	v := map[string]any{"id": r.ID, "name": r.LB.Name, "publicport": model.Itoa(*r.StartPort),
		"privateport": model.Itoa(r.LB.PrivatePort), "algorithm": r.LB.Algorithm, "fordisplay": r.Display,
		"state": r.ViewState(), "networkid": r.NetworkID, "tags": resourceTagViews(c, "LoadBalancer", r.ID)}
	for k, s := range map[string]string{"description": r.LB.Description, "protocol": r.LB.Protocol, "cidrlist": r.LB.CIDRList} {
		if s != "" {
			v[k] = s
		}
	}
	if ip, ok := model.ByID(c.State.PublicIPs, r.IPID); ok {
		v["publicipid"], v["publicip"] = ip.ID, ip.Address
		if z := c.State.Zone(ip.ZoneID); z != nil {
			v["zoneid"], v["zonename"] = z.ID, z.Name
		}
	}
	addOwner(c, v, r.AccountID)
	return v
}

// LBInstanceView is a UserVmResponse ("loadbalancerruleinstance"), or with
// lbvmips a LoadBalancerRuleVmMapResponse holding it and the VM's mapped
// addresses. The mapping's service state is null until a health check sets
// it, so servicestate is absent.
func LBInstanceView(c *kernel.Call, r *model.NetRule, vm *model.VirtualMachine) map[string]any {
	v := VMView(c, vm)
	if !c.Params.Bool("lbvmips", false) {
		return v
	}
	var ips []string
	for _, m := range r.LB.Members {
		if strings.EqualFold(m.VMID, vm.ID) {
			ips = append(ips, m.VMIP)
		}
	}
	return map[string]any{"loadbalancerruleinstance": v, "lbvmipaddresses": ips}
}
