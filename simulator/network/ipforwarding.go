package network

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// iPForwardingCommands are the commands of ipforwarding.go (registerCommands).
func iPForwardingCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createIpForwardingRule", Async: createIPForwardingRule},
		{Name: "listIpForwardingRules", IDKind: kindFirewallRule, Sync: listIPForwardingRules},
		{Name: "deleteIpForwardingRule", IDKind: kindFirewallRule, Async: deleteIPForwardingRule},
	}
}

// createIPForwardingRule follows CreateIpForwardingRuleCmd.create
// (RulesManagerImpl.createStaticNatRule) at once and its execute
// (applyIngressFirewallRules, applyStaticNatRules) in the job. The address
// must have static NAT enabled and be usable for StaticNat
// (checkIpForService); openfirewall (default true) opens the ports for
// 0.0.0.0/0 with a firewall rule related to the new rule, which needs the
// network's Firewall service (createRuleForAllCidrs).
func createIPForwardingRule(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	if p.Has("cidrlist") {
		return nil, kernel.ParamError("Parameter cidrList is deprecated; if you need to open firewall rule for the specific CIDR, please refer to createFirewallRule command")
	}
	ip, _ := model.ByID(c.State.PublicIPs, p.Get("ipaddressid"))
	if ip.SourceNAT || !ip.StaticNAT || ip.VMID == "" {
		return nil, ruleConflict("Can't do static nat on ip address: %s", ip.Address)
	}
	start := int(p.Int("startport", 0))
	end := start // getSourcePortEnd: the start port when no end port is given
	if e := optInt(p, "endport"); e != nil {
		end = *e
	}
	proto := p.Get("protocol")
	if err := validateFirewallRule(c, ip, &start, &end, proto, model.PurposeStaticNat); err != nil {
		return nil, err
	}
	if err := checkIPForService(c.State, ip, "StaticNat", ""); err != nil { // createStaticNatRule
		return nil, err
	}
	rule := &model.NetRule{Purpose: model.PurposeStaticNat, State: model.RuleAdd, IPID: ip.ID, NetworkID: ip.NetworkID,
		AccountID: ip.AccountID, Protocol: strings.ToLower(proto), StartPort: &start, EndPort: &end, Display: true}
	rule = newRule(c, rule)
	var err *kernel.APIError
	if p.Bool("openfirewall", true) {
		err = createRuleForAllCidrs(c, ip, start, end, proto, rule.ID)
	}
	if err == nil {
		err = detectRulesConflict(c, rule)
	}
	if err != nil { // the transaction rolls back: neither rule stays
		revokeRelatedFirewallRule(c, rule.ID)
		removeRule(c, rule)
		return nil, err
	}
	return &kernel.AsyncJob{InstanceType: "FirewallRule", InstanceID: rule.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.user.nat.CreateIpForwardingRuleCmd",
		Run: func() (any, error) {
			applyRules(c, ip.ID, model.PurposeFirewall)
			applyRules(c, ip.ID, model.PurposeStaticNat)
			return map[string]any{"ipforwardingrule": views.IPForwardingView(c, rule)}, nil
		},
		Fail: func(*kernel.APIError) { // execute's finally: revoke both rules
			revokeRelatedFirewallRule(c, rule.ID)
			rule.State = model.RuleRevoke
			applyRules(c, ip.ID, model.PurposeStaticNat)
		}}, nil
}

// listIPForwardingRules is RulesManagerImpl.searchStaticNatRules: static
// NAT rules, newest first; virtualmachineid matches the VM the rule's
// address is static-NATed to. Nothing found is an empty list.
func listIPForwardingRules(c *kernel.Call) (any, error) {
	p := c.Params
	if err := ipReadyForRules(c, p.Get("ipaddressid"), "port forwarding rules"); err != nil {
		return nil, err
	}
	return listRules(c, "ipforwardingrule", views.IPForwardingView, func(r *model.NetRule) bool {
		ip, _ := model.ByID(c.State.PublicIPs, r.IPID)
		return r.Purpose == model.PurposeStaticNat && kernel.OptEq(p.Get("ipaddressid"), r.IPID) &&
			(p.Get("virtualmachineid") == "" || (ip != nil && strings.EqualFold(ip.VMID, p.Get("virtualmachineid"))))
	}), nil
}

// deleteIPForwardingRule is DeleteIpForwardingRuleCmd: the related
// firewall rule and then the rule are revoked
// (RulesManagerImpl.revokeStaticNatRule). Like CloudStack, it takes the id
// of any rule; one of another purpose is only marked revoked, because
// applying the address's static NAT rules does not touch it.
func deleteIPForwardingRule(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, rule, err := ruleJob(c, "nat.DeleteIpForwardingRuleCmd", "Unable to find static NAT rule by ID: ", c.State.Rule)
	if err != nil {
		return nil, err
	}
	job.Run = func() (any, error) {
		if rule.Removed != nil {
			return nil, kernel.ParamError("Unable to find %d", rule.InternalID)
		}
		revokeRelatedFirewallRule(c, rule.ID)
		rule.State = model.RuleRevoke
		applyRules(c, rule.IPID, model.PurposeStaticNat)
		return kernel.Success(), nil
	}
	return job, nil
}
