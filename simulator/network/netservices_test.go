package network_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// offeringWith creates and enables a network offering with the services
// given, each by the virtual router, as an admin does.
func (e *vmEnv) offeringWith(t *testing.T, name, guestType string, conserve bool, services ...string) string {
	t.Helper()
	op := e.CS.NetworkOffering.NewCreateNetworkOfferingParams(name, guestType, name, "Guest")
	op.SetSupportedservices(services)
	providers := map[string]string{}
	for _, s := range services {
		providers[s] = "VirtualRouter"
	}
	op.SetServiceproviderlist(providers)
	op.SetConservemode(conserve)
	if guestType == "Shared" {
		op.SetSpecifyvlan(true)
		op.SetSpecifyipranges(true)
	}
	o, err := e.CS.NetworkOffering.CreateNetworkOffering(op)
	if err != nil {
		t.Fatalf("createNetworkOffering %s: %v", name, err)
	}
	uo := e.CS.NetworkOffering.NewUpdateNetworkOfferingParams()
	uo.SetId(o.Id)
	uo.SetState("Enabled")
	if _, err := e.CS.NetworkOffering.UpdateNetworkOffering(uo); err != nil {
		t.Fatal(err)
	}
	return o.Id
}

// networkOf creates a network of an offering in the seeded zone; set adds
// parameters (a gateway for offerings that need one).
func (e *vmEnv) networkOf(t *testing.T, name, offering string, set func(*cloudstack.CreateNetworkParams)) *cloudstack.CreateNetworkResponse {
	t.Helper()
	p := e.CS.Network.NewCreateNetworkParams(name, offering, e.Zone)
	p.SetDisplaytext(name)
	if set != nil {
		set(p)
	}
	n, err := e.CS.Network.CreateNetwork(p)
	if err != nil {
		t.Fatalf("createNetwork %s: %v", name, err)
	}
	return n
}

// vmOn deploys a VM on a network, which implements it.
func (e *vmEnv) vmOn(t *testing.T, name, network string) *cloudstack.DeployVirtualMachineResponse {
	t.Helper()
	p := e.Params(name)
	p.SetNetworkids([]string{network})
	return e.Deploy(t, p)
}

// sourceNATOf is a network's source NAT address, "" if it has none.
func (e *vmEnv) sourceNATOf(t *testing.T, network string) string {
	t.Helper()
	p := e.CS.Address.NewListPublicIpAddressesParams()
	p.SetAssociatednetworkid(network)
	p.SetIssourcenat(true)
	ips := e.PublicIPs(t, p)
	if len(ips) == 0 {
		return ""
	}
	return ips[0].Id
}

