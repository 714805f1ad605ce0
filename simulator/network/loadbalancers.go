package network

import (
	"net/netip"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// loadBalancerCommands are the commands of loadbalancers.go (registerCommands).
func loadBalancerCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createLoadBalancerRule", Async: createLoadBalancerRule},
		{Name: "listLoadBalancerRules", IDKind: kindFirewallRule, Sync: listLoadBalancerRules},
		{Name: "deleteLoadBalancerRule", IDKind: kindFirewallRule, Async: deleteLoadBalancerRule},
		{Name: "updateLoadBalancerRule", IDKind: kindFirewallRule, Async: updateLoadBalancerRule},
	}
}

// validAlgorithm is NetUtils.isValidAlgorithm.
func validAlgorithm(a string) bool {
	switch strings.ToLower(a) {
	case "roundrobin", "leastconn", "source":
		return true
	}
	return false
}

// createLoadBalancerRule follows CreateLoadBalancerRuleCmd.create
// (LoadBalancingRulesManagerImpl.createPublicLoadBalancerRule and
// createPublicLoadBalancer) at once and CreateLoadBalancerRuleCmd.execute
// (applyIngressFirewallRules) in the job. The rule stays in state Add until
// a VM is assigned.
func createLoadBalancerRule(c *kernel.Call) (*kernel.AsyncJob, error) {
	ip, net, err := lbSourceIP(c)
	if err != nil {
		return nil, err
	}
	open, err := lbOpenFirewall(c, ip)
	if err != nil {
		return nil, asCreateError(err)
	}
	rule, err := createOnTier(c, ip, net, open)
	if err != nil {
		return nil, asCreateError(err)
	}
	return &kernel.AsyncJob{InstanceType: "FirewallRule", InstanceID: rule.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.user.loadbalancer.CreateLoadBalancerRuleCmd",
		Run: func() (any, error) {
			if open {
				applyRules(c, ip.ID, model.PurposeFirewall)
			}
			return map[string]any{"loadbalancer": views.LBView(c, rule)}, nil
		},
		Fail: func(*kernel.APIError) { // execute's finally: revoke the firewall rule, delete the rule
			revokeRelatedFirewallRule(c, rule.ID)
			deleteLB(c, rule)
		}}, nil
}

// asCreateError is CreateLoadBalancerRuleCmd.create's catch: an
// InvalidParameterValueException becomes a ServerApiException PARAM_ERROR.
func asCreateError(err *kernel.APIError) *kernel.APIError {
	if err.Code == kernel.CodeParamError {
		return kernel.ServerParamError("%s", err.Text)
	}
	return err
}

// lbSourceIP is what CreateLoadBalancerRuleCmd.getEntityOwnerId (called
// before create) and getSourceIpAddressId decide: the owner comes from the
// public address, so without publicipid there is no rule to create (an
// account/domainid owner without an address ends in createPublicLoadBalancerRule's
// "can't find/allocate source IP").
func lbSourceIP(c *kernel.Call) (*model.PublicIP, *model.Network, *kernel.APIError) {
	p := c.Params
	id := p.Get("publicipid")
	if id == "" {
		if p.Get("account") == "" || p.Get("domainid") == "" {
			return nil, nil, kernel.ParamError("Can't define IP owner. Either specify account/domainId or publicIpId")
		}
		if !hasAccount(c.State, p.Get("account"), p.Get("domainid")) {
			return nil, nil, kernel.ParamError("Unable to find account %s in domain ID=%d", p.Get("account"), c.State.Domain(p.Get("domainid")).InternalID)
		}
		if _, err := lbNetwork(c, nil); err != nil {
			return nil, nil, asCreateError(err)
		}
		return nil, nil, kernel.ServerParamError("Unable to create load balance rule; can't find/allocate source IP")
	}
	ip, _ := model.ByID(c.State.PublicIPs, id)
	if ip.State != model.IPAllocated { // IpAddress.readyToUse
		return nil, nil, kernel.ParamError("Unable to create load balancer rule, invalid IP address ID %d", ip.InternalID)
	}
	net, err := lbNetwork(c, ip)
	if err != nil {
		return nil, nil, asCreateError(err)
	}
	return ip, net, nil
}

// hasAccount is ApiDBUtils.findAccountByNameDomain finding an account.
func hasAccount(st *model.State, name, domainID string) bool {
	for _, a := range st.Accounts {
		if strings.EqualFold(a.Name, name) && strings.EqualFold(a.DomainID, domainID) {
			return true
		}
	}
	return false
}

