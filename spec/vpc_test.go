package spec

import (
	"testing"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// VPC tiers (issue 15, item 5): a tier is a network with a VPC; the CPI
// places VMs on it by name as on any network, its vip is an address of the
// VPC that static NAT gives the tier, and lbs rules go on addresses of the
// VPC, without open_firewall (the tier's network ACLs govern its traffic).

// vpcTier makes a VPC (10.3.0.0/16) with a custom ACL list and a tier
// 10.3.1.0/24 of that name on the default VPC tier offering, as an operator
// does before naming the tier in cloud_properties, and answers the VPC's id.
func (e *env) vpcTier(name string) string {
	e.t.Helper()
	vpcID, aclID := e.vpcWithACL()
	e.addTier(vpcID, aclID, name, "10.3.1.1")
	return vpcID
}

// vpcWithACL makes the VPC and its custom ACL list.
func (e *env) vpcWithACL() (vpcID, aclID string) {
	e.t.Helper()
	c := e.client()
	zone, _, err := c.Zone.GetZoneByName(zoneName)
	e.must("listZones", err)
	offs, err := c.VPC.ListVPCOfferings(c.VPC.NewListVPCOfferingsParams())
	if err != nil || offs.Count == 0 {
		e.t.Fatalf("listVPCOfferings: %+v, %v", offs, err)
	}
	vpc, err := c.VPC.CreateVPC(c.VPC.NewCreateVPCParams("10.3.0.0/16", "spec-vpc", "spec-vpc", offs.VPCOfferings[0].Id, zone.Id))
	e.must("createVPC", err)
	acl, err := c.NetworkACL.CreateNetworkACLList(c.NetworkACL.NewCreateNetworkACLListParams("spec-acl", vpc.Id))
	e.must("createNetworkACLList", err)
	return vpc.Id, acl.Id
}

// addTier adds a /24 tier with that gateway to the VPC, with the ACL list
// when one is named.
func (e *env) addTier(vpcID, aclID, name, gateway string) {
	e.t.Helper()
	c := e.client()
	zone, _, err := c.Zone.GetZoneByName(zoneName)
	e.must("listZones", err)
	offering, _, err := c.NetworkOffering.GetNetworkOfferingByName("DefaultIsolatedNetworkOfferingForVpcNetworks")
	e.must("listNetworkOfferings", err)
	p := c.Network.NewCreateNetworkParams(name, offering.Id, zone.Id)
	p.SetVpcid(vpcID)
	if aclID != "" {
		p.SetAclid(aclID)
	}
	p.SetGateway(gateway)
	p.SetNetmask("255.255.255.0")
	_, err = c.Network.CreateNetwork(p)
	e.must("createNetwork on the VPC", err)
}

// tierNet is a manual BOSH network on the tier.
func tierNet(ip string) map[string]any {
	return map[string]any{"type": "manual", "ip": ip, "netmask": "255.255.255.0", "gateway": "10.3.1.1",
		"dns": []string{"10.3.1.2"}, "default": []string{"dns", "gateway"},
		"cloud_properties": map[string]any{"name": "vpc-tier"}}
}

// vpcAddress allocates an address of the VPC, as the operator does before
// naming it in lbs; no tier has it yet.
func (e *env) vpcAddress(vpcID, ip string) {
	e.t.Helper()
	c := e.client()
	p := c.Address.NewAssociateIpAddressParams()
	p.SetVpcid(vpcID)
	p.SetIpaddress(ip)
	_, err := c.Address.AssociateIpAddress(p)
	e.must("associateIpAddress vpcid", err)
}

func (e *env) publicIP(ip string) *csgo.PublicIpAddress {
	e.t.Helper()
	for _, a := range e.publicIPs() {
		if a.Ipaddress == ip {
			return a
		}
	}
	e.t.Fatalf("no public IP %s", ip)
	return nil
}

// TestVPCTierVMWithAVip: create_vm puts the VM on the tier with its manual
// address; the vip is taken for the VPC and static-NATed with the tier;
// delete_vm leaves neither the VM nor the address.
func TestVPCTierVMWithAVip(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	vpcID := e.vpcTier("vpc-tier")
	networks := map[string]any{"default": tierNet("10.3.1.10"), "public": map[string]any{"type": "vip", "ip": "192.168.2.60"}}
	id := cid(e.call("create_vm", "agent-vpc-1", stemcell, smallVM, networks, []string{}, boshEnv).ok(t))
	vm := e.vm(id)
	if len(vm.Nic) != 1 || vm.Nic[0].Ipaddress != "10.3.1.10" || vm.Nic[0].Networkname != "vpc-tier" || vm.Publicip != "192.168.2.60" {
		t.Fatalf("VM NICs %+v public %q", vm.Nic, vm.Publicip)
	}
	vip := e.publicIP("192.168.2.60")
	if vip.Vpcid != vpcID || vip.Associatednetworkid != vm.Nic[0].Networkid || !vip.Isstaticnat {
		t.Fatalf("the vip %+v", vip)
	}
	e.call("delete_vm", id).ok(t)
	if vms, vols, ips := e.live(); vms != 0 || vols != 0 || ips != 0 {
		t.Fatalf("after delete_vm: %d VMs, %d volumes, %d public IPs", vms, vols, ips)
	}
}

// TestVPCLBsOnAVPCAddress: the first VM's rule gives the VPC's address its
// tier, opens no firewall, and goes with the last VM; a port the VPC
// router refuses fails create_vm with CloudStack's answer and leaves
// nothing; open_firewall is refused before anything is created.
func TestVPCLBsOnAVPCAddress(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	vpcID := e.vpcTier("vpc-tier")
	e.vpcAddress(vpcID, "192.168.2.61")
	entry := webEntry("192.168.2.61")
	entry["open_firewall"] = false
	id := cid(e.call("create_vm", "agent-vpc-lb", stemcell, lbVMType(entry), map[string]any{"default": tierNet("10.3.1.11")},
		[]string{}, boshEnv).ok(t))
	rule := e.oneRule(id)
	tier := e.vm(id).Nic[0].Networkid
	if rule.Networkid != tier || e.publicIP("192.168.2.61").Associatednetworkid != tier || len(e.firewallRules()) != 0 {
		t.Fatalf("rule %+v on network %s, firewall rules %+v", rule, e.publicIP("192.168.2.61").Associatednetworkid, e.firewallRules())
	}

	vms, vols, ips := e.live()
	for _, c := range []struct {
		name, typ, want string
		edit            func(map[string]any)
	}{
		{"the HAProxy stats port", "VMCreationFailed", "LB service provider cannot support this rule",
			func(m map[string]any) { m["name"], m["public_port"], m["open_firewall"] = "stats", 8081, false }},
		{"open_firewall", "VMCreationFailed", "CloudStack refuses open_firewall there",
			func(m map[string]any) { m["name"], m["public_port"], m["open_firewall"] = "web2", 81, true }},
	} {
		bad := webEntry("192.168.2.61")
		c.edit(bad)
		e.call("create_vm", "agent-vpc-bad", stemcell, lbVMType(bad), map[string]any{"default": tierNet("10.3.1.12")},
			[]string{}, boshEnv).failed(t, c.typ, c.want)
		if v2, vol2, ip2 := e.live(); v2 != vms || vol2 != vols || ip2 != ips || len(e.lbRules()) != 1 {
			t.Errorf("%s: refused, but VMs %d→%d, volumes %d→%d, IPs %d→%d, rules %d", c.name, vms, v2, vols, vol2,
				ips, ip2, len(e.lbRules()))
		}
	}

	// One tier per public IP: the address is the first tier's now, so a VM
	// on another tier of the VPC cannot join its rule.
	e.addTier(vpcID, "", "vpc-tier-2", "10.3.2.1")
	other := tierNet("10.3.2.10")
	other["gateway"], other["cloud_properties"] = "10.3.2.1", map[string]any{"name": "vpc-tier-2"}
	e.call("create_vm", "agent-vpc-tier2", stemcell, lbVMType(entry), map[string]any{"default": other}, []string{},
		boshEnv).failed(t, "VMCreationFailed", "on which this VM has no NIC")
	if v2, _, _ := e.live(); v2 != vms {
		t.Errorf("a VM on another tier was refused, but VMs %d→%d", vms, v2)
	}

	e.call("delete_vm", id).ok(t)
	if rules := e.lbRules(); len(rules) != 0 {
		t.Fatalf("after the last VM's delete_vm: %d rules", len(rules))
	}
	if vms, _, _ := e.live(); vms != 0 {
		t.Fatalf("after delete_vm: %d VMs", vms)
	}
}
