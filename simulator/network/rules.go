package network

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
)

// Network rules share CloudStack's firewall_rules table: firewall, static
// NAT (IP forwarding) and load balancer rules take their ids from one
// sequence, so one kind names them all and a rule's UUID resolves for every
// command whose id parameter is a FirewallRuleResponse.
const kindFirewallRule = "firewallrule"

// Protocols the virtual router supports per service
// (VirtualRouterElement.setCapabilities, SupportedProtocols). CloudStack
// checks them with String.contains, so a substring such as "tc" passes.
const (
	firewallProtocols = "tcp,udp,icmp"
	lbProtocols       = "tcp, udp, tcp-proxy"
	protoICMP         = "icmp"
	allIPv4CIDRs      = "0.0.0.0/0"
	haproxyStatsPort  = 8081 // NetUtils.HAPROXY_STATS_PORT
	dnsPort           = 53   // LoadBalancingRulesManagerImpl.DNS_PORT
)

// FirewallRuleOwner is the taggable for FirewallRule: the account owning the resource a tag names.
// ResourceManagerUtilImpl.s_typeMap maps FirewallRule to FirewallRuleVO, the
// table every rule is in, and LoadBalancer to LoadBalancerVO.
func FirewallRuleOwner(st *model.State, id string) (string, bool) {
	r := st.Rule(id)
	if r == nil {
		return "", false
	}
	return r.AccountID, true
}

// LoadBalancerOwner is the taggable for LoadBalancer: the account owning the resource a tag names.
func LoadBalancerOwner(st *model.State, id string) (string, bool) {
	r := st.Rule(id)
	if r == nil || r.Purpose != model.PurposeLB {
		return "", false
	}
	return r.AccountID, true
}

// ruleInternalID is the internal id of a rule, removed or not, which
// CloudStack prints when findById finds nothing.
func ruleInternalID(st *model.State, id string) int64 {
	if r, ok := model.ByID(st.Rules, id); ok {
		return r.InternalID
	}
	return 0
}

// rulesOnIP are an address's rules that are not revoked, of one purpose or
// of all ("") - FirewallRulesDaoImpl.listByIpAndPurposeAndNotRevoked.
func rulesOnIP(st *model.State, ipID, purpose string) []*model.NetRule {
	var out []*model.NetRule
	for _, r := range st.Rules {
		if r.Removed == nil && r.State != model.RuleRevoke && strings.EqualFold(r.IPID, ipID) &&
			(purpose == "" || r.Purpose == purpose) {
			out = append(out, r)
		}
	}
	return out
}

// displayed is the display filter of listFirewallRules and
// listLoadBalancerRules: their getDisplay falls back to
// BaseListAccountResourcesCmd.getDisplay, true, so without fordisplay only
// rules shown to the user are listed.
func displayed(p kernel.Params, r *model.NetRule) bool {
	return p.Bool("fordisplay", true) == r.Display
}

// newRule persists a rule in state Add (FirewallRuleVO starts Staged and
// setStateToAdd moves it on in the same transaction).
func newRule(c *kernel.Call, r *model.NetRule) *model.NetRule {
	r.ID, r.InternalID = c.State.NewID(kindFirewallRule)
	r.State, r.Created = model.RuleAdd, c.Engine.Now()
	c.State.Rules = append(c.State.Rules, r)
	c.Changed()
	return r
}

// removeRule is FirewallManagerImpl.removeRule: the row goes, and
// FirewallRulesDaoImpl.remove deletes a load balancer's LoadBalancer tags
// and a firewall rule's FirewallRule tags (a static NAT rule's stay).
func removeRule(c *kernel.Call, r *model.NetRule) {
	now := c.Engine.Now()
	r.Removed = &now
	switch r.Purpose {
	case model.PurposeLB:
		tag.RemoveTagsOf(c.State, "LoadBalancer", r.ID)
	case model.PurposeFirewall:
		tag.RemoveTagsOf(c.State, "FirewallRule", r.ID)
	}
	c.Changed()
}

// applyRules is FirewallManagerImpl.applyRules with updateRulesInDB for the
// rules of an address and purpose after the network element applied them:
// Add becomes Active, Revoke is removed unless another rule still names the
// rule as related (then it stays in Revoke).
func applyRules(c *kernel.Call, ipID, purpose string) {
	for _, r := range c.State.Rules {
		if r.Removed != nil || !strings.EqualFold(r.IPID, ipID) || r.Purpose != purpose {
			continue
		}
		switch r.State {
		case model.RuleAdd:
			r.State = model.RuleActive
		case model.RuleRevoke:
			if relatedRuleOf(c.State, r.ID) == nil {
				removeRule(c, r)
			}
		}
	}
	c.Changed()
}

// relatedRuleOf is FirewallRulesDaoImpl.findByRelatedId: the firewall rule
// opened for a static NAT or load balancer rule.
func relatedRuleOf(st *model.State, ruleID string) *model.NetRule {
	for _, r := range st.Rules {
		if r.Removed == nil && r.Related != "" && strings.EqualFold(r.Related, ruleID) {
			return r
		}
	}
	return nil
}