// lbNetwork is CreateLoadBalancerRuleCmd.getNetworkId: networkid, else the
// owner's only isolated network in zoneid, else the address's network.
// createPublicLoadBalancer then uses the address's network whatever this
// answered, so only its refusals matter.
func lbNetwork(c *kernel.Call, ip *model.PublicIP) (*model.Network, *kernel.APIError) {
	p := c.Params
	if n := c.State.Network(p.Get("networkid")); n != nil && p.Get("networkid") != "" {
		return n, nil
	}
	if zoneID := p.Get("zoneid"); zoneID != "" {
		owner := c.Account
		if ip != nil {
			owner = c.State.Account(ip.AccountID)
		}
		nets := IsolatedNetworksOf(c.State, owner.ID, zoneID)
		switch len(nets) {
		case 0:
			return nil, kernel.ParamError("Account name=%s domain=%s doesn't have virtual networks in zone=%s",
				javaString(p.Values, "account"), c.State.Domain(owner.DomainID).Name, c.State.Zone(zoneID).Name)
		case 1:
			return nets[0], nil
		default:
			return nil, kernel.ParamError("Account has more than one isolated network in the zone")
		}
	}
	if ip == nil {
		return nil, kernel.ParamError("Either networkId or zoneId or publicIpId has to be specified")
	}
	if ip.NetworkID == "" {
		return nil, kernel.ParamError("IP address ID=%d is not associated with any network", ip.InternalID)
	}
	return c.State.Network(ip.NetworkID), nil
}

// createPublicLoadBalancer is the checks and the persisting of
// LoadBalancingRulesManagerImpl.createPublicLoadBalancerRule (port 53 on a
// source NAT address of an offering with Dns; checkIpForService(Lb)) and
// createPublicLoadBalancer (isLbServiceSupportedInNetwork, then
// validateFirewallRule). CreateLoadBalancerRuleCmd.getProtocol is always
// tcp: the protocol parameter is the rule's lb_protocol. The algorithm is
// checked by NetUtils.isValidAlgorithm only: the Lb capability
// SupportedLBAlgorithms is not consulted on this path.
func createPublicLoadBalancer(c *kernel.Call, ip *model.PublicIP, open bool) (*model.NetRule, *kernel.APIError) {
	p := c.Params
	src, dst := int(p.Int("publicport", 0)), int(p.Int("privateport", 0))
	algorithm := p.Get("algorithm")
	net := c.State.Network(ip.NetworkID)
	switch {
	case src == dnsPort && ip.SourceNAT && net != nil && Provides(c.State, net, "Dns"):
		return nil, kernel.ParamError("Error adding load balancer rule, cannot add port 53 with network service offering having DNS service and Source NAT.")
	case ip.StaticNAT:
		return nil, ruleConflict("Can't do load balance on ip address: %s", ip.Address)
	}
	cidrs, err := lbCIDRString(p.List("cidrlist"))
	if err != nil {
		return nil, err
	}
	if err := checkIPForService(c.State, ip, "Lb", ""); err != nil {
		return nil, err
	}
	switch {
	case !validPort(dst):
		return nil, kernel.ParamError("privatePort is an invalid value: %d", dst)
	case !validAlgorithm(algorithm):
		return nil, kernel.ParamError("Invalid algorithm: %s", algorithm)
	case net != nil && !Provides(c.State, net, "Lb"): // isLbServiceSupportedInNetwork
		return nil, kernel.ParamError("LB service is not supported in specified network id")
	}
	if err := validateFirewallRule(c, ip, &src, &src, "tcp", model.PurposeLB); err != nil {
		return nil, err
	}
	if src == haproxyStatsPort { // VirtualRouterElement.validateHAProxyLBRule
		return nil, kernel.ParamError("LB service provider cannot support this rule")
	}
	rule := newRule(c, &model.NetRule{Purpose: model.PurposeLB, IPID: ip.ID, NetworkID: ip.NetworkID, AccountID: ip.AccountID,
		Protocol: "tcp", StartPort: &src, EndPort: &src, Display: p.Bool("fordisplay", true),
		LB: &model.LBRule{Name: p.Get("name"), Description: p.Get("description"), Algorithm: algorithm, PrivatePort: dst,
			Protocol: strings.TrimSpace(strings.ToLower(p.Get("protocol"))), CIDRList: cidrs}})
	var conflict *kernel.APIError
	if open {
		conflict = createRuleForAllCidrs(c, ip, src, src, "tcp", rule.ID)
	}
	if conflict == nil {
		conflict = detectRulesConflict(c, rule)
	}
	if conflict != nil {
		revokeRelatedFirewallRule(c, rule.ID)
		removeRule(c, rule)
		if conflict.CSCode == csUnsupportedService {
			// createPublicLoadBalancerRule's catch keeps only rule conflicts and
			// invalid parameters; any other failure leaves no rule and this.
			return nil, kernel.InternalError("Failed to create load balancer rule: %s", rule.LB.Name)
		}
		return nil, conflict
	}
	return rule, nil
}

