package network_test

import (
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// vpcEnv is a VM environment with a VPC (10.2.0.0/16), a custom ACL list
// and one tier (10.2.1.0/24) on the default VPC tier offering.
type vpcEnv struct {
	*vmEnv
	vpc, acl, tier, tierOffering string
}

func newVPCEnv(t *testing.T) *vpcEnv {
	t.Helper()
	e := &vpcEnv{vmEnv: &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}}
	e.vpc = e.createVPC(t, "vpc1", "10.2.0.0/16").Id
	acl, err := e.CS.NetworkACL.CreateNetworkACLList(e.CS.NetworkACL.NewCreateNetworkACLListParams("web", e.vpc))
	if err != nil {
		t.Fatalf("createNetworkACLList: %v", err)
	}
	e.acl = acl.Id
	op := e.CS.NetworkOffering.NewListNetworkOfferingsParams()
	op.SetForvpc(true)
	offs, err := e.CS.NetworkOffering.ListNetworkOfferings(op)
	if err != nil || offs.Count != 1 || offs.NetworkOfferings[0].Name != "DefaultIsolatedNetworkOfferingForVpcNetworks" {
		t.Fatalf("listNetworkOfferings forvpc=true: %+v, %v", offs, err)
	}
	e.tierOffering = offs.NetworkOfferings[0].Id
	tier, err := e.CS.Network.CreateNetwork(e.tierParams("tier1", "10.2.1.1", e.acl))
	if err != nil {
		t.Fatalf("createNetwork on the VPC: %v", err)
	}
	e.tier = tier.Id
	return e
}

func (e *vpcEnv) createVPC(t *testing.T, name, cidr string) *cloudstack.CreateVPCResponse {
	t.Helper()
	offs, err := e.CS.VPC.ListVPCOfferings(e.CS.VPC.NewListVPCOfferingsParams())
	if err != nil || offs.Count != 1 || offs.VPCOfferings[0].Name != "Default VPC offering" {
		t.Fatalf("listVPCOfferings: %+v, %v", offs, err)
	}
	v, err := e.CS.VPC.CreateVPC(e.CS.VPC.NewCreateVPCParams(cidr, name, name, offs.VPCOfferings[0].Id, e.Zone))
	if err != nil {
		t.Fatalf("createVPC: %v", err)
	}
	return v
}

func (e *vpcEnv) tierParams(name, gateway, acl string) *cloudstack.CreateNetworkParams {
	p := e.CS.Network.NewCreateNetworkParams(name, e.tierOffering, e.Zone)
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
	p := e.CS.Address.NewAssociateIpAddressParams()
	p.SetVpcid(e.vpc)
	ip, err := e.CS.Address.AssociateIpAddress(p)
	if err != nil {
		t.Fatalf("associateIpAddress vpcid: %v", err)
	}
	return ip
}

