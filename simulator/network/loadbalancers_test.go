package network_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

func (e *vmEnv) createLB(t *testing.T, ipID, name string, port int) *cloudstack.CreateLoadBalancerRuleResponse {
	t.Helper()
	lb, err := e.CS.LoadBalancer.CreateLoadBalancerRule(e.LbParams(ipID, name, port))
	if err != nil {
		t.Fatalf("createLoadBalancerRule %s: %v", name, err)
	}
	return lb
}

func (e *vmEnv) lbRules(t *testing.T, set func(*cloudstack.ListLoadBalancerRulesParams)) []*cloudstack.LoadBalancerRule {
	t.Helper()
	p := e.CS.LoadBalancer.NewListLoadBalancerRulesParams()
	if set != nil {
		set(p)
	}
	l, err := e.CS.LoadBalancer.ListLoadBalancerRules(p)
	if err != nil {
		t.Fatal(err)
	}
	return l.LoadBalancerRules
}

func (e *vmEnv) lbInstances(t *testing.T, id string) []*cloudstack.VirtualMachine {
	t.Helper()
	l, err := e.CS.LoadBalancer.ListLoadBalancerRuleInstances(e.CS.LoadBalancer.NewListLoadBalancerRuleInstancesParams(id))
	if err != nil {
		t.Fatal(err)
	}
	if l.Count != len(l.LoadBalancerRuleInstances) {
		t.Fatalf("count %d for %d instances", l.Count, len(l.LoadBalancerRuleInstances))
	}
	return l.LoadBalancerRuleInstances
}

func (e *vmEnv) assign(lbID string, vmIDs ...string) error {
	p := e.CS.LoadBalancer.NewAssignToLoadBalancerRuleParams(lbID)
	p.SetVirtualmachineids(vmIDs)
	_, err := e.CS.LoadBalancer.AssignToLoadBalancerRule(p)
	return err
}

func TestCreateLoadBalancerRule(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	if got := e.lbRules(t, nil); len(got) != 0 {
		t.Fatalf("rules before any: %+v", got)
	}
	ip := e.Associate(t)
	p := e.LbParams(ip.Id, "web", 80)
	p.SetDescription("the web tier")
	p.SetProtocol("TCP")
	lb, err := e.CS.LoadBalancer.CreateLoadBalancerRule(p)
	if err != nil || lb.Name != "web" || lb.Description != "the web tier" || lb.Publicip != ip.Ipaddress || lb.Publicipid != ip.Id ||
		lb.Publicport != "80" || lb.Privateport != "8080" || lb.Algorithm != "roundrobin" || lb.Protocol != "tcp" ||
		lb.State != "Add" || lb.Networkid != e.Net || lb.Zoneid != e.Zone || lb.Account != "admin" || !lb.Fordisplay {
		t.Fatalf("createLoadBalancerRule = %+v, %v", lb, err)
	}
	fw := e.firewallRules(t, ip.Id)
	if len(fw) != 1 || fw[0].Startport != 80 || fw[0].Endport != 80 || fw[0].Protocol != "tcp" || fw[0].Cidrlist != "0.0.0.0/0" {
		t.Fatalf("openfirewall rule = %+v", fw)
	}
	closed := e.LbParams(ip.Id, "closed", 81)
	closed.SetOpenfirewall(false)
	if _, err := e.CS.LoadBalancer.CreateLoadBalancerRule(closed); err != nil || len(e.firewallRules(t, ip.Id)) != 1 {
		t.Fatalf("openfirewall=false: %v", err)
	}

	sourceNAT := e.PublicIPs(t, nil)[0].Id
	natIP := e.Associate(t)
	vm := e.Deploy(t, e.Params("cpivm-lb-nat"))
	if _, err := e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(natIP.Id, vm.Id)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p    *cloudstack.CreateLoadBalancerRuleParams
		code int
		text string
	}{
		{e.LbParams(ip.Id, "dup", 80), 537, "The range specified, 80-80, conflicts with rule Rule[1-LoadBalancing-Add] which has 80-80"},
		{e.LbParams(natIP.Id, "nat", 80), 537, "Can't do load balance on ip address: " + natIP.Ipaddress},
		{e.LbParams(sourceNAT, "dns", 53), 431, "cannot add port 53 with network service offering having DNS service and Source NAT."},
		{e.LbParams(ip.Id, "stats", 8081), 431, "LB service provider cannot support this rule"},
		{e.LbParams(ip.Id, "bad", 0), 431, "publicPort is an invalid value: 0"},
		{e.CS.LoadBalancer.NewCreateLoadBalancerRuleParams("roundrobin", "noip", 8080, 80), 431,
			"Can't define IP owner. Either specify account/domainId or publicIpId"},
		{withAlgorithm(e.LbParams(ip.Id, "algo", 82), "random"), 431, "Invalid algorithm: random"},
		{withLBCIDR(e.LbParams(ip.Id, "cidr", 82), "10.0.0.0/40"), 431, "CIDR [10.0.0.0/40] is invalid."},
		{withPrivatePort(e, ip.Id, 70000), 431, "privatePort is an invalid value: 70000"},
		{withOwner(e, "admin", e.rootDomain(t), ""), 431, "Either networkId or zoneId or publicIpId has to be specified"},
		{withOwner(e, "admin", e.rootDomain(t), e.Zone), 431, "Unable to create load balance rule; can't find/allocate source IP"},
		{withOwner(e, "nobody", e.rootDomain(t), e.Zone), 431, "Unable to find account nobody in domain ID=1"},
	} {
		_, err := e.CS.LoadBalancer.CreateLoadBalancerRule(c.p)
		simtesting.WantAPIError(t, err, c.code, c.text)
	}
	// The firewall rule openfirewall creates conflicts like any other.
	fwIP := e.Associate(t)
	if _, err := e.CS.Firewall.CreateFirewallRule(e.fwParams(fwIP.Id, "tcp", 1, 100)); err != nil {
		t.Fatal(err)
	}
	_, err = e.CS.LoadBalancer.CreateLoadBalancerRule(e.LbParams(fwIP.Id, "behind-fw", 80))
	simtesting.WantAPIError(t, err, 537, "The range specified, 80-80, conflicts with rule Rule[")
	// As the production CloudStack CPI creates its lbs.
	orange := e.LbParams(fwIP.Id, "orange", 80)
	orange.SetZoneid(e.Zone)
	orange.SetOpenfirewall(false)
	if _, err := e.CS.LoadBalancer.CreateLoadBalancerRule(orange); err != nil {
		t.Fatalf("zoneid and publicipid: %v", err)
	}
	// An address with load balancer rules cannot become static NAT.
	_, err = e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(ip.Id, vm.Id))
	simtesting.WantAPIError(t, err, 537, "as it already has LoadBalancing rules assigned")

	if got := e.lbRules(t, nil); len(got) != 3 || got[0].Id != lb.Id {
		t.Fatalf("rules oldest first = %+v", got)
	}
	byName := e.lbRules(t, func(p *cloudstack.ListLoadBalancerRulesParams) { p.SetName("WEB") })
	byKeyword := e.lbRules(t, func(p *cloudstack.ListLoadBalancerRulesParams) { p.SetKeyword("web tier") })
	if len(byName) != 1 || len(byKeyword) != 1 || byKeyword[0].Id != lb.Id {
		t.Fatalf("name/keyword filters = %+v / %+v", byName, byKeyword)
	}
}