// TestRulesNeedTheirServices: a network without Firewall and Lb takes no
// firewall or load balancer rule (getNetworkServiceCapabilities' 530,
// isLbServiceSupportedInNetwork's 431), and an address already used for a
// service takes no rule of a service the network lacks (checkIpForService).
func TestRulesNeedTheirServices(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	off := e.offeringWith(t, "nat-only", "Isolated", true, "Dhcp", "Dns", "UserData", "SourceNat", "StaticNat")
	n := e.networkOf(t, "nat-only", off, nil)
	vm := e.vmOn(t, "cpivm-natonly", n.Id)
	ip := e.AssociateTo(t, n.Id)
	snat := e.sourceNATOf(t, n.Id)
	if snat == "" {
		t.Fatal("the implemented network has no source NAT address")
	}
	e.Srv.Mu.Lock()
	internal := e.Srv.State.Network(n.Id).InternalID
	snatAddr, _ := model.ByID(e.Srv.State.PublicIPs, snat)
	ipAddr, _ := model.ByID(e.Srv.State.PublicIPs, ip.Id)
	e.Srv.Mu.Unlock()

	fw := map[string]string{"command": "createFirewallRule", "ipaddressid": ip.Id, "protocol": "tcp", "startport": "22"}
	e.Call(fw).WantError(t, "createfirewallruleresponse", 530, 4390,
		fmt.Sprintf("Service Firewall is not supported in the network id=%d", internal))
	fw["ipaddressid"] = snat
	e.Call(fw).WantError(t, "createfirewallruleresponse", 431, 4350,
		"There is no new provider for IP "+snatAddr.Address+" of service Firewall!")

	lb := map[string]string{"command": "createLoadBalancerRule", "publicipid": ip.Id, "name": "web",
		"algorithm": "roundrobin", "publicport": "80", "privateport": "8080"}
	e.Call(lb).WantError(t, "createloadbalancerruleresponse", 431, 9999, "LB service is not supported in specified network id")
	lb["publicipid"] = snat
	e.Call(lb).WantError(t, "createloadbalancerruleresponse", 431, 9999,
		"There is no new provider for IP "+snatAddr.Address+" of service Lb!")

	// Static NAT is there: the address takes it, but opening the firewall for
	// a forwarding rule needs the Firewall service the address now lacks.
	if _, err := e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(ip.Id, vm.Id)); err != nil {
		t.Fatal(err)
	}
	fwd := map[string]string{"command": "createIpForwardingRule", "ipaddressid": ip.Id, "protocol": "tcp", "startport": "22"}
	e.Call(fwd).WantError(t, "createipforwardingruleresponse", 431, 4350,
		"There is no new provider for IP "+ipAddr.Address+" of service Firewall!")
	// cloudstack-go cannot decode the rule (ipaddressid is a number).
	fwd["openfirewall"] = "false"
	if q := e.rawAsync(t, fwd); simtesting.Num(q["jobstatus"]) != 1 {
		t.Fatalf("forwarding rule without a firewall rule: %v", q)
	}
	if got := e.firewallRules(t, ip.Id); len(got) != 0 {
		t.Fatalf("firewall rules after the refusal: %+v", got)
	}
}

// TestStaticNATNeedsItsService: enableStaticNat refuses a network whose
// offering lacks StaticNat (RulesManagerImpl.enableStaticNat).
func TestStaticNATNeedsItsService(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	off := e.offeringWith(t, "no-static", "Isolated", true, "Dhcp", "Dns", "UserData", "SourceNat", "Firewall", "Lb")
	n := e.networkOf(t, "no-static", off, nil)
	vm := e.vmOn(t, "cpivm-nostatic", n.Id)
	ip := e.AssociateTo(t, n.Id)
	e.Call(map[string]string{"command": "enableStaticNat", "ipaddressid": ip.Id, "virtualmachineid": vm.Id}).WantError(t,
		"enablestaticnatresponse", 431, 4350,
		"Unable to create static nat rule; StaticNat service is not supported in network with specified id")
	// Firewall and load balancer rules are served.
	if _, err := e.CS.Firewall.CreateFirewallRule(e.fwParams(ip.Id, "tcp", 22, 22)); err != nil {
		t.Fatal(err)
	}
	e.createLB(t, ip.Id, "web", 80)
}

