package simulator

import (
	"fmt"
	"net/netip"
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

// validPort is NetUtils.isValidPort.
func validPort(p int) bool { return p >= 1 && p <= 65535 }

// validateFirewallRule is FirewallManagerImpl.validateFirewallRule for an
// address of an isolated network (VPC addresses do not exist here). The
// purpose's service must be in the network (getNetworkServiceCapabilities,
// UnsupportedServiceException) and the protocol among the virtual router's
// SupportedProtocols for it; static NAT reads no capabilities, so any
// protocol passes there.
func (c *Call) validateFirewallRule(ip *PublicIP, start, end *int, proto, purpose string) *APIError {
	switch {
	case start != nil && !validPort(*start):
		return paramError("publicPort is an invalid value: %d", *start)
	case end != nil && !validPort(*end):
		return paramError("Public port range is an invalid value: %d", *end)
	case start != nil && end != nil && *start > *end:
		return paramError("Start port can't be bigger than end port")
	case ip.NetworkID == "": // validateFirewallRuleForIsolatedIp
		return paramError("Unable to create firewall rule ; ip with specified id is not associated with any network")
	}
	caps := map[string]string{purposeFirewall: firewallProtocols, purposeLB: lbProtocols}[purpose]
	if caps == "" {
		return nil
	}
	if err := c.st.requireService(c.st.network(ip.NetworkID), ruleServices[purpose]); err != nil {
		return err
	}
	lower := strings.ToLower(proto)
	switch {
	case !strings.Contains(caps, lower):
		return paramError("Protocol %s is not supported in zone %d", proto, c.st.zone(ip.ZoneID).InternalID)
	case lower == protoICMP && purpose != purposeFirewall:
		return paramError("Protocol %s is currently supported only for rules with purpose %s", proto, purposeFirewall)
	}
	return nil
}

// ruleConflict is a NetworkRuleConflictException as the create commands
// answer it (ServerApiException NETWORK_RULE_CONFLICT_ERROR).
func ruleConflict(format string, args ...any) *APIError {
	return &APIError{Code: codeRuleConflict, CSCode: csServerAPIException, Text: fmt.Sprintf(format, args...)}
}

// detectRulesConflict is FirewallManagerImpl.detectRulesConflict for a new
// rule on a public address against the address's rules that are not
// revoked. Destination CIDRs are always empty (ingress rules have none), so
// they never tell two rules apart.
func (c *Call) detectRulesConflict(n *NetRule) *APIError {
	ip, _ := byID(c.st.PublicIPs, n.IPID)
	for _, r := range c.st.rulesOnIP(n.IPID, "") {
		if r == n {
			continue
		}
		oneFirewall := (r.Purpose == purposeFirewall || n.Purpose == purposeFirewall) &&
			(n.Purpose != r.Purpose || !strings.EqualFold(n.Protocol, r.Protocol))
		bothFirewall := r.Purpose == n.Purpose && r.Purpose == purposeFirewall
		duplicated := bothFirewall && conflictingCIDRs(r.CIDRs, n.CIDRs)
		if !oneFirewall {
			if r.Purpose == purposeStaticNat && n.Purpose != purposeStaticNat {
				return ruleConflict("There is 1 to 1 Nat rule specified for the ip address id=%d", ip.InternalID)
			} else if r.Purpose != purposeStaticNat && n.Purpose == purposeStaticNat {
				return ruleConflict("There is already firewall rule specified for the ip address id=%d", ip.InternalID)
			}
		}
		if !strings.EqualFold(r.NetworkID, n.NetworkID) {
			return ruleConflict("New rule is for a different network than what's specified in rule null") // rule.getXid() is never set
		}
		sameProto := strings.EqualFold(n.Protocol, r.Protocol)
		if strings.EqualFold(n.Protocol, protoICMP) && sameProto && duplicated && sameICMP(n, r) {
			return paramError("New rule conflicts with existing rule: %s", r)
		}
		notNullPorts := n.StartPort != nil && n.EndPort != nil && r.StartPort != nil && r.EndPort != nil
		nullPorts := n.StartPort == nil && n.EndPort == nil && r.StartPort == nil && r.EndPort == nil
		if nullPorts && duplicated && sameProto && !strings.EqualFold(n.Protocol, protoICMP) {
			return ruleConflict("There is already a firewall rule specified with protocol = %s and no ports", n.Protocol)
		}
		if !notNullPorts || !portRangesConflict(n, r, oneFirewall, bothFirewall, duplicated) {
			continue
		}
		allowStaticNat := r.Purpose == purposeStaticNat && n.Purpose == purposeStaticNat && !sameProto
		if !allowStaticNat && !oneFirewall {
			return ruleConflict("The range specified, %d-%d, conflicts with rule %s which has %d-%d",
				*n.StartPort, *n.EndPort, r, *r.StartPort, *r.EndPort)
		}
	}
	return nil
}

// sameICMP compares ICMP codes and types. Only firewall rules get them
// (-1 by default); a static NAT rule of protocol icmp has none, where
// CloudStack's comparison would throw a NullPointerException.
func sameICMP(n, r *NetRule) bool {
	return n.ICMPCode != nil && r.ICMPCode != nil && n.ICMPType != nil && r.ICMPType != nil &&
		*n.ICMPCode == *r.ICMPCode && *n.ICMPType == *r.ICMPType
}

// conflictingCIDRs is FirewallManagerImpl.detectConflictingCidrs: two empty
// lists conflict, otherwise they must share a CIDR.
func conflictingCIDRs(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// portRangesConflict is FirewallManagerImpl.checkIfRulesHaveConflictingPortRanges.
func portRangesConflict(n, r *NetRule, oneFirewall, bothFirewall, duplicated bool) bool {
	if oneFirewall || (bothFirewall && !duplicated) {
		return false
	}
	ns, ne, rs, re := *n.StartPort, *n.EndPort, *r.StartPort, *r.EndPort
	return (rs <= ns && re >= ns) || (rs <= ne && re >= ne) || (ns <= rs && ne >= rs) || (ns <= re && ne >= re)
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

// validCIDR is NetUtils.isValidIp4Cidr || isValidIp6Cidr.
func validCIDR(s string) bool {
	_, err := netip.ParsePrefix(s)
	return err == nil
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
