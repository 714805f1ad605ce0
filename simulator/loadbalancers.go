package simulator

import (
	"net/netip"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

func init() {
	register(
		command{name: "createLoadBalancerRule", async: createLoadBalancerRule},
		command{name: "listLoadBalancerRules", idKind: kindFirewallRule, sync: listLoadBalancerRules},
		command{name: "deleteLoadBalancerRule", idKind: kindFirewallRule, async: deleteLoadBalancerRule},
		command{name: "updateLoadBalancerRule", idKind: kindFirewallRule, async: updateLoadBalancerRule},
	)
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
func createLoadBalancerRule(c *Call) (*asyncJob, error) {
	ip, err := c.lbSourceIP()
	if err != nil {
		return nil, err
	}
	rule, err := c.createPublicLoadBalancer(ip)
	if err != nil {
		return nil, asCreateError(err)
	}
	open := c.Params.Bool("openfirewall", true)
	return &asyncJob{instanceType: "FirewallRule", instanceID: rule.ID, created: true,
		cmdClass: "org.apache.cloudstack.api.command.user.loadbalancer.CreateLoadBalancerRuleCmd",
		run: func() (any, error) {
			if open {
				c.applyRules(ip.ID, model.PurposeFirewall)
			}
			return map[string]any{"loadbalancer": c.lbView(rule)}, nil
		},
		fail: func(*APIError) { // execute's finally: revoke the firewall rule, delete the rule
			c.revokeRelatedFirewallRule(rule.ID)
			c.deleteLB(rule)
		}}, nil
}

// asCreateError is CreateLoadBalancerRuleCmd.create's catch: an
// InvalidParameterValueException becomes a ServerApiException PARAM_ERROR.
func asCreateError(err *APIError) *APIError {
	if err.Code == codeParamError {
		return serverParamError("%s", err.Text)
	}
	return err
}

// lbSourceIP is what CreateLoadBalancerRuleCmd.getEntityOwnerId (called
// before create) and getSourceIpAddressId decide: the owner comes from the
// public address, so without publicipid there is no rule to create (an
// account/domainid owner without an address ends in createPublicLoadBalancerRule's
// "can't find/allocate source IP").
func (c *Call) lbSourceIP() (*model.PublicIP, *APIError) {
	p := c.Params
	id := p.Get("publicipid")
	if id == "" {
		if p.Get("account") == "" || p.Get("domainid") == "" {
			return nil, paramError("Can't define IP owner. Either specify account/domainId or publicIpId")
		}
		if !hasAccount(c.st, p.Get("account"), p.Get("domainid")) {
			return nil, paramError("Unable to find account %s in domain ID=%d", p.Get("account"), c.st.Domain(p.Get("domainid")).InternalID)
		}
		if _, err := c.lbNetwork(nil); err != nil {
			return nil, asCreateError(err)
		}
		return nil, serverParamError("Unable to create load balance rule; can't find/allocate source IP")
	}
	ip, _ := model.ByID(c.st.PublicIPs, id)
	if ip.State != model.IPAllocated { // IpAddress.readyToUse
		return nil, paramError("Unable to create load balancer rule, invalid IP address ID %d", ip.InternalID)
	}
	if _, err := c.lbNetwork(ip); err != nil {
		return nil, asCreateError(err)
	}
	return ip, nil
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
func (c *Call) lbNetwork(ip *model.PublicIP) (*model.Network, *APIError) {
	p := c.Params
	if n := c.st.Network(p.Get("networkid")); n != nil && p.Get("networkid") != "" {
		return n, nil
	}
	if zoneID := p.Get("zoneid"); zoneID != "" {
		owner := c.Account
		if ip != nil {
			owner = c.st.Account(ip.AccountID)
		}
		nets := isolatedNetworksOf(c.st, owner.ID, zoneID)
		switch len(nets) {
		case 0:
			return nil, paramError("Account name=%s domain=%s doesn't have virtual networks in zone=%s",
				javaString(p.values, "account"), c.st.Domain(owner.DomainID).Name, c.st.Zone(zoneID).Name)
		case 1:
			return nets[0], nil
		default:
			return nil, paramError("Account has more than one isolated network in the zone")
		}
	}
	if ip == nil {
		return nil, paramError("Either networkId or zoneId or publicIpId has to be specified")
	}
	if ip.NetworkID == "" {
		return nil, paramError("IP address ID=%d is not associated with any network", ip.InternalID)
	}
	return c.st.Network(ip.NetworkID), nil
}

// createPublicLoadBalancer is the checks and the persisting of
// LoadBalancingRulesManagerImpl.createPublicLoadBalancerRule (port 53 on a
// source NAT address of an offering with Dns; checkIpForService(Lb)) and
// createPublicLoadBalancer (isLbServiceSupportedInNetwork, then
// validateFirewallRule). CreateLoadBalancerRuleCmd.getProtocol is always
// tcp: the protocol parameter is the rule's lb_protocol. The algorithm is
// checked by NetUtils.isValidAlgorithm only: the Lb capability
// SupportedLBAlgorithms is not consulted on this path.
func (c *Call) createPublicLoadBalancer(ip *model.PublicIP) (*model.NetRule, *APIError) {
	p := c.Params
	src, dst := int(p.Int("publicport", 0)), int(p.Int("privateport", 0))
	algorithm := p.Get("algorithm")
	net := c.st.Network(ip.NetworkID)
	switch {
	case src == dnsPort && ip.SourceNAT && net != nil && networkProvides(c.st, net, "Dns"):
		return nil, paramError("Error adding load balancer rule, cannot add port 53 with network service offering having DNS service and Source NAT.")
	case ip.StaticNAT:
		return nil, ruleConflict("Can't do load balance on ip address: %s", ip.Address)
	}
	cidrs, err := lbCIDRString(p.List("cidrlist"))
	if err != nil {
		return nil, err
	}
	if err := checkIPForService(c.st, ip, "Lb", ""); err != nil {
		return nil, err
	}
	switch {
	case !validPort(dst):
		return nil, paramError("privatePort is an invalid value: %d", dst)
	case !validAlgorithm(algorithm):
		return nil, paramError("Invalid algorithm: %s", algorithm)
	case net != nil && !networkProvides(c.st, net, "Lb"): // isLbServiceSupportedInNetwork
		return nil, paramError("LB service is not supported in specified network id")
	}
	if err := c.validateFirewallRule(ip, &src, &src, "tcp", model.PurposeLB); err != nil {
		return nil, err
	}
	if src == haproxyStatsPort { // VirtualRouterElement.validateHAProxyLBRule
		return nil, paramError("LB service provider cannot support this rule")
	}
	rule := c.newRule(&model.NetRule{Purpose: model.PurposeLB, IPID: ip.ID, NetworkID: ip.NetworkID, AccountID: ip.AccountID,
		Protocol: "tcp", StartPort: &src, EndPort: &src, Display: p.Bool("fordisplay", true),
		LB: &model.LBRule{Name: p.Get("name"), Description: p.Get("description"), Algorithm: algorithm, PrivatePort: dst,
			Protocol: strings.TrimSpace(strings.ToLower(p.Get("protocol"))), CIDRList: cidrs}})
	var conflict *APIError
	if p.Bool("openfirewall", true) {
		conflict = c.createRuleForAllCidrs(ip, src, src, "tcp", rule.ID)
	}
	if conflict == nil {
		conflict = c.detectRulesConflict(rule)
	}
	if conflict != nil {
		c.revokeRelatedFirewallRule(rule.ID)
		c.removeRule(rule)
		if conflict.CSCode == csUnsupportedService {
			// createPublicLoadBalancerRule's catch keeps only rule conflicts and
			// invalid parameters; any other failure leaves no rule and this.
			return nil, internalError("Failed to create load balancer rule: %s", rule.LB.Name)
		}
		return nil, conflict
	}
	return rule, nil
}

// lbCIDRString is LoadBalancingRulesManagerImpl.generateCidrString: each
// entry is trimmed and must be a CIDR or an address; they are kept space
// separated.
func lbCIDRString(list []string) (string, *APIError) {
	var out []string
	for _, cidr := range list {
		cidr = strings.TrimSpace(cidr)
		_, errAddr := netip.ParseAddr(cidr)
		if !validCIDR(cidr) && errAddr != nil {
			return "", serverParamError("CIDR [%s] is invalid.", cidr)
		}
		out = append(out, cidr)
	}
	return strings.Join(out, " "), nil
}

// listLoadBalancerRules is LoadBalancingRulesManagerImpl.searchForLoadBalancers:
// oldest first, name exact, keyword in name or description.
func listLoadBalancerRules(c *Call) (any, error) {
	p := c.Params
	l := lister[*model.NetRule]{key: "loadbalancerrule", id: (*model.NetRule).UUID, name: func(r *model.NetRule) string { return r.LB.Name },
		keyword: func(r *model.NetRule) []string { return []string{r.LB.Name, r.LB.Description} }, view: (*Call).lbView}
	var lbs []*model.NetRule
	for _, r := range c.st.Rules {
		if r.Removed == nil && r.LB != nil {
			lbs = append(lbs, r)
		}
	}
	return l.run(c, lbs, func(r *model.NetRule) bool {
		ip, _ := model.ByID(c.st.PublicIPs, r.IPID)
		return optEq(p.Get("publicipid"), r.IPID) && optEq(p.Get("networkid"), r.NetworkID) &&
			(p.Get("zoneid") == "" || (ip != nil && strings.EqualFold(ip.ZoneID, p.Get("zoneid")))) &&
			(p.Get("virtualmachineid") == "" || r.LB.HasVM(p.Get("virtualmachineid"))) &&
			displayed(p, r) &&
			taggedWith(c.st, "LoadBalancer", r.ID, p.Map("tags"))
	})
}

// lbView is ApiLoadBalancerFirewallResponseServiceImpl.createLoadBalancerResponse.
func (c *Call) lbView(r *model.NetRule) map[string]any {
	v := map[string]any{"id": r.ID, "name": r.LB.Name, "publicport": model.Itoa(*r.StartPort),
		"privateport": model.Itoa(r.LB.PrivatePort), "algorithm": r.LB.Algorithm, "fordisplay": r.Display,
		"state": r.ViewState(), "networkid": r.NetworkID, "tags": c.resourceTagViews("LoadBalancer", r.ID)}
	for k, s := range map[string]string{"description": r.LB.Description, "protocol": r.LB.Protocol, "cidrlist": r.LB.CIDRList} {
		if s != "" {
			v[k] = s
		}
	}
	if ip, ok := model.ByID(c.st.PublicIPs, r.IPID); ok {
		v["publicipid"], v["publicip"] = ip.ID, ip.Address
		if z := c.st.Zone(ip.ZoneID); z != nil {
			v["zoneid"], v["zonename"] = z.ID, z.Name
		}
	}
	c.addOwner(v, r.AccountID)
	return v
}

// applyLB is the end of LoadBalancingRulesManagerImpl.applyLoadBalancerRules
// once the virtual router took the configuration: the rule is Active, or
// back to Add when no VM is left behind it.
func (c *Call) applyLB(r *model.NetRule) {
	r.State = model.RuleActive
	if len(r.LB.Members) == 0 {
		r.State = model.RuleAdd
	}
	c.changed()
}

// deleteLB is LoadBalancingRulesManagerImpl.deleteLoadBalancerRule: the
// mappings and the rule go, unless a firewall rule still names it as
// related (then it stays revoked).
func (c *Call) deleteLB(r *model.NetRule) {
	r.State, r.LB.Members = model.RuleRevoke, nil
	if relatedRuleOf(c.st, r.ID) == nil {
		c.removeRule(r)
	}
	c.changed()
}

// lbJob is ruleJob for the load balancer commands, whose getSyncObjId
// looks the rule up as a load balancer.
func (c *Call) lbJob(class, notFound string) (*asyncJob, *model.NetRule, error) {
	job, r, err := c.ruleJob("loadbalancer."+class, notFound, c.st.LBRule)
	if job != nil {
		job.instanceType, job.instanceID = "", "" // only create and delete name their rule
	}
	return job, r, err
}

// deleteLoadBalancerRule is DeleteLoadBalancerRuleCmd: the related firewall
// rule is revoked, then the rule deleted.
func deleteLoadBalancerRule(c *Call) (*asyncJob, error) {
	job, r, err := c.lbJob("DeleteLoadBalancerRuleCmd", "Unable to find load balancer rule: ")
	if err != nil {
		return nil, err
	}
	job.instanceType, job.instanceID = "FirewallRule", r.ID // getApiResourceType
	job.run = func() (any, error) {
		c.revokeRelatedFirewallRule(r.ID)
		c.deleteLB(r)
		return success(), nil
	}
	return job, nil
}

// updateLoadBalancerRule is LoadBalancingRulesManagerImpl.updateLoadBalancerRule:
// name, description, algorithm (not validated there), fordisplay, protocol
// and cidrlist change; a changed algorithm or CIDR list is applied again.
func updateLoadBalancerRule(c *Call) (*asyncJob, error) {
	job, r, err := c.lbJob("UpdateLoadBalancerRuleCmd", "Unable to find load balancer rule by ID ")
	if err != nil {
		return nil, err
	}
	p := c.Params
	job.run = func() (any, error) {
		cidrs := r.LB.CIDRList
		if p.Has("cidrlist") {
			joined := strings.Join(p.List("cidrlist"), ",")
			if joined != "" && !validCIDRList(joined) {
				return nil, paramError("Invalid CIDR list: %s", joined)
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
			c.applyLB(r)
		}
		c.changed()
		return map[string]any{"loadbalancer": c.lbView(r)}, nil
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