// TestAddressesNeedAnAddressService: an Isolated network without SourceNat
// takes no public address (the job fails and the address is free again) and
// gets no source NAT address when implemented; a Shared network takes
// addresses only with a service that uses them (refused at once).
func TestAddressesNeedAnAddressService(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	off := e.offeringWith(t, "no-snat", "Isolated", true, "Dhcp", "Dns", "UserData")
	n := e.networkOf(t, "no-snat", off, func(p *cloudstack.CreateNetworkParams) {
		p.SetGateway("10.3.3.1")
		p.SetNetmask("255.255.255.0")
	})
	e.vmOn(t, "cpivm-nosnat", n.Id)
	free := len(e.PublicIPs(t, allAddresses(e)))
	p := e.CS.Address.NewAssociateIpAddressParams()
	p.SetNetworkid(n.Id)
	_, err := e.CS.Address.AssociateIpAddress(p)
	simtesting.WantJobError(t, err, 431, "In zone of type Advanced ip address can be associated only to the network of guest type Isolated with the SourceNat enabled")
	if got := len(e.PublicIPs(t, allAddresses(e))); got != free {
		t.Fatalf("%d free addresses after the failed association, want %d", got, free)
	}
	if id := e.sourceNATOf(t, n.Id); id != "" {
		t.Fatalf("a network without SourceNat got source NAT address %s", id)
	}

	shared := e.offeringWith(t, "shared-plain", "Shared", true, "Dhcp", "Dns", "UserData")
	sn := e.networkOf(t, "shared-plain", shared, func(p *cloudstack.CreateNetworkParams) {
		p.SetGateway("10.4.4.1")
		p.SetNetmask("255.255.255.0")
		p.SetVlan("400")
	})
	e.Call(map[string]string{"command": "associateIpAddress", "networkid": sn.Id}).WantError(t,
		"associateipaddressresponse", 431, 4350,
		"Associate IP address can only be called on the shared networks in the advanced zone with Firewall/Source Nat/Static Nat/Port Forwarding/Load balancing services enabled")
	withNAT := e.offeringWith(t, "shared-nat", "Shared", true, "Dhcp", "Dns", "UserData", "StaticNat")
	sn2 := e.networkOf(t, "shared-nat", withNAT, func(p *cloudstack.CreateNetworkParams) {
		p.SetGateway("10.5.5.1")
		p.SetNetmask("255.255.255.0")
		p.SetVlan("401")
	})
	if ip := e.AssociateTo(t, sn2.Id); ip.Issourcenat || ip.Associatednetworkid != sn2.Id {
		t.Fatalf("address of a Shared network with StaticNat = %+v", ip)
	}
}

// TestSharedLoadBalancerWithoutFirewall: checkIpForService passes every
// address outside Isolated networks, so opening the firewall for a load
// balancer rule reaches getNetworkServiceCapabilities(Firewall), whose
// UnsupportedServiceException createPublicLoadBalancerRule swallows into
// its own failure.
func TestSharedLoadBalancerWithoutFirewall(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	off := e.offeringWith(t, "shared-lb", "Shared", true, "Dhcp", "Dns", "UserData", "Lb")
	n := e.networkOf(t, "shared-lb", off, func(p *cloudstack.CreateNetworkParams) {
		p.SetGateway("10.7.7.1")
		p.SetNetmask("255.255.255.0")
		p.SetVlan("402")
	})
	ip := e.AssociateTo(t, n.Id)
	e.Call(map[string]string{"command": "createLoadBalancerRule", "publicipid": ip.Id, "name": "web",
		"algorithm": "roundrobin", "publicport": "80", "privateport": "8080"}).WantError(t,
		"createloadbalancerruleresponse", 530, 4250, "Failed to create load balancer rule: web")
	if got := e.lbRules(t, nil); len(got) != 0 {
		t.Fatalf("rules after the failure: %+v", got)
	}
	closed := e.LbParams(ip.Id, "web", 80)
	closed.SetOpenfirewall(false)
	if _, err := e.CS.LoadBalancer.CreateLoadBalancerRule(closed); err != nil {
		t.Fatalf("rule without a firewall rule: %v", err)
	}
}

// TestOpenFirewallNeedsTheFirewallService: a load balancer rule opening the
// firewall (openfirewall, the default) makes its address used for Lb, so the
// firewall rule createRuleForAllCidrs adds finds no Firewall provider; without
// openfirewall the rule is created.
func TestOpenFirewallNeedsTheFirewallService(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	n := e.networkOf(t, "lb-only", e.offeringWith(t, "lb-only", "Isolated", true, "Dhcp", "Dns", "SourceNat", "Lb"), nil)
	e.vmOn(t, "cpivm-lbonly", n.Id)
	ip := e.AssociateTo(t, n.Id)
	lb := map[string]string{"command": "createLoadBalancerRule", "publicipid": ip.Id, "name": "web",
		"algorithm": "roundrobin", "publicport": "80", "privateport": "8080"}
	e.Call(lb).WantError(t, "createloadbalancerruleresponse", 431, 9999,
		"There is no new provider for IP "+ip.Ipaddress+" of service Firewall!")
	if got := e.lbRules(t, nil); len(got) != 0 {
		t.Fatalf("rules after the refusal: %+v", got)
	}
	closed := e.LbParams(ip.Id, "web", 80)
	closed.SetOpenfirewall(false)
	if r, err := e.CS.LoadBalancer.CreateLoadBalancerRule(closed); err != nil || r.State != "Add" {
		t.Fatalf("rule without a firewall rule = %+v, %v", r, err)
	}
}

