package simulator

import (
	"fmt"
	"strings"
	"time"
)

// Network rules share CloudStack's firewall_rules table: firewall, static
// NAT (IP forwarding) and load balancer rules take their ids from one
// sequence, so one kind names them all and a rule's UUID resolves for every
// command whose id parameter is a FirewallRuleResponse.
const kindFirewallRule = "firewallrule"

// FirewallRule.Purpose and FirewallRule.State values.
const (
	purposeFirewall  = "Firewall"
	purposeStaticNat = "StaticNat"
	purposeLB        = "LoadBalancing"

	ruleAdd    = "Add"
	ruleActive = "Active"
	ruleRevoke = "Revoke"
)

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

// NetRule is a row of firewall_rules (FirewallRuleVO); a load balancer rule
// also has its load_balancing_rules part (LB). Removed rules stay, as
// CloudStack's rows do, so error texts can name their internal ids.
type NetRule struct {
	ID         string     `json:"id"`
	InternalID int64      `json:"internalid"`
	Purpose    string     `json:"purpose"`
	State      string     `json:"state"`
	IPID       string     `json:"ipaddressid"`
	NetworkID  string     `json:"networkid"`
	AccountID  string     `json:"accountid"`
	Protocol   string     `json:"protocol"`
	StartPort  *int       `json:"startport,omitempty"`
	EndPort    *int       `json:"endport,omitempty"`
	CIDRs      []string   `json:"cidrs,omitempty"` // source CIDRs (firewall_rules_cidrs)
	ICMPType   *int       `json:"icmptype,omitempty"`
	ICMPCode   *int       `json:"icmpcode,omitempty"`
	Related    string     `json:"related,omitempty"` // the rule an opened firewall rule belongs to
	System     bool       `json:"system,omitempty"`  // FirewallRuleType.System
	Display    bool       `json:"display"`
	LB         *LBRule    `json:"lb,omitempty"`
	Created    time.Time  `json:"created"`
	Removed    *time.Time `json:"removed,omitempty"`
}

// LBRule is LoadBalancerVO's own columns and its load_balancer_vm_map rows.
type LBRule struct {
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	Algorithm   string     `json:"algorithm"`
	PrivatePort int        `json:"privateport"`
	Protocol    string     `json:"protocol,omitempty"` // lb_protocol; empty when none was given
	CIDRList    string     `json:"cidrlist,omitempty"`
	Members     []LBMember `json:"members,omitempty"`
}

// LBMember is a LoadBalancerVMMapVO: one VM address behind the rule.
type LBMember struct {
	VMID string `json:"vmid"`
	VMIP string `json:"vmip"`
}

func (r *NetRule) uuid() string { return r.ID }

// ruleTables are the network rule family's state table.
type ruleTables struct {
	Rules []*NetRule `json:"netrules,omitempty"`
}

func init() {
	paramKinds["publicipid"] = kindPublicIP
	// ResourceManagerUtilImpl.s_typeMap maps FirewallRule to FirewallRuleVO, the
	// table every rule is in, and LoadBalancer to LoadBalancerVO.
	registerTaggable("FirewallRule", func(st *state, id string) (string, bool) {
		r := st.rule(id)
		if r == nil {
			return "", false
		}
		return r.AccountID, true
	})
	registerTaggable("LoadBalancer", func(st *state, id string) (string, bool) {
		r := st.rule(id)
		if r == nil || r.Purpose != purposeLB {
			return "", false
		}
		return r.AccountID, true
	})
}

// rule is a live (not removed) rule by UUID.
func (st *state) rule(id string) *NetRule {
	r, ok := byID(st.Rules, id)
	if !ok || r.Removed != nil {
		return nil
	}
	return r
}

// ruleInternalID is the internal id of a rule, removed or not, which
// CloudStack prints when findById finds nothing.
func (st *state) ruleInternalID(id string) int64 {
	if r, ok := byID(st.Rules, id); ok {
		return r.InternalID
	}
	return 0
}