// lbCIDRString is LoadBalancingRulesManagerImpl.generateCidrString: each
// entry is trimmed and must be a CIDR or an address; they are kept space
// separated.
func lbCIDRString(list []string) (string, *kernel.APIError) {
	var out []string
	for _, cidr := range list {
		cidr = strings.TrimSpace(cidr)
		_, errAddr := netip.ParseAddr(cidr)
		if !validCIDR(cidr) && errAddr != nil {
			return "", kernel.ServerParamError("CIDR [%s] is invalid.", cidr)
		}
		out = append(out, cidr)
	}
	return strings.Join(out, " "), nil
}

// listLoadBalancerRules is LoadBalancingRulesManagerImpl.searchForLoadBalancers:
// oldest first, name exact, keyword in name or description.
func listLoadBalancerRules(c *kernel.Call) (any, error) {
	p := c.Params
	l := kernel.Lister[*model.NetRule]{Key: "loadbalancerrule", ID: (*model.NetRule).UUID, Name: func(r *model.NetRule) string { return r.LB.Name },
		Keyword: func(r *model.NetRule) []string { return []string{r.LB.Name, r.LB.Description} }, View: views.LBView,
		Owner: func(r *model.NetRule) string { return r.AccountID }} // AccountManagerImpl.buildACLSearchCriteria scopes it by projectid
	var lbs []*model.NetRule
	for _, r := range c.State.Rules {
		if r.Removed == nil && r.LB != nil {
			lbs = append(lbs, r)
		}
	}
	return l.Run(c, lbs, func(r *model.NetRule) bool {
		ip, _ := model.ByID(c.State.PublicIPs, r.IPID)
		return kernel.OptEq(p.Get("publicipid"), r.IPID) && kernel.OptEq(p.Get("networkid"), r.NetworkID) &&
			(p.Get("zoneid") == "" || (ip != nil && strings.EqualFold(ip.ZoneID, p.Get("zoneid")))) &&
			(p.Get("virtualmachineid") == "" || r.LB.HasVM(p.Get("virtualmachineid"))) &&
			displayed(p, r) &&
			tag.TaggedWith(c.State, "LoadBalancer", r.ID, p.Map("tags"))
	})
}

// applyLB is the end of LoadBalancingRulesManagerImpl.applyLoadBalancerRules
// once the virtual router took the configuration: the rule is Active, or
// back to Add when no VM is left behind it.
func applyLB(c *kernel.Call, r *model.NetRule) {
	r.State = model.RuleActive
	if len(r.LB.Members) == 0 {
		r.State = model.RuleAdd
	}
	c.Changed()
}

// deleteLB is LoadBalancingRulesManagerImpl.deleteLoadBalancerRule: the
// mappings and the rule go, unless a firewall rule still names it as
// related (then it stays revoked).
func deleteLB(c *kernel.Call, r *model.NetRule) {
	r.State, r.LB.Members = model.RuleRevoke, nil
	if relatedRuleOf(c.State, r.ID) == nil {
		removeRule(c, r)
	}
	c.Changed()
}

// lbJob is ruleJob for the load balancer commands, whose getSyncObjId
// looks the rule up as a load balancer.
func lbJob(c *kernel.Call, class, notFound string) (*kernel.AsyncJob, *model.NetRule, error) {
	job, r, err := ruleJob(c, "loadbalancer."+class, notFound, c.State.LBRule)
	if job != nil {
		job.InstanceType, job.InstanceID = "", "" // only create and delete name their rule
	}
	return job, r, err
}