// TestVPCCreateAndSourceNAT: createVPC answers the VPC Enabled with the
// owner's network domain and the offering's services, and its router's
// source NAT address belongs to the VPC, not to a tier.
func TestVPCCreateAndSourceNAT(t *testing.T) {
	e := &vpcEnv{vmEnv: &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}}
	v := e.createVPC(t, "vpc1", "10.2.0.0/16")
	if v.State != "Enabled" || v.Cidr != "10.2.0.0/16" || v.Networkdomain != "cs2cloud.internal" || len(v.Service) == 0 {
		t.Fatalf("createVPC = %+v", v)
	}
	p := e.CS.Address.NewListPublicIpAddressesParams()
	p.SetVpcid(v.Id)
	ips, err := e.CS.Address.ListPublicIpAddresses(p)
	if err != nil || ips.Count != 1 || !ips.PublicIpAddresses[0].Issourcenat || ips.PublicIpAddresses[0].Associatednetworkid != "" ||
		ips.PublicIpAddresses[0].Vpcid != v.Id {
		t.Fatalf("the VPC's addresses: %+v, %v", ips, err)
	}
	l, err := e.CS.VPC.ListVPCs(e.CS.VPC.NewListVPCsParams())
	if err != nil || l.Count != 1 || l.VPCs[0].Id != v.Id {
		t.Fatalf("listVPCs = %+v, %v", l, err)
	}
	_, err = e.CS.VPC.CreateVPC(e.CS.VPC.NewCreateVPCParams("", "x", "x", v.Vpcofferingid, e.Zone))
	simtesting.WantAPIError(t, err, 431, "VPC cidr or cidr size must be specified")
	_, err = e.CS.VPC.CreateVPC(e.CS.VPC.NewCreateVPCParams("8.8.0.0/16", "x", "x", v.Vpcofferingid, e.Zone))
	simtesting.WantAPIError(t, err, 431, "Guest Cidr 8.8.0.0/16 is not RFC1918 compliant")
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
	_, err := e.CS.Network.CreateNetwork(e.tierParams("out", "10.3.1.1", ""))
	simtesting.WantAPIError(t, err, 431, "Network cidr 10.3.1.0/24 is not within vpc")
	_, err = e.CS.Network.CreateNetwork(e.tierParams("same", "10.2.1.129", ""))
	simtesting.WantAPIError(t, err, 431, "crosses other network cidr")
	p := e.CS.Network.NewCreateNetworkParams("nogw", e.tierOffering, e.Zone)
	p.SetVpcid(e.vpc)
	_, err = e.CS.Network.CreateNetwork(p)
	simtesting.WantAPIError(t, err, 431, "Gateway/netmask are required when create network for VPC")
	isolated := e.network(t, e.Net).Networkofferingid
	p = e.tierParams("isolated", "10.2.2.1", "")
	p.SetNetworkofferingid(isolated)
	_, err = e.CS.Network.CreateNetwork(p)
	simtesting.WantAPIError(t, err, 431, "Network offering can't be used for VPC networks")
	p = e.CS.Network.NewCreateNetworkParams("novpc", e.tierOffering, e.Zone)
	_, err = e.CS.Network.CreateNetwork(p)
	simtesting.WantAPIError(t, err, 431, "Network offering can be used for VPC networks only")
	lp := e.CS.Network.NewListNetworksParams()
	lp.SetVpcid(e.vpc)
	if l, err := e.CS.Network.ListNetworks(lp); err != nil || l.Count != 1 || l.Networks[0].Id != e.tier {
		t.Fatalf("listNetworks vpcid = %+v, %v", l, err)
	}
}