// rulesOnIP are an address's rules that are not revoked, of one purpose or
// of all ("") - FirewallRulesDaoImpl.listByIpAndPurposeAndNotRevoked.
func (st *state) rulesOnIP(ipID, purpose string) []*NetRule {
	var out []*NetRule
	for _, r := range st.Rules {
		if r.Removed == nil && r.State != ruleRevoke && strings.EqualFold(r.IPID, ipID) &&
			(purpose == "" || r.Purpose == purpose) {
			out = append(out, r)
		}
	}
	return out
}

// hasRules is FirewallRulesDaoImpl.countRulesByIpId > 0: any rule on the
// address that is not removed, whatever its state.
func (st *state) hasRules(ipID string) bool {
	for _, r := range st.Rules {
		if r.Removed == nil && strings.EqualFold(r.IPID, ipID) {
			return true
		}
	}
	return false
}

// displayed is the display filter of listFirewallRules and
// listLoadBalancerRules: their getDisplay falls back to
// BaseListAccountResourcesCmd.getDisplay, true, so without fordisplay only
// rules shown to the user are listed.
func displayed(p Params, r *NetRule) bool { return p.Bool("fordisplay", true) == r.Display }

// String is FirewallRuleVO.toString.
func (r *NetRule) String() string {
	return fmt.Sprintf("Rule[%d-%s-%s]", r.InternalID, r.Purpose, r.State)
}

// viewState is ApiLoadBalancerFirewallResponseServiceImpl.getFirewallState:
// a revoked rule shows as Deleting.
func (r *NetRule) viewState() string {
	if r.State == ruleRevoke {
		return "Deleting"
	}
	return r.State
}

// newRule persists a rule in state Add (FirewallRuleVO starts Staged and
// setStateToAdd moves it on in the same transaction).
func (c *Call) newRule(r *NetRule) *NetRule {
	r.ID, r.InternalID = c.st.newID(kindFirewallRule)
	r.State, r.Created = ruleAdd, c.srv.now()
	c.st.Rules = append(c.st.Rules, r)
	c.changed()
	return r
}

// removeRule is FirewallManagerImpl.removeRule: the row goes, and
// FirewallRulesDaoImpl.remove deletes a load balancer's LoadBalancer tags
// and a firewall rule's FirewallRule tags (a static NAT rule's stay).
func (c *Call) removeRule(r *NetRule) {
	now := c.srv.now()
	r.Removed = &now
	switch r.Purpose {
	case purposeLB:
		c.st.removeTagsOf("LoadBalancer", r.ID)
	case purposeFirewall:
		c.st.removeTagsOf("FirewallRule", r.ID)
	}
	c.changed()
}

// applyRules is FirewallManagerImpl.applyRules with updateRulesInDB for the
// rules of an address and purpose after the network element applied them:
// Add becomes Active, Revoke is removed unless another rule still names the
// rule as related (then it stays in Revoke).
func (c *Call) applyRules(ipID, purpose string) {
	for _, r := range c.st.Rules {
		if r.Removed != nil || !strings.EqualFold(r.IPID, ipID) || r.Purpose != purpose {
			continue
		}
		switch r.State {
		case ruleAdd:
			r.State = ruleActive
		case ruleRevoke:
			if c.st.relatedRuleOf(r.ID) == nil {
				c.removeRule(r)
			}
		}
	}
	c.changed()
}