// deleteLoadBalancerRule is DeleteLoadBalancerRuleCmd: the related firewall
// rule is revoked, then the rule deleted, applying the network's rules
// again: LoadBalancingRulesManagerImpl.applyLoadBalancerRules then gives a
// VPC address that no rule uses any more back to its VPC
// (unassignIPFromVpcNetwork), so another tier may take it.
func deleteLoadBalancerRule(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, r, err := lbJob(c, "DeleteLoadBalancerRuleCmd", "Unable to find load balancer rule: ")
	if err != nil {
		return nil, err
	}
	job.InstanceType, job.InstanceID = "FirewallRule", r.ID // getApiResourceType
	job.Run = func() (any, error) {
		revokeRelatedFirewallRule(c, r.ID)
		deleteLB(c, r)
		if ip, ok := model.ByID(c.State.PublicIPs, r.IPID); ok {
			unassignFromTier(c.State, ip)
		}
		return kernel.Success(), nil
	}
	return job, nil
}

// updateLoadBalancerRule is LoadBalancingRulesManagerImpl.updateLoadBalancerRule:
// name, description, algorithm (not validated there), fordisplay, protocol
// and cidrlist change; a changed algorithm or CIDR list is applied again.
// cidrlist is 4.22's (UpdateLoadBalancerRuleCmd, since = "4.22"): served as
// 4.20, the kernel drops it before this runs (Call.dropLaterParams), so the
// list stays and only a changed algorithm is applied again, as the method
// did before apache/cloudstack#11568.
func updateLoadBalancerRule(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, r, err := lbJob(c, "UpdateLoadBalancerRuleCmd", "Unable to find load balancer rule by ID ")
	if err != nil {
		return nil, err
	}
	p := c.Params
	job.Run = func() (any, error) {
		cidrs := r.LB.CIDRList
		if p.Has("cidrlist") {
			joined := strings.Join(p.List("cidrlist"), ",")
			if joined != "" && !validCIDRList(joined) {
				return nil, kernel.ParamError("Invalid CIDR list: %s", joined)
			}
			cidrs = joined
		}
		changed := (p.Has("algorithm") && p.Get("algorithm") != r.LB.Algorithm) || cidrs != r.LB.CIDRList
		for name, field := range map[string]*string{"name": &r.LB.Name, "description": &r.LB.Description, "algorithm": &r.LB.Algorithm} {
			if p.Has(name) {
				*field = p.Get(name)
			}
		}
		if strings.TrimSpace(p.Get("protocol")) != "" {
			r.LB.Protocol = p.Get("protocol")
		}
		if p.Has("fordisplay") {
			r.Display = p.Bool("fordisplay", true)
		}
		r.LB.CIDRList = cidrs
		if changed {
			applyLB(c, r)
		}
		c.Changed()
		return map[string]any{"loadbalancer": views.LBView(c, r)}, nil
	}
	return job, nil
}

// validCIDRList is NetUtils.isValidCidrList: comma separated IPv4 or IPv6
// CIDRs.
func validCIDRList(list string) bool {
	for _, cidr := range strings.Split(list, ",") {
		if !validCIDR(strings.TrimSpace(cidr)) {
			return false
		}
	}
	return true
}

// lbOpenFirewall is CreateLoadBalancerRuleCmd.getOpenFirewall: true by
// default, but false for an address of a VPC, where true is refused (the
// tier's network ACLs govern its traffic).
func lbOpenFirewall(c *kernel.Call, ip *model.PublicIP) (bool, *kernel.APIError) {
	vpc := ip.VPCID != ""
	if !c.Params.Has("openfirewall") {
		return !vpc, nil
	}
	open := c.Params.Bool("openfirewall", true)
	if vpc && open {
		return false, kernel.ParamError("Can't have openFirewall=true when IP address belongs to VPC")
	}
	return open, nil
}

// createOnTier is createPublicLoadBalancerRule around createPublicLoadBalancer:
// an address of the VPC of the rule's tier that no tier has yet is checked
// for Lb on the tier and associated with it (assignToVpcNtwk,
// associateIPToGuestNetwork), and given back when the rule fails
// (unassignIPFromVpcNetwork); an address of no network is refused.
func createOnTier(c *kernel.Call, ip *model.PublicIP, net *model.Network, open bool) (*model.NetRule, *kernel.APIError) {
	assigned := false
	if ip.NetworkID == "" && net != nil && net.VPCID != "" && strings.EqualFold(ip.VPCID, net.VPCID) {
		if err := checkIPForService(c.State, ip, "Lb", net.ID); err != nil {
			return nil, err
		}
		ip.NetworkID, assigned = net.ID, true
	}
	if ip.NetworkID == "" {
		return nil, kernel.ParamError("Ip address %s is not assigned to the network %s", ipString(c.State, ip), Describe(net))
	}
	rule, err := createPublicLoadBalancer(c, ip, open)
	if err != nil && assigned {
		unassignFromTier(c.State, ip)
	}
	return rule, err
}