// revokeRelatedFirewallRule is FirewallManagerImpl.revokeRelatedFirewallRule
// with apply=true: the firewall rule opened for ruleID is revoked and, once
// the address's firewall rules are applied again, removed.
func revokeRelatedFirewallRule(c *kernel.Call, ruleID string) {
	fw := relatedRuleOf(c.State, ruleID)
	if fw == nil {
		return
	}
	fw.State = model.RuleRevoke
	applyRules(c, fw.IPID, model.PurposeFirewall)
}

// revokeRulesOfIP marks an address's rules of one purpose revoked and
// applies them (FirewallManagerImpl.revokeFirewallRulesForIp,
// RulesManagerImpl.revokeAllPFAndStaticNatRulesForIp).
func revokeRulesOfIP(c *kernel.Call, ipID, purpose string) {
	for _, r := range rulesOnIP(c.State, ipID, purpose) {
		r.State = model.RuleRevoke
	}
	applyRules(c, ipID, purpose)
}

// createRuleForAllCidrs is FirewallManagerImpl.createRuleForAllCidrs: the
// firewall rule a static NAT or load balancer rule opens for 0.0.0.0/0. An
// existing rule for the same ports and protocol is reused (and then not
// related to the new rule).
func createRuleForAllCidrs(c *kernel.Call, ip *model.PublicIP, start, end int, proto, relatedID string) *kernel.APIError {
	for _, r := range rulesOnIP(c.State, ip.ID, model.PurposeFirewall) {
		if r.StartPort != nil && *r.StartPort == start && r.EndPort != nil && *r.EndPort == end &&
			strings.EqualFold(r.Protocol, proto) {
			return nil
		}
	}
	_, err := createFirewallRuleFor(c, ip, firewallSpec{start: &start, end: &end, proto: proto,
		cidrs: []string{allIPv4CIDRs}, related: relatedID, display: true})
	return err
}

// cleanupIPRules is what IpAddressManagerImpl.cleanupIpResources does to an
// address's rules before it is released: firewall, static NAT and load
// balancer rules all go.
func cleanupIPRules(c *kernel.Call, ip *model.PublicIP) {
	revokeRulesOfIP(c, ip.ID, model.PurposeFirewall)
	revokeRulesOfIP(c, ip.ID, model.PurposeStaticNat)
	for _, r := range c.State.Rules {
		if r.Removed == nil && r.Purpose == model.PurposeLB && strings.EqualFold(r.IPID, ip.ID) {
			deleteLB(c, r) // LoadBalancingRulesManagerImpl.removeAllLoadBalanacersForIp
		}
	}
}

// disableStaticNATRules is the rule part of RulesManagerImpl.disableStaticNat:
// the address's firewall rules and its static NAT rules are revoked.
func disableStaticNATRules(c *kernel.Call, ip *model.PublicIP) {
	revokeRulesOfIP(c, ip.ID, model.PurposeFirewall)
	revokeRulesOfIP(c, ip.ID, model.PurposeStaticNat)
}

// CleanupVMRules is the rule part of UserVmManagerImpl.cleanupVmResources at
// expunge: the firewall rules opened for the VM's static NAT rules go
// (FirewallManagerImpl.revokeFirewallRulesForVm), the VM leaves every load
// balancer (LoadBalancingRulesManagerImpl.removeVmFromLoadBalancers, the
// rules themselves stay) and static NAT to it is disabled.
func CleanupVMRules(c *kernel.Call, vm *model.VirtualMachine) {
	if ip := model.StaticNATOf(c.State, vm.ID); ip != nil {
		for _, r := range rulesOnIP(c.State, ip.ID, model.PurposeStaticNat) {
			if fw := relatedRuleOf(c.State, r.ID); fw != nil {
				fw.State = model.RuleRevoke
			}
		}
		applyRules(c, ip.ID, model.PurposeFirewall)
		disableStaticNATRules(c, ip)
		ip.StaticNAT, ip.VMID, ip.VMIP = false, "", ""
		unassignFromTier(c.State, ip)
	}
	for _, r := range c.State.Rules {
		if r.Removed == nil && r.LB != nil && r.LB.HasVM(vm.ID) {
			r.LB.DropVM(vm.ID)
			applyLB(c, r)
		}
	}
	c.Changed()
}

// ruleJob is the job of a command on an existing rule: find looks the id
// up as the command's getEntityOwnerId or getSyncObjId does, and a rule it
// does not find is refused at once with notFound and the internal id.
func ruleJob(c *kernel.Call, class, notFound string, find func(string) *model.NetRule) (*kernel.AsyncJob, *model.NetRule, error) {
	id := c.Params.Get("id")
	r := find(id)
	if r == nil {
		return nil, nil, kernel.ParamError("%s%d", notFound, ruleInternalID(c.State, id))
	}
	return &kernel.AsyncJob{InstanceType: "FirewallRule", InstanceID: r.ID, CmdClass: "org.apache.cloudstack.api.command.user." + class}, r, nil
}
