package simulator

import (
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// vpcEnv is a VM environment with a VPC (10.2.0.0/16), a custom ACL list
// and one tier (10.2.1.0/24) on the default VPC tier offering.
type vpcEnv struct {
	*vmEnv
	vpc, acl, tier, tierOffering string
}

func newVPCEnv(t *testing.T) *vpcEnv {
	t.Helper()
	e := &vpcEnv{vmEnv: newVMEnv(t, Options{})}
	e.vpc = e.createVPC(t, "vpc1", "10.2.0.0/16").Id
	acl, err := e.cs.NetworkACL.CreateNetworkACLList(e.cs.NetworkACL.NewCreateNetworkACLListParams("web", e.vpc))
	if err != nil {
		t.Fatalf("createNetworkACLList: %v", err)
	}
	e.acl = acl.Id
	op := e.cs.NetworkOffering.NewListNetworkOfferingsParams()
	op.SetForvpc(true)
	offs, err := e.cs.NetworkOffering.ListNetworkOfferings(op)
	if err != nil || offs.Count != 1 || offs.NetworkOfferings[0].Name != "DefaultIsolatedNetworkOfferingForVpcNetworks" {
		t.Fatalf("listNetworkOfferings forvpc=true: %+v, %v", offs, err)
	}
	e.tierOffering = offs.NetworkOfferings[0].Id
	tier, err := e.cs.Network.CreateNetwork(e.tierParams("tier1", "10.2.1.1", e.acl))
	if err != nil {
		t.Fatalf("createNetwork on the VPC: %v", err)
	}
	e.tier = tier.Id
	return e
}

func (e *vpcEnv) createVPC(t *testing.T, name, cidr string) *cloudstack.CreateVPCResponse {
	t.Helper()
	offs, err := e.cs.VPC.ListVPCOfferings(e.cs.VPC.NewListVPCOfferingsParams())
	if err != nil || offs.Count != 1 || offs.VPCOfferings[0].Name != "Default VPC offering" {
		t.Fatalf("listVPCOfferings: %+v, %v", offs, err)
	}
	v, err := e.cs.VPC.CreateVPC(e.cs.VPC.NewCreateVPCParams(cidr, name, name, offs.VPCOfferings[0].Id, e.zone))
	if err != nil {
		t.Fatalf("createVPC: %v", err)
	}
	return v
}

func (e *vpcEnv) tierParams(name, gateway, acl string) *cloudstack.CreateNetworkParams {
	p := e.cs.Network.NewCreateNetworkParams(name, e.tierOffering, e.zone)
	p.SetVpcid(e.vpc)
	p.SetGateway(gateway)
	p.SetNetmask("255.255.255.0")
	if acl != "" {
		p.SetAclid(acl)
	}
	return p
}

func (e *vpcEnv) vpcAddress(t *testing.T) *cloudstack.AssociateIpAddressResponse {
	t.Helper()
	p := e.cs.Address.NewAssociateIpAddressParams()
	p.SetVpcid(e.vpc)
	ip, err := e.cs.Address.AssociateIpAddress(p)
	if err != nil {
		t.Fatalf("associateIpAddress vpcid: %v", err)
	}
	return ip
}

// TestVPCCreateAndSourceNAT: createVPC answers the VPC Enabled with the
// owner's network domain and the offering's services, and its router's
// source NAT address belongs to the VPC, not to a tier.
func TestVPCCreateAndSourceNAT(t *testing.T) {
	e := &vpcEnv{vmEnv: newVMEnv(t, Options{})}
	v := e.createVPC(t, "vpc1", "10.2.0.0/16")
	if v.State != "Enabled" || v.Cidr != "10.2.0.0/16" || v.Networkdomain != "cs2cloud.internal" || len(v.Service) == 0 {
		t.Fatalf("createVPC = %+v", v)
	}
	p := e.cs.Address.NewListPublicIpAddressesParams()
	p.SetVpcid(v.Id)
	ips, err := e.cs.Address.ListPublicIpAddresses(p)
	if err != nil || ips.Count != 1 || !ips.PublicIpAddresses[0].Issourcenat || ips.PublicIpAddresses[0].Associatednetworkid != "" ||
		ips.PublicIpAddresses[0].Vpcid != v.Id {
		t.Fatalf("the VPC's addresses: %+v, %v", ips, err)
	}
	l, err := e.cs.VPC.ListVPCs(e.cs.VPC.NewListVPCsParams())
	if err != nil || l.Count != 1 || l.VPCs[0].Id != v.Id {
		t.Fatalf("listVPCs = %+v, %v", l, err)
	}
	_, err = e.cs.VPC.CreateVPC(e.cs.VPC.NewCreateVPCParams("", "x", "x", v.Vpcofferingid, e.zone))
	wantAPIError(t, err, 431, "VPC cidr or cidr size must be specified")
	_, err = e.cs.VPC.CreateVPC(e.cs.VPC.NewCreateVPCParams("8.8.0.0/16", "x", "x", v.Vpcofferingid, e.zone))
	wantAPIError(t, err, 431, "Guest Cidr 8.8.0.0/16 is not RFC1918 compliant")
}

// TestVPCTierRules: a tier's CIDR must lie inside the VPC's and cross no
// other tier's, its gateway and netmask are required, and offerings for
// VPCs and for networks of their own do not mix.
func TestVPCTierRules(t *testing.T) {
	e := newVPCEnv(t)
	n := e.network(t, e.tier)
	if n.Vpcid != e.vpc || n.Aclid != e.acl || n.Cidr != "10.2.1.0/24" || n.Networkdomain != "cs2cloud.internal" {
		t.Fatalf("the tier = %+v", n)
	}
	_, err := e.cs.Network.CreateNetwork(e.tierParams("out", "10.3.1.1", ""))
	wantAPIError(t, err, 431, "Network cidr 10.3.1.0/24 is not within vpc")
	_, err = e.cs.Network.CreateNetwork(e.tierParams("same", "10.2.1.129", ""))
	wantAPIError(t, err, 431, "crosses other network cidr")
	p := e.cs.Network.NewCreateNetworkParams("nogw", e.tierOffering, e.zone)
	p.SetVpcid(e.vpc)
	_, err = e.cs.Network.CreateNetwork(p)
	wantAPIError(t, err, 431, "Gateway/netmask are required when create network for VPC")
	isolated := e.network(t, e.net).Networkofferingid
	p = e.tierParams("isolated", "10.2.2.1", "")
	p.SetNetworkofferingid(isolated)
	_, err = e.cs.Network.CreateNetwork(p)
	wantAPIError(t, err, 431, "Network offering can't be used for VPC networks")
	p = e.cs.Network.NewCreateNetworkParams("novpc", e.tierOffering, e.zone)
	_, err = e.cs.Network.CreateNetwork(p)
	wantAPIError(t, err, 431, "Network offering can be used for VPC networks only")
	lp := e.cs.Network.NewListNetworksParams()
	lp.SetVpcid(e.vpc)
	if l, err := e.cs.Network.ListNetworks(lp); err != nil || l.Count != 1 || l.Networks[0].Id != e.tier {
		t.Fatalf("listNetworks vpcid = %+v, %v", l, err)
	}
}

func (e *vpcEnv) network(t *testing.T, id string) *cloudstack.Network {
	t.Helper()
	n, _, err := e.cs.Network.GetNetworkByID(id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestVPCNetworkACLs: rules go on a custom list only, are checked as
// NetworkACLServiceImpl checks them, and a list a tier uses stays.
func TestVPCNetworkACLs(t *testing.T) {
	e := newVPCEnv(t)
	p := e.cs.NetworkACL.NewCreateNetworkACLParams("tcp")
	p.SetAclid(e.acl)
	p.SetStartport(22)
	rule, err := e.cs.NetworkACL.CreateNetworkACL(p)
	if err != nil || rule.State != "Active" || rule.Startport != "22" || rule.Endport != "22" || rule.Number != 1 ||
		rule.Traffictype != "Ingress" || rule.Action != "Allow" || rule.Cidrlist != "0.0.0.0/0,::/0" {
		t.Fatalf("createNetworkACL = %+v, %v", rule, err)
	}
	p = e.cs.NetworkACL.NewCreateNetworkACLParams("foo")
	p.SetAclid(e.acl)
	_, err = e.cs.NetworkACL.CreateNetworkACL(p)
	wantAPIError(t, err, 431, "Invalid protocol [foo]. Expected one of: [tcp,udp,icmp,all]")
	lists, err := e.cs.NetworkACL.ListNetworkACLLists(e.cs.NetworkACL.NewListNetworkACLListsParams())
	if err != nil || lists.Count != 3 {
		t.Fatalf("listNetworkACLLists = %+v, %v", lists, err)
	}
	for _, l := range lists.NetworkACLLists {
		if l.Name != "default_allow" {
			continue
		}
		p = e.cs.NetworkACL.NewCreateNetworkACLParams("all")
		p.SetAclid(l.Id)
		_, err = e.cs.NetworkACL.CreateNetworkACL(p)
		wantAPIError(t, err, 431, "Default ACL cannot be modified")
	}
	_, err = e.cs.NetworkACL.DeleteNetworkACLList(e.cs.NetworkACL.NewDeleteNetworkACLListParams(e.acl))
	wantJobError(t, err, 530, "ACL is still associated with 1 tier(s)")
	lp := e.cs.NetworkACL.NewListNetworkACLsParams()
	lp.SetNetworkid(e.tier)
	if l, err := e.cs.NetworkACL.ListNetworkACLs(lp); err != nil || l.Count != 1 || l.NetworkACLs[0].Id != rule.Id {
		t.Fatalf("listNetworkACLs networkid = %+v, %v", l, err)
	}
}

// TestVPCStaticNATAndLoadBalancer: an address of the VPC gets its tier
// from enableStaticNat's networkid or from the load balancer rule's;
// openfirewall is refused and the HAProxy stats port is not one the VPC
// router serves; deleting its last rule gives the address back to the VPC.
func TestVPCStaticNATAndLoadBalancer(t *testing.T) {
	e := newVPCEnv(t)
	dp := e.params("cpivm-tier")
	dp.SetNetworkids([]string{e.tier})
	vm := e.deploy(t, dp)
	nat := e.vpcAddress(t)
	if nat.Issourcenat || nat.Associatednetworkid != "" || nat.Vpcid != e.vpc {
		t.Fatalf("associateIpAddress vpcid = %+v", nat)
	}
	_, err := e.cs.NAT.EnableStaticNat(e.cs.NAT.NewEnableStaticNatParams(nat.Id, vm.Id))
	wantAPIError(t, err, 431, "as IP is not associated with any network and no networkId is passed in")
	np := e.cs.NAT.NewEnableStaticNatParams(nat.Id, vm.Id)
	np.SetNetworkid(e.tier)
	if _, err := e.cs.NAT.EnableStaticNat(np); err != nil {
		t.Fatalf("enableStaticNat networkid: %v", err)
	}
	if ip, _, err := e.cs.Address.GetPublicIpAddressByID(nat.Id); err != nil || ip.Associatednetworkid != e.tier || !ip.Isstaticnat {
		t.Fatalf("the static NAT address = %+v, %v", ip, err)
	}

	lbIP := e.vpcAddress(t)
	lb := func(port int, open bool) error {
		p := e.cs.LoadBalancer.NewCreateLoadBalancerRuleParams("roundrobin", "web", 80, port)
		p.SetPublicipid(lbIP.Id)
		p.SetNetworkid(e.tier)
		if open {
			p.SetOpenfirewall(true)
		}
		_, err := e.cs.LoadBalancer.CreateLoadBalancerRule(p)
		return err
	}
	wantAPIError(t, lb(80, true), 431, "Can't have openFirewall=true when IP address belongs to VPC")
	wantAPIError(t, lb(8081, false), 431, "LB service provider cannot support this rule")
	if ip, _, _ := e.cs.Address.GetPublicIpAddressByID(lbIP.Id); ip.Associatednetworkid != "" {
		t.Fatalf("a refused rule left the address on tier %s", ip.Associatednetworkid)
	}
	if err := lb(80, false); err != nil {
		t.Fatalf("createLoadBalancerRule on the VPC address: %v", err)
	}
	fp := e.cs.Firewall.NewListFirewallRulesParams()
	fp.SetIpaddressid(lbIP.Id)
	if fw, err := e.cs.Firewall.ListFirewallRules(fp); err != nil || fw.Count != 0 {
		t.Fatalf("firewall rules on the VPC address = %+v, %v", fw, err)
	}
	if ip, _, _ := e.cs.Address.GetPublicIpAddressByID(lbIP.Id); ip.Associatednetworkid != e.tier {
		t.Fatalf("the load-balanced address is on %q, want the tier", ip.Associatednetworkid)
	}
	rules, err := e.cs.LoadBalancer.ListLoadBalancerRules(e.cs.LoadBalancer.NewListLoadBalancerRulesParams())
	if err != nil || rules.Count != 1 {
		t.Fatalf("listLoadBalancerRules = %+v, %v", rules, err)
	}
	if _, err := e.cs.LoadBalancer.DeleteLoadBalancerRule(e.cs.LoadBalancer.NewDeleteLoadBalancerRuleParams(rules.LoadBalancerRules[0].Id)); err != nil {
		t.Fatalf("deleteLoadBalancerRule: %v", err)
	}
	if ip, _, _ := e.cs.Address.GetPublicIpAddressByID(lbIP.Id); ip.Associatednetworkid != "" || ip.Vpcid != e.vpc {
		t.Fatalf("the address of no rule any more is on %q of VPC %q, want the VPC's alone", ip.Associatednetworkid, ip.Vpcid)
	}
}

// TestVPCDelete: a VPC with a tier stays; one without goes with its
// addresses.
func TestVPCDelete(t *testing.T) {
	e := newVPCEnv(t)
	_, err := e.cs.VPC.DeleteVPC(e.cs.VPC.NewDeleteVPCParams(e.vpc))
	wantJobError(t, err, 431, "as its used by 1 networks")
	empty := e.createVPC(t, "vpc2", "10.4.0.0/16")
	if _, err := e.cs.VPC.DeleteVPC(e.cs.VPC.NewDeleteVPCParams(empty.Id)); err != nil {
		t.Fatalf("deleteVPC: %v", err)
	}
	p := e.cs.Address.NewListPublicIpAddressesParams()
	p.SetVpcid(empty.Id)
	if ips, err := e.cs.Address.ListPublicIpAddresses(p); err != nil || ips.Count != 0 {
		t.Fatalf("addresses of the deleted VPC = %+v, %v", ips, err)
	}
	if l, err := e.cs.VPC.ListVPCs(e.cs.VPC.NewListVPCsParams()); err != nil || l.Count != 1 || l.VPCs[0].Id != e.vpc {
		t.Fatalf("listVPCs = %+v, %v", l, err)
	}
}

// TestCLIVPC drives the VPC commands with Debian's cloudstack CLI.
func TestCLIVPC(t *testing.T) {
	e := newVPCEnv(t)
	got := cliJSON(t, e.testSim, "listVPCs", "name=vpc")
	if got["count"] != 1.0 {
		t.Fatalf("listVPCs name=vpc = %v", got)
	}
	vpc := got["vpc"].([]any)[0].(map[string]any)
	tiers, _ := vpc["network"].([]any)
	if vpc["id"] != e.vpc || len(tiers) != 1 || tiers[0].(map[string]any)["id"] != e.tier {
		t.Fatalf("listVPCs = %v", vpc)
	}
	rule := cliJSON(t, e.testSim, "createNetworkACL", "networkid="+e.tier, "protocol=icmp", "traffictype=egress",
		"action=deny")["networkacl"].(map[string]any)
	if rule["aclid"] != e.acl || rule["icmptype"] != -1.0 || rule["icmpcode"] != -1.0 || rule["traffictype"] != "Egress" ||
		rule["action"] != "Deny" {
		t.Fatalf("createNetworkACL = %v", rule)
	}
	ip := cliJSON(t, e.testSim, "associateIpAddress", "vpcid="+e.vpc)["ipaddress"].(map[string]any)
	if ip["vpcid"] != e.vpc || ip["associatednetworkid"] != nil {
		t.Fatalf("associateIpAddress vpcid = %v", ip)
	}
}

// TestVPCStartedByItsFirstTierVM: a VPC created with start=false has no
// router and so no source NAT address until a VM starts on a tier of it.
func TestVPCStartedByItsFirstTierVM(t *testing.T) {
	e := &vpcEnv{vmEnv: newVMEnv(t, Options{})}
	offs, err := e.cs.VPC.ListVPCOfferings(e.cs.VPC.NewListVPCOfferingsParams())
	if err != nil || offs.Count != 1 {
		t.Fatalf("listVPCOfferings: %+v, %v", offs, err)
	}
	p := e.cs.VPC.NewCreateVPCParams("10.5.0.0/16", "later", "later", offs.VPCOfferings[0].Id, e.zone)
	p.SetStart(false)
	v, err := e.cs.VPC.CreateVPC(p)
	if err != nil {
		t.Fatalf("createVPC start=false: %v", err)
	}
	e.vpc = v.Id
	sourceNAT := func() int {
		lp := e.cs.Address.NewListPublicIpAddressesParams()
		lp.SetVpcid(v.Id)
		lp.SetIssourcenat(true)
		ips, err := e.cs.Address.ListPublicIpAddresses(lp)
		if err != nil {
			t.Fatal(err)
		}
		return ips.Count
	}
	if n := sourceNAT(); n != 0 {
		t.Fatalf("a VPC not started has %d source NAT addresses", n)
	}
	op := e.cs.NetworkOffering.NewListNetworkOfferingsParams()
	op.SetForvpc(true)
	offerings, err := e.cs.NetworkOffering.ListNetworkOfferings(op)
	if err != nil || offerings.Count == 0 {
		t.Fatalf("listNetworkOfferings forvpc: %+v, %v", offerings, err)
	}
	e.tierOffering = offerings.NetworkOfferings[0].Id
	tier, err := e.cs.Network.CreateNetwork(e.tierParams("t", "10.5.1.1", ""))
	if err != nil {
		t.Fatal(err)
	}
	dp := e.params("cpivm-first-on-tier")
	dp.SetNetworkids([]string{tier.Id})
	e.deploy(t, dp)
	if n := sourceNAT(); n != 1 {
		t.Fatalf("after the first VM on its tier the VPC has %d source NAT addresses, want 1", n)
	}
}

// TestVPCFirewallRules: 4.22 takes no firewall rule on a VPC's address.
// One no tier holds (the source NAT address, a fresh one) has no network
// (CreateFirewallRuleCmd.getNetworkId); one a tier holds for static NAT or
// a load balancer is refused by checkIpForService, the tier offering having
// no Firewall service - so is a static NAT rule that would open the
// firewall. Nothing is left behind to list.
func TestVPCFirewallRules(t *testing.T) {
	e := newVPCEnv(t)
	fw := func(ipID string) error {
		p := e.cs.Firewall.NewCreateFirewallRuleParams(ipID, "tcp")
		p.SetStartport(22)
		_, err := e.cs.Firewall.CreateFirewallRule(p)
		return err
	}
	lp := e.cs.Address.NewListPublicIpAddressesParams()
	lp.SetVpcid(e.vpc)
	lp.SetIssourcenat(true)
	snat, err := e.cs.Address.ListPublicIpAddresses(lp)
	if err != nil || snat.Count != 1 {
		t.Fatalf("the VPC's source NAT address: %+v, %v", snat, err)
	}
	const noNetwork = "as IP is not associated with any network and no networkId is passed in"
	wantAPIError(t, fw(snat.PublicIpAddresses[0].Id), 431, noNetwork)
	wantAPIError(t, fw(e.vpcAddress(t).Id), 431, noNetwork)

	dp := e.params("cpivm-fw")
	dp.SetNetworkids([]string{e.tier})
	vm := e.deploy(t, dp)
	nat := e.vpcAddress(t)
	np := e.cs.NAT.NewEnableStaticNatParams(nat.Id, vm.Id)
	np.SetNetworkid(e.tier)
	if _, err := e.cs.NAT.EnableStaticNat(np); err != nil {
		t.Fatalf("enableStaticNat networkid: %v", err)
	}
	noProvider := "There is no new provider for IP " + nat.Ipaddress + " of service Firewall!"
	wantAPIError(t, fw(nat.Id), 431, noProvider)
	_, err = e.cs.NAT.CreateIpForwardingRule(e.cs.NAT.NewCreateIpForwardingRuleParams(nat.Id, "tcp", 22))
	wantAPIError(t, err, 431, noProvider)
	closed := e.rawAsync(t, map[string]string{"command": "createIpForwardingRule", "ipaddressid": nat.Id, "protocol": "tcp",
		"startport": "22", "openfirewall": "false"})
	if closed["jobstatus"].(float64) != 1 {
		t.Fatalf("createIpForwardingRule openfirewall=false on the VPC address = %+v", closed)
	}

	lbIP := e.vpcAddress(t)
	lb := e.cs.LoadBalancer.NewCreateLoadBalancerRuleParams("roundrobin", "web", 80, 80)
	lb.SetPublicipid(lbIP.Id)
	lb.SetNetworkid(e.tier)
	if _, err := e.cs.LoadBalancer.CreateLoadBalancerRule(lb); err != nil {
		t.Fatalf("createLoadBalancerRule on the VPC address: %v", err)
	}
	wantAPIError(t, fw(lbIP.Id), 431, "There is no new provider for IP "+lbIP.Ipaddress+" of service Firewall!")

	for _, by := range []func(*cloudstack.ListFirewallRulesParams){
		func(p *cloudstack.ListFirewallRulesParams) { p.SetNetworkid(e.tier) },
		func(p *cloudstack.ListFirewallRulesParams) { p.SetIpaddressid(nat.Id) },
		func(p *cloudstack.ListFirewallRulesParams) { p.SetIpaddressid(lbIP.Id) },
	} {
		p := e.cs.Firewall.NewListFirewallRulesParams()
		by(p)
		if l, err := e.cs.Firewall.ListFirewallRules(p); err != nil || l.Count != 0 {
			t.Fatalf("listFirewallRules in the VPC = %+v, %v", l, err)
		}
	}
}