// allAddresses lists every address, free ones included.
func allAddresses(e *vmEnv) *cloudstack.ListPublicIpAddressesParams {
	p := e.CS.Address.NewListPublicIpAddressesParams()
	p.SetAllocatedonly(false)
	p.SetState("Free")
	return p
}

// TestNonConserveModeAddressServesOneService: without conserve mode an
// address used for one service takes no rule of another
// (canIpUsedForNonConserveService); firewall rules always pass.
func TestNonConserveModeAddressServesOneService(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	off := e.offeringWith(t, "one-service", "Isolated", false, "Dhcp", "Dns", "UserData", "SourceNat", "StaticNat", "Firewall", "Lb")
	n := e.networkOf(t, "one-service", off, nil)
	e.vmOn(t, "cpivm-oneservice", n.Id)
	snat := e.sourceNATOf(t, n.Id)
	e.Srv.Mu.Lock()
	addr, _ := model.ByID(e.Srv.State.PublicIPs, snat)
	e.Srv.Mu.Unlock()
	e.Call(map[string]string{"command": "createLoadBalancerRule", "publicipid": snat, "name": "web",
		"algorithm": "roundrobin", "publicport": "80", "privateport": "8080"}).WantError(t,
		"createloadbalancerruleresponse", 431, 9999, "The IP "+addr.Address+" is already used as SourceNat rather than Lb")
	if _, err := e.CS.Firewall.CreateFirewallRule(e.fwParams(snat, "tcp", 22, 22)); err != nil {
		t.Fatalf("firewall rule on the source NAT address: %v", err)
	}
	ip := e.AssociateTo(t, n.Id)
	e.createLB(t, ip.Id, "web", 80)
}

// TestCLIServiceRefusals: Debian's cloudstack CLI sees the refusals as
// CloudStack gives them - a failed association job, a 530 firewall rule.
func TestCLIServiceRefusals(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	noSNAT := e.networkOf(t, "cli-no-snat", e.offeringWith(t, "cli-no-snat", "Isolated", true, "Dhcp", "Dns"),
		func(p *cloudstack.CreateNetworkParams) {
			p.SetGateway("10.6.6.1")
			p.SetNetmask("255.255.255.0")
		})
	out, errOut, err := simtesting.RunCLI(t, e.Sim, simtesting.Secret, "associateIpAddress", "networkid="+noSNAT.Id)
	if err == nil || !strings.Contains(errOut, "Job failure") ||
		!strings.Contains(out, "ip address can be associated only to the network of guest type Isolated with the SourceNat enabled") {
		t.Fatalf("associateIpAddress without SourceNat: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	natOnly := e.networkOf(t, "cli-nat-only", e.offeringWith(t, "cli-nat-only", "Isolated", true, "Dhcp", "Dns", "SourceNat", "StaticNat"), nil)
	e.vmOn(t, "cpivm-cli-natonly", natOnly.Id)
	ip := e.AssociateTo(t, natOnly.Id)
	out, errOut, err = simtesting.RunCLI(t, e.Sim, simtesting.Secret, "createFirewallRule", "ipaddressid="+ip.Id, "protocol=tcp", "startport=22")
	if err == nil || !strings.Contains(out+errOut, "HTTP 530 response from CloudStack") ||
		!strings.Contains(out+errOut, "Service Firewall is not supported in the network id=") {
		t.Fatalf("createFirewallRule without Firewall: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}