// relatedRuleOf is FirewallRulesDaoImpl.findByRelatedId: the firewall rule
// opened for a static NAT or load balancer rule.
func (st *state) relatedRuleOf(ruleID string) *NetRule {
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
func (c *Call) revokeRelatedFirewallRule(ruleID string) {
	fw := c.st.relatedRuleOf(ruleID)
	if fw == nil {
		return
	}
	fw.State = ruleRevoke
	c.applyRules(fw.IPID, purposeFirewall)
}

// revokeRulesOfIP marks an address's rules of one purpose revoked and
// applies them (FirewallManagerImpl.revokeFirewallRulesForIp,
// RulesManagerImpl.revokeAllPFAndStaticNatRulesForIp).
func (c *Call) revokeRulesOfIP(ipID, purpose string) {
	for _, r := range c.st.rulesOnIP(ipID, purpose) {
		r.State = ruleRevoke
	}
	c.applyRules(ipID, purpose)
}

// createRuleForAllCidrs is FirewallManagerImpl.createRuleForAllCidrs: the
// firewall rule a static NAT or load balancer rule opens for 0.0.0.0/0. An
// existing rule for the same ports and protocol is reused (and then not
// related to the new rule).
func (c *Call) createRuleForAllCidrs(ip *PublicIP, start, end int, proto, relatedID string) *APIError {
	for _, r := range c.st.rulesOnIP(ip.ID, purposeFirewall) {
		if r.StartPort != nil && *r.StartPort == start && r.EndPort != nil && *r.EndPort == end &&
			strings.EqualFold(r.Protocol, proto) {
			return nil
		}
	}
	_, err := c.createFirewallRuleFor(ip, firewallSpec{start: &start, end: &end, proto: proto,
		cidrs: []string{allIPv4CIDRs}, related: relatedID, display: true})
	return err
}

// cleanupIPRules is what IpAddressManagerImpl.cleanupIpResources does to an
// address's rules before it is released: firewall, static NAT and load
// balancer rules all go.
func (c *Call) cleanupIPRules(ip *PublicIP) {
	c.revokeRulesOfIP(ip.ID, purposeFirewall)
	c.revokeRulesOfIP(ip.ID, purposeStaticNat)
	for _, r := range c.st.Rules {
		if r.Removed == nil && r.Purpose == purposeLB && strings.EqualFold(r.IPID, ip.ID) {
			c.deleteLB(r) // LoadBalancingRulesManagerImpl.removeAllLoadBalanacersForIp
		}
	}
}

// disableStaticNATRules is the rule part of RulesManagerImpl.disableStaticNat:
// the address's firewall rules and its static NAT rules are revoked.
func (c *Call) disableStaticNATRules(ip *PublicIP) {
	c.revokeRulesOfIP(ip.ID, purposeFirewall)
	c.revokeRulesOfIP(ip.ID, purposeStaticNat)
}

// cleanupVMRules is the rule part of UserVmManagerImpl.cleanupVmResources at
// expunge: the firewall rules opened for the VM's static NAT rules go
// (FirewallManagerImpl.revokeFirewallRulesForVm), the VM leaves every load
// balancer (LoadBalancingRulesManagerImpl.removeVmFromLoadBalancers, the
// rules themselves stay) and static NAT to it is disabled.
func (c *Call) cleanupVMRules(vm *VirtualMachine) {
	if ip := c.st.staticNATOf(vm.ID); ip != nil {
		for _, r := range c.st.rulesOnIP(ip.ID, purposeStaticNat) {
			if fw := c.st.relatedRuleOf(r.ID); fw != nil {
				fw.State = ruleRevoke
			}
		}
		c.applyRules(ip.ID, purposeFirewall)
		c.disableStaticNATRules(ip)
		ip.StaticNAT, ip.VMID, ip.VMIP = false, "", ""
	}
	for _, r := range c.st.Rules {
		if r.Removed == nil && r.LB != nil && r.LB.hasVM(vm.ID) {
			r.LB.dropVM(vm.ID)
			c.applyLB(r)
		}
	}
	c.changed()
}

// ruleJob is the job of a command on an existing rule: find looks the id
// up as the command's getEntityOwnerId or getSyncObjId does, and a rule it
// does not find is refused at once with notFound and the internal id.
func (c *Call) ruleJob(class, notFound string, find func(string) *NetRule) (*asyncJob, *NetRule, error) {
	id := c.Params.Get("id")
	r := find(id)
	if r == nil {
		return nil, nil, paramError("%s%d", notFound, c.st.ruleInternalID(id))
	}
	return &asyncJob{instanceType: "FirewallRule", instanceID: r.ID, cmdClass: "org.apache.cloudstack.api.command.user." + class}, r, nil
}