func (e *vpcEnv) network(t *testing.T, id string) *cloudstack.Network {
	t.Helper()
	n, _, err := e.CS.Network.GetNetworkByID(id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestVPCNetworkACLs: rules go on a custom list only, are checked as
// NetworkACLServiceImpl checks them, and a list a tier uses stays.
func TestVPCNetworkACLs(t *testing.T) {
	e := newVPCEnv(t)
	p := e.CS.NetworkACL.NewCreateNetworkACLParams("tcp")
	p.SetAclid(e.acl)
	p.SetStartport(22)
	rule, err := e.CS.NetworkACL.CreateNetworkACL(p)
	if err != nil || rule.State != "Active" || rule.Startport != "22" || rule.Endport != "22" || rule.Number != 1 ||
		rule.Traffictype != "Ingress" || rule.Action != "Allow" || rule.Cidrlist != "0.0.0.0/0,::/0" {
		t.Fatalf("createNetworkACL = %+v, %v", rule, err)
	}
	p = e.CS.NetworkACL.NewCreateNetworkACLParams("foo")
	p.SetAclid(e.acl)
	_, err = e.CS.NetworkACL.CreateNetworkACL(p)
	simtesting.WantAPIError(t, err, 431, "Invalid protocol [foo]. Expected one of: [tcp,udp,icmp,all]")
	lists, err := e.CS.NetworkACL.ListNetworkACLLists(e.CS.NetworkACL.NewListNetworkACLListsParams())
	if err != nil || lists.Count != 3 {
		t.Fatalf("listNetworkACLLists = %+v, %v", lists, err)
	}
	for _, l := range lists.NetworkACLLists {
		if l.Name != "default_allow" {
			continue
		}
		p = e.CS.NetworkACL.NewCreateNetworkACLParams("all")
		p.SetAclid(l.Id)
		_, err = e.CS.NetworkACL.CreateNetworkACL(p)
		simtesting.WantAPIError(t, err, 431, "Default ACL cannot be modified")
	}
	_, err = e.CS.NetworkACL.DeleteNetworkACLList(e.CS.NetworkACL.NewDeleteNetworkACLListParams(e.acl))
	simtesting.WantJobError(t, err, 530, "ACL is still associated with 1 tier(s)")
	lp := e.CS.NetworkACL.NewListNetworkACLsParams()
	lp.SetNetworkid(e.tier)
	if l, err := e.CS.NetworkACL.ListNetworkACLs(lp); err != nil || l.Count != 1 || l.NetworkACLs[0].Id != rule.Id {
		t.Fatalf("listNetworkACLs networkid = %+v, %v", l, err)
	}
}

// TestVPCStaticNATAndLoadBalancer: an address of the VPC gets its tier
// from enableStaticNat's networkid or from the load balancer rule's;
// openfirewall is refused and the HAProxy stats port is not one the VPC
// router serves; deleting its last rule gives the address back to the VPC.
func TestVPCStaticNATAndLoadBalancer(t *testing.T) {
	e := newVPCEnv(t)
	dp := e.Params("cpivm-tier")
	dp.SetNetworkids([]string{e.tier})
	vm := e.Deploy(t, dp)
	nat := e.vpcAddress(t)
	if nat.Issourcenat || nat.Associatednetworkid != "" || nat.Vpcid != e.vpc {
		t.Fatalf("associateIpAddress vpcid = %+v", nat)
	}
	_, err := e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(nat.Id, vm.Id))
	simtesting.WantAPIError(t, err, 431, "as IP is not associated with any network and no networkId is passed in")
	np := e.CS.NAT.NewEnableStaticNatParams(nat.Id, vm.Id)
	np.SetNetworkid(e.tier)
	if _, err := e.CS.NAT.EnableStaticNat(np); err != nil {
		t.Fatalf("enableStaticNat networkid: %v", err)
	}
	if ip, _, err := e.CS.Address.GetPublicIpAddressByID(nat.Id); err != nil || ip.Associatednetworkid != e.tier || !ip.Isstaticnat {
		t.Fatalf("the static NAT address = %+v, %v", ip, err)
	}

	lbIP := e.vpcAddress(t)
	lb := func(port int, open bool) error {
		p := e.CS.LoadBalancer.NewCreateLoadBalancerRuleParams("roundrobin", "web", 80, port)
		p.SetPublicipid(lbIP.Id)
		p.SetNetworkid(e.tier)
		if open {
			p.SetOpenfirewall(true)
		}
		_, err := e.CS.LoadBalancer.CreateLoadBalancerRule(p)
		return err
	}
	simtesting.WantAPIError(t, lb(80, true), 431, "Can't have openFirewall=true when IP address belongs to VPC")
	simtesting.WantAPIError(t, lb(8081, false), 431, "LB service provider cannot support this rule")
	if ip, _, _ := e.CS.Address.GetPublicIpAddressByID(lbIP.Id); ip.Associatednetworkid != "" {
		t.Fatalf("a refused rule left the address on tier %s", ip.Associatednetworkid)
	}
	if err := lb(80, false); err != nil {
		t.Fatalf("createLoadBalancerRule on the VPC address: %v", err)
	}
	fp := e.CS.Firewall.NewListFirewallRulesParams()
	fp.SetIpaddressid(lbIP.Id)
	if fw, err := e.CS.Firewall.ListFirewallRules(fp); err != nil || fw.Count != 0 {
		t.Fatalf("firewall rules on the VPC address = %+v, %v", fw, err)
	}
	if ip, _, _ := e.CS.Address.GetPublicIpAddressByID(lbIP.Id); ip.Associatednetworkid != e.tier {
		t.Fatalf("the load-balanced address is on %q, want the tier", ip.Associatednetworkid)
	}
	rules, err := e.CS.LoadBalancer.ListLoadBalancerRules(e.CS.LoadBalancer.NewListLoadBalancerRulesParams())
	if err != nil || rules.Count != 1 {
		t.Fatalf("listLoadBalancerRules = %+v, %v", rules, err)
	}
	if _, err := e.CS.LoadBalancer.DeleteLoadBalancerRule(e.CS.LoadBalancer.NewDeleteLoadBalancerRuleParams(rules.LoadBalancerRules[0].Id)); err != nil {
		t.Fatalf("deleteLoadBalancerRule: %v", err)
	}
	if ip, _, _ := e.CS.Address.GetPublicIpAddressByID(lbIP.Id); ip.Associatednetworkid != "" || ip.Vpcid != e.vpc {
		t.Fatalf("the address of no rule any more is on %q of VPC %q, want the VPC's alone", ip.Associatednetworkid, ip.Vpcid)
	}
}

// TestVPCDelete: a VPC with a tier stays; one without goes with its
// addresses.
func TestVPCDelete(t *testing.T) {
	e := newVPCEnv(t)
	_, err := e.CS.VPC.DeleteVPC(e.CS.VPC.NewDeleteVPCParams(e.vpc))
	simtesting.WantJobError(t, err, 431, "as its used by 1 networks")
	empty := e.createVPC(t, "vpc2", "10.4.0.0/16")
	if _, err := e.CS.VPC.DeleteVPC(e.CS.VPC.NewDeleteVPCParams(empty.Id)); err != nil {
		t.Fatalf("deleteVPC: %v", err)
	}
	p := e.CS.Address.NewListPublicIpAddressesParams()
	p.SetVpcid(empty.Id)
	if ips, err := e.CS.Address.ListPublicIpAddresses(p); err != nil || ips.Count != 0 {
		t.Fatalf("addresses of the deleted VPC = %+v, %v", ips, err)
	}
	if l, err := e.CS.VPC.ListVPCs(e.CS.VPC.NewListVPCsParams()); err != nil || l.Count != 1 || l.VPCs[0].Id != e.vpc {
		t.Fatalf("listVPCs = %+v, %v", l, err)
	}
}

// TestCLIVPC drives the VPC commands with Debian's cloudstack CLI.
func TestCLIVPC(t *testing.T) {
	e := newVPCEnv(t)
	got := cliJSON(t, e.Sim, "listVPCs", "name=vpc")
	if got["count"] != 1.0 {
		t.Fatalf("listVPCs name=vpc = %v", got)
	}
	vpc := got["vpc"].([]any)[0].(map[string]any)
	tiers, _ := vpc["network"].([]any)
	if vpc["id"] != e.vpc || len(tiers) != 1 || tiers[0].(map[string]any)["id"] != e.tier {
		t.Fatalf("listVPCs = %v", vpc)
	}
	rule := cliJSON(t, e.Sim, "createNetworkACL", "networkid="+e.tier, "protocol=icmp", "traffictype=egress",
		"action=deny")["networkacl"].(map[string]any)
	if rule["aclid"] != e.acl || rule["icmptype"] != -1.0 || rule["icmpcode"] != -1.0 || rule["traffictype"] != "Egress" ||
		rule["action"] != "Deny" {
		t.Fatalf("createNetworkACL = %v", rule)
	}
	ip := cliJSON(t, e.Sim, "associateIpAddress", "vpcid="+e.vpc)["ipaddress"].(map[string]any)
	if ip["vpcid"] != e.vpc || ip["associatednetworkid"] != nil {
		t.Fatalf("associateIpAddress vpcid = %v", ip)
	}
}

// TestVPCStartedByItsFirstTierVM: a VPC created with start=false has no
// router and so no source NAT address until a VM starts on a tier of it.
func TestVPCStartedByItsFirstTierVM(t *testing.T) {
	e := &vpcEnv{vmEnv: &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}}
	offs, err := e.CS.VPC.ListVPCOfferings(e.CS.VPC.NewListVPCOfferingsParams())
	if err != nil || offs.Count != 1 {
		t.Fatalf("listVPCOfferings: %+v, %v", offs, err)
	}
	p := e.CS.VPC.NewCreateVPCParams("10.5.0.0/16", "later", "later", offs.VPCOfferings[0].Id, e.Zone)
	p.SetStart(false)
	v, err := e.CS.VPC.CreateVPC(p)
	if err != nil {
		t.Fatalf("createVPC start=false: %v", err)
	}
	e.vpc = v.Id
	sourceNAT := func() int {
		lp := e.CS.Address.NewListPublicIpAddressesParams()
		lp.SetVpcid(v.Id)
		lp.SetIssourcenat(true)
		ips, err := e.CS.Address.ListPublicIpAddresses(lp)
		if err != nil {
			t.Fatal(err)
		}
		return ips.Count
	}
	if n := sourceNAT(); n != 0 {
		t.Fatalf("a VPC not started has %d source NAT addresses", n)
	}
	op := e.CS.NetworkOffering.NewListNetworkOfferingsParams()
	op.SetForvpc(true)
	offerings, err := e.CS.NetworkOffering.ListNetworkOfferings(op)
	if err != nil || offerings.Count == 0 {
		t.Fatalf("listNetworkOfferings forvpc: %+v, %v", offerings, err)
	}
	e.tierOffering = offerings.NetworkOfferings[0].Id
	tier, err := e.CS.Network.CreateNetwork(e.tierParams("t", "10.5.1.1", ""))
	if err != nil {
		t.Fatal(err)
	}
	dp := e.Params("cpivm-first-on-tier")
	dp.SetNetworkids([]string{tier.Id})
	e.Deploy(t, dp)
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
		p := e.CS.Firewall.NewCreateFirewallRuleParams(ipID, "tcp")
		p.SetStartport(22)
		_, err := e.CS.Firewall.CreateFirewallRule(p)
		return err
	}
	lp := e.CS.Address.NewListPublicIpAddressesParams()
	lp.SetVpcid(e.vpc)
	lp.SetIssourcenat(true)
	snat, err := e.CS.Address.ListPublicIpAddresses(lp)
	if err != nil || snat.Count != 1 {
		t.Fatalf("the VPC's source NAT address: %+v, %v", snat, err)
	}
	const noNetwork = "as IP is not associated with any network and no networkId is passed in"
	simtesting.WantAPIError(t, fw(snat.PublicIpAddresses[0].Id), 431, noNetwork)
	simtesting.WantAPIError(t, fw(e.vpcAddress(t).Id), 431, noNetwork)

	dp := e.Params("cpivm-fw")
	dp.SetNetworkids([]string{e.tier})
	vm := e.Deploy(t, dp)
	nat := e.vpcAddress(t)
	np := e.CS.NAT.NewEnableStaticNatParams(nat.Id, vm.Id)
	np.SetNetworkid(e.tier)
	if _, err := e.CS.NAT.EnableStaticNat(np); err != nil {
		t.Fatalf("enableStaticNat networkid: %v", err)
	}
	noProvider := "There is no new provider for IP " + nat.Ipaddress + " of service Firewall!"
	simtesting.WantAPIError(t, fw(nat.Id), 431, noProvider)
	_, err = e.CS.NAT.CreateIpForwardingRule(e.CS.NAT.NewCreateIpForwardingRuleParams(nat.Id, "tcp", 22))
	simtesting.WantAPIError(t, err, 431, noProvider)
	closed := e.rawAsync(t, map[string]string{"command": "createIpForwardingRule", "ipaddressid": nat.Id, "protocol": "tcp",
		"startport": "22", "openfirewall": "false"})
	if closed["jobstatus"].(float64) != 1 {
		t.Fatalf("createIpForwardingRule openfirewall=false on the VPC address = %+v", closed)
	}

	lbIP := e.vpcAddress(t)
	lb := e.CS.LoadBalancer.NewCreateLoadBalancerRuleParams("roundrobin", "web", 80, 80)
	lb.SetPublicipid(lbIP.Id)
	lb.SetNetworkid(e.tier)
	if _, err := e.CS.LoadBalancer.CreateLoadBalancerRule(lb); err != nil {
		t.Fatalf("createLoadBalancerRule on the VPC address: %v", err)
	}
	simtesting.WantAPIError(t, fw(lbIP.Id), 431, "There is no new provider for IP "+lbIP.Ipaddress+" of service Firewall!")

	for _, by := range []func(*cloudstack.ListFirewallRulesParams){
		func(p *cloudstack.ListFirewallRulesParams) { p.SetNetworkid(e.tier) },
		func(p *cloudstack.ListFirewallRulesParams) { p.SetIpaddressid(nat.Id) },
		func(p *cloudstack.ListFirewallRulesParams) { p.SetIpaddressid(lbIP.Id) },
	} {
		p := e.CS.Firewall.NewListFirewallRulesParams()
		by(p)
		if l, err := e.CS.Firewall.ListFirewallRules(p); err != nil || l.Count != 0 {
			t.Fatalf("listFirewallRules in the VPC = %+v, %v", l, err)
		}
	}
}