func withAlgorithm(p *cloudstack.CreateLoadBalancerRuleParams, a string) *cloudstack.CreateLoadBalancerRuleParams {
	p.SetAlgorithm(a)
	return p
}

func withLBCIDR(p *cloudstack.CreateLoadBalancerRuleParams, cidr string) *cloudstack.CreateLoadBalancerRuleParams {
	p.SetCidrlist([]string{cidr})
	return p
}

func withOwner(e *vmEnv, account, domainID, zoneID string) *cloudstack.CreateLoadBalancerRuleParams {
	p := e.LbParams("", "owned", 84)
	if zoneID != "" {
		p.SetZoneid(zoneID)
	}
	p.SetAccount(account)
	p.SetDomainid(domainID)
	return p
}

func (e *vmEnv) rootDomain(t *testing.T) string {
	t.Helper()
	e.Srv.Mu.Lock()
	defer e.Srv.Mu.Unlock()
	return e.Srv.State.Domains[0].ID
}

func withPrivatePort(e *vmEnv, ipID string, port int) *cloudstack.CreateLoadBalancerRuleParams {
	p := e.LbParams(ipID, "private", 83)
	p.SetPrivateport(port)
	return p
}

func TestLoadBalancerMembers(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	ip := e.Associate(t)
	lb := e.createLB(t, ip.Id, "web", 80)
	vm1 := e.Deploy(t, e.Params("cpivm-lb1"))
	vm2 := e.Deploy(t, e.Params("cpivm-lb2"))
	if got := e.lbInstances(t, lb.Id); len(got) != 0 {
		t.Fatalf("instances before assign: %+v", got)
	}
	if err := e.assign(lb.Id, vm1.Id, vm2.Id); err != nil {
		t.Fatal(err)
	}
	if got := e.lbRules(t, nil); got[0].State != "Active" {
		t.Fatalf("state after assign = %s", got[0].State)
	}
	if got := e.lbInstances(t, lb.Id); len(got) != 2 || got[0].Id != vm1.Id || got[1].Name != "cpivm-lb2" {
		t.Fatalf("instances = %+v", got)
	}
	withIPs := e.CS.LoadBalancer.NewListLoadBalancerRuleInstancesParams(lb.Id)
	withIPs.SetLbvmips(true)
	l, err := e.CS.LoadBalancer.ListLoadBalancerRuleInstances(withIPs)
	if err != nil || l.Count != 2 || len(l.LBRuleVMIDIPs) != 2 || l.LBRuleVMIDIPs[0].Loadbalancerruleinstance.Id != vm1.Id ||
		strings.Join(l.LBRuleVMIDIPs[0].Lbvmipaddresses, ",") != vm1.Nic[0].Ipaddress {
		t.Fatalf("lbvmips = %+v, %v", l, err)
	}
	notApplied := e.CS.LoadBalancer.NewListLoadBalancerRuleInstancesParams(lb.Id)
	notApplied.SetApplied(false)
	if l, err := e.CS.LoadBalancer.ListLoadBalancerRuleInstances(notApplied); err != nil || l.Count != 0 {
		t.Fatalf("applied=false = %+v, %v", l, err)
	}
	byVM := e.lbRules(t, func(p *cloudstack.ListLoadBalancerRulesParams) { p.SetVirtualmachineid(vm1.Id) })
	if len(byVM) != 1 {
		t.Fatalf("rules of vm1 = %+v", byVM)
	}

	err = e.assign(lb.Id, vm1.Id)
	simtesting.WantJobError(t, err, 431, "with "+vm1.Nic[0].Ipaddress+" is already mapped to load balancer.")
	other := e.AddNetwork(t, "other-net", "10.1.2.0/24", "10.1.2.1")
	p := e.Params("cpivm-lb-other")
	p.SetNetworkids([]string{other})
	vm3 := e.Deploy(t, p)
	err = e.assign(lb.Id, vm3.Id)
	simtesting.WantJobError(t, err, 431, "VM with id specified cannot be added because it doesn't belong in the same network.")
	_, err = e.CS.LoadBalancer.AssignToLoadBalancerRule(e.CS.LoadBalancer.NewAssignToLoadBalancerRuleParams(lb.Id))
	simtesting.WantJobError(t, err, 431, "Both instanceids and vmidipmap  can't be null")
	// cloudstack-go sends vmidipmap as key/value pairs; CloudStack reads vmid and vmip.
	kv := e.CS.LoadBalancer.NewAssignToLoadBalancerRuleParams(lb.Id)
	kv.SetVmidipmap(map[string]string{vm3.Id: "10.1.2.5"})
	_, err = e.CS.LoadBalancer.AssignToLoadBalancerRule(kv)
	simtesting.WantJobError(t, err, 431, "Unable to find virtual machine ID: null")
	// Network 1 is the zone's public network (createDefaultSystemNetworks).
	bad := e.rawAsync(t, map[string]string{"command": "assignToLoadBalancerRule", "id": lb.Id,
		"vmidipmap[0].vmid": vm1.Id, "vmidipmap[0].vmip": "10.1.1.250"})
	if r := bad["jobresult"].(map[string]any); bad["jobresultcode"] != 431.0 ||
		!strings.Contains(r["errortext"].(string), "VM ip 10.1.1.250 specified does not belong to nic in network 2") {
		t.Fatalf("secondary address = %+v", bad)
	}

	// Removing: a VM not behind the rule is no error; none named is.
	rm := e.CS.LoadBalancer.NewRemoveFromLoadBalancerRuleParams(lb.Id)
	rm.SetVirtualmachineids([]string{vm2.Id, vm3.Id})
	if _, err := e.CS.LoadBalancer.RemoveFromLoadBalancerRule(rm); err != nil {
		t.Fatal(err)
	}
	if got := e.lbInstances(t, lb.Id); len(got) != 1 || got[0].Id != vm1.Id {
		t.Fatalf("instances after remove = %+v", got)
	}
	_, err = e.CS.LoadBalancer.RemoveFromLoadBalancerRule(e.CS.LoadBalancer.NewRemoveFromLoadBalancerRuleParams(lb.Id))
	simtesting.WantJobError(t, err, 431, "Failed to remove instance from load balancer rule")

	// A destroyed VM stays mapped but is not listed; expunging removes it.
	if _, err := e.CS.VirtualMachine.DestroyVirtualMachine(e.CS.VirtualMachine.NewDestroyVirtualMachineParams(vm1.Id)); err != nil {
		t.Fatal(err)
	}
	if got := e.lbInstances(t, lb.Id); len(got) != 0 || len(e.lbRules(t, func(p *cloudstack.ListLoadBalancerRulesParams) { p.SetVirtualmachineid(vm1.Id) })) != 1 {
		t.Fatalf("destroyed VM listed: %+v", got)
	}
	err = e.assign(lb.Id, vm1.Id)
	simtesting.WantJobError(t, err, 431, "Invalid instance id specified")
	if _, err := e.CS.VirtualMachine.ExpungeVirtualMachine(e.CS.VirtualMachine.NewExpungeVirtualMachineParams(vm1.Id)); err != nil {
		t.Fatal(err)
	}
	rules := e.lbRules(t, nil)
	if len(rules) != 1 || rules[0].State != "Add" ||
		len(e.lbRules(t, func(p *cloudstack.ListLoadBalancerRulesParams) { p.SetVirtualmachineid(vm1.Id) })) != 0 {
		t.Fatalf("rule after its last VM was expunged = %+v", rules)
	}
}

