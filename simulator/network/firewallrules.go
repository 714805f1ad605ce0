package network

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// firewallRuleCommands are the commands of firewallrules.go (registerCommands).
func firewallRuleCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createFirewallRule", Async: createFirewallRule},
		{Name: "listFirewallRules", IDKind: kindFirewallRule, Sync: listFirewallRules},
		{Name: "deleteFirewallRule", IDKind: kindFirewallRule, Async: deleteFirewallRule},
	}
}

// firewallSpec is an ingress firewall rule to create
// (FirewallManagerImpl.createFirewallRule's arguments).
type firewallSpec struct {
	start, end         *int
	proto              string
	cidrs              []string
	icmpCode, icmpType *int
	related            string
	system             bool
	display            bool
}

// optInt is an optional integer parameter (nil when absent).
func optInt(p kernel.Params, name string) *int {
	if !p.Has(name) {
		return nil
	}
	v := int(p.Int(name, 0))
	return &v
}

// createFirewallRule follows CreateFirewallRuleCmd.create (source CIDR
// check, then FirewallManagerImpl.createIngressFirewallRule) at once and
// CreateFirewallRuleCmd.execute (applyIngressFwRules) in the job. In 4.22
// createIngressFirewallRule has no VPC branch, so a VPC address takes no
// rule: one no tier holds fails getNetworkId below, one a tier holds fails
// checkIpForService (tier offerings have no Firewall service). Main's
// createIngressFirewallRuleForVpcIp (apache/cloudstack#12706) came later.
func createFirewallRule(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	ip, _ := model.ByID(c.State.PublicIPs, p.Get("ipaddressid"))
	proto := strings.TrimSpace(p.Get("protocol")) // CreateFirewallRuleCmd.getProtocol
	spec := firewallSpec{start: optInt(p, "startport"), end: optInt(p, "endport"), proto: proto,
		cidrs: []string{allIPv4CIDRs}, icmpCode: optInt(p, "icmpcode"), icmpType: optInt(p, "icmptype"),
		system: strings.EqualFold(p.Get("type"), "system"), display: p.Bool("fordisplay", true)}
	if spec.end == nil { // getSourcePortEnd: the start port when no end port is given
		spec.end = spec.start
	}
	if strings.EqualFold(proto, protoICMP) { // getIcmpCode / getIcmpType default to -1 for ICMP
		spec.icmpCode, spec.icmpType = orMinusOne(spec.icmpCode), orMinusOne(spec.icmpType)
	}
	if p.Has("cidrlist") {
		spec.cidrs = p.List("cidrlist")
	}
	for _, cidr := range spec.cidrs {
		if !validCIDR(cidr) {
			return nil, kernel.ServerParamError("Source CIDRs formatting error %s", cidr)
		}
	}
	if ip.NetworkID == "" { // CreateFirewallRuleCmd.getNetworkId
		return nil, kernel.ParamError("Unable to create firewall rule for the IP address ID=%d as IP is not associated with any network and no networkId is passed in", ip.InternalID)
	}
	rule, err := createFirewallRuleFor(c, ip, spec)
	if err != nil {
		return nil, err
	}
	return &kernel.AsyncJob{InstanceType: "FirewallRule", InstanceID: rule.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.user.firewall.CreateFirewallRuleCmd",
		Run: func() (any, error) {
			applyRules(c, ip.ID, model.PurposeFirewall)
			return map[string]any{"firewallrule": views.FirewallRuleView(c, rule)}, nil
		},
		Fail: func(*kernel.APIError) { // execute's finally: revokeIngressFwRule
			rule.State = model.RuleRevoke
			applyRules(c, ip.ID, model.PurposeFirewall)
		}}, nil
}

func orMinusOne(v *int) *int {
	if v != nil {
		return v
	}
	m := -1
	return &m
}