func TestUpdateAndDeleteLoadBalancerRule(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	ip := e.Associate(t)
	lb := e.createLB(t, ip.Id, "web", 80)
	up := e.CS.LoadBalancer.NewUpdateLoadBalancerRuleParams(lb.Id)
	up.SetName("web2")
	up.SetAlgorithm("leastconn")
	up.SetDescription("renamed")
	got, err := e.CS.LoadBalancer.UpdateLoadBalancerRule(up)
	if err != nil || got.Name != "web2" || got.Algorithm != "leastconn" || got.Description != "renamed" || got.Publicport != "80" {
		t.Fatalf("updateLoadBalancerRule = %+v, %v", got, err)
	}
	bad := e.CS.LoadBalancer.NewUpdateLoadBalancerRuleParams(lb.Id)
	bad.SetCidrlist([]string{"10.0.0.0/99"})
	_, err = e.CS.LoadBalancer.UpdateLoadBalancerRule(bad)
	simtesting.WantJobError(t, err, 431, "Invalid CIDR list: 10.0.0.0/99")

	tag := e.CS.Resourcetags.NewCreateTagsParams([]string{lb.Id}, "LoadBalancer", map[string]string{"tier": "web"})
	if _, err := e.CS.Resourcetags.CreateTags(tag); err != nil {
		t.Fatal(err)
	}
	tagged := e.lbRules(t, func(p *cloudstack.ListLoadBalancerRulesParams) { p.SetTags(map[string]string{"tier": "web"}) })
	if len(tagged) != 1 || len(tagged[0].Tags) != 1 {
		t.Fatalf("tagged rules = %+v", tagged)
	}

	if _, err := e.CS.LoadBalancer.DeleteLoadBalancerRule(e.CS.LoadBalancer.NewDeleteLoadBalancerRuleParams(lb.Id)); err != nil {
		t.Fatal(err)
	}
	if len(e.lbRules(t, nil)) != 0 || len(e.firewallRules(t, ip.Id)) != 0 {
		t.Fatal("the rule or its firewall rule stays after deleteLoadBalancerRule")
	}
	_, err = e.CS.LoadBalancer.DeleteLoadBalancerRule(e.CS.LoadBalancer.NewDeleteLoadBalancerRuleParams(lb.Id))
	simtesting.WantAPIError(t, err, 431, "Unable to find load balancer rule: 1")
	_, err = e.CS.LoadBalancer.UpdateLoadBalancerRule(e.CS.LoadBalancer.NewUpdateLoadBalancerRuleParams(lb.Id))
	simtesting.WantAPIError(t, err, 431, "Unable to find load balancer rule by ID 1")
	_, err = e.CS.LoadBalancer.ListLoadBalancerRuleInstances(e.CS.LoadBalancer.NewListLoadBalancerRuleInstancesParams(lb.Id))
	simtesting.WantAPIError(t, err, 530, "Unable to find the load balancer with ID [1].")

	// Releasing an address deletes its load balancer rules.
	e.createLB(t, ip.Id, "again", 80)
	if _, err := e.CS.Address.DisassociateIpAddress(e.CS.Address.NewDisassociateIpAddressParams(ip.Id)); err != nil {
		t.Fatal(err)
	}
	if got := e.lbRules(t, nil); len(got) != 0 {
		t.Fatalf("rules of a released address = %+v", got)
	}
}

func TestLoadBalancerRulesSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{StatePath: path})}
	ip := e.Associate(t)
	lb := e.createLB(t, ip.Id, "web", 80)
	vm := e.Deploy(t, e.Params("cpivm-lb-restart"))
	if err := e.assign(lb.Id, vm.Id); err != nil {
		t.Fatal(err)
	}
	e.Stop()
	e2 := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{StatePath: path})}
	if got := e2.lbInstances(t, lb.Id); len(got) != 1 || got[0].Id != vm.Id {
		t.Fatalf("instances after restart = %+v", got)
	}
}