// createFirewallRuleFor is FirewallManagerImpl.createFirewallRule
// (createFirewallRuleForNonVPC on main) for an ingress rule on ip:
// checkIpForService(Firewall), then
// validateFirewallRule. A conflicting new rule is not kept (CloudStack
// persists it, finds the conflict and rolls the transaction back).
func createFirewallRuleFor(c *kernel.Call, ip *model.PublicIP, s firewallSpec) (*model.NetRule, *kernel.APIError) {
	if err := checkIPForService(c.State, ip, "Firewall", ""); err != nil {
		return nil, err
	}
	if err := validateFirewallRule(c, ip, s.start, s.end, s.proto, model.PurposeFirewall); err != nil {
		return nil, err
	}
	icmp := strings.EqualFold(s.proto, protoICMP)
	switch {
	case !icmp && (s.icmpCode != nil || s.icmpType != nil):
		return nil, kernel.ParamError("Can specify icmpCode and icmpType for ICMP protocol only")
	case icmp && (s.start != nil || s.end != nil):
		return nil, kernel.ParamError("Can't specify start/end port when protocol is ICMP")
	}
	rule := &model.NetRule{Purpose: model.PurposeFirewall, IPID: ip.ID, NetworkID: ip.NetworkID, AccountID: ip.AccountID,
		Protocol: strings.ToLower(s.proto), StartPort: s.start, EndPort: s.end, CIDRs: s.cidrs,
		ICMPCode: s.icmpCode, ICMPType: s.icmpType, Related: s.related, System: s.system, Display: s.display}
	if !s.system { // only user rules are checked for conflicts
		rule.State = model.RuleAdd
		if err := detectRulesConflict(c, rule); err != nil {
			return nil, err
		}
	}
	return newRule(c, rule), nil
}

// listFirewallRules is FirewallManagerImpl.listFirewallRules: ingress
// firewall rules, newest first (Filter "id", ascending=false).
func listFirewallRules(c *kernel.Call) (any, error) {
	p := c.Params
	if err := ipReadyForRules(c, p.Get("ipaddressid"), "firewall rules"); err != nil {
		return nil, err
	}
	return listRules(c, "firewallrule", views.FirewallRuleView, func(r *model.NetRule) bool {
		return r.Purpose == model.PurposeFirewall && kernel.OptEq(p.Get("ipaddressid"), r.IPID) &&
			kernel.OptEq(p.Get("networkid"), r.NetworkID) && displayed(p, r) &&
			tag.TaggedWith(c.State, "FirewallRule", r.ID, p.Map("tags"))
	}), nil
}

// ipReadyForRules is the ipaddressid check of the rule list commands: the
// address must be allocated (IPAddressVO.readyToUse).
func ipReadyForRules(c *kernel.Call, ipID, what string) *kernel.APIError {
	if ipID == "" {
		return nil
	}
	if ip, ok := model.ByID(c.State.PublicIPs, ipID); !ok || ip.State != model.IPAllocated {
		internal := int64(0)
		if ok {
			internal = ip.InternalID
		}
		return kernel.ParamError("Ip address id=%d not ready for %s yet", internal, what)
	}
	return nil
}

// listRules lists live rules newest first, as the rule list commands'
// Filter("id", false) orders them. listFirewallRules and
// listIpForwardingRules take BaseListCmd's keyword and never read it.
func listRules(c *kernel.Call, key string, view func(*kernel.Call, *model.NetRule) map[string]any, keep func(*model.NetRule) bool) map[string]any {
	var hits []*model.NetRule
	for i := len(c.State.Rules) - 1; i >= 0; i-- {
		r := c.State.Rules[i]
		if r.Removed == nil && kernel.OptEq(c.Params.Get("id"), r.ID) && keep(r) {
			hits = append(hits, r)
		}
	}
	start, end := kernel.PageBounds(c.Params, len(hits))
	rows := make([]map[string]any, 0, end-start)
	for _, r := range hits[start:end] {
		rows = append(rows, view(c, r))
	}
	return kernel.ListBody(key, len(hits), rows)
}

// deleteFirewallRule is DeleteFirewallRuleCmd: the owner lookup refuses a
// removed rule at once; FirewallManagerImpl.revokeFirewallRule refuses a
// rule of another purpose in the job.
func deleteFirewallRule(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, rule, err := ruleJob(c, "firewall.DeleteFirewallRuleCmd", "Unable to find firewall rule by ID=", c.State.Rule)
	if err != nil {
		return nil, err
	}
	job.Run = func() (any, error) {
		if rule.Purpose != model.PurposeFirewall || rule.Removed != nil {
			return nil, kernel.ParamError("Unable to find %d having purpose [Firewall, Ipv6Firewall]", rule.InternalID)
		}
		rule.State = model.RuleRevoke
		applyRules(c, rule.IPID, model.PurposeFirewall)
		return kernel.Success(), nil
	}
	return job, nil
}
