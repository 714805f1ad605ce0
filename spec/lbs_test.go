package spec

import (
	"strings"
	"testing"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// The Go CPI's lbs (issue 12, item 2): a load-balancer rule on a public IP
// the operator allocated, created when missing, with each VM of the VM type
// behind it; the last VM's delete_vm deletes the rules the CPI created.

// allocateIP associates a free public address with the guest network, as
// an operator does before naming it in lbs. The first address of a network
// never implemented becomes its source NAT address, so that one is taken
// first and the second is answered.
func (e *env) allocateIP(ips ...string) string {
	e.t.Helper()
	c := e.client()
	np := c.Network.NewListNetworksParams()
	np.SetName("guest-network")
	e.inProject(np)
	nets, err := c.Network.ListNetworks(np)
	if err != nil || len(nets.Networks) == 0 {
		e.t.Fatalf("listNetworks: %v", err)
	}
	var id string
	for _, ip := range ips {
		p := c.Address.NewAssociateIpAddressParams()
		p.SetNetworkid(nets.Networks[0].Id)
		p.SetIpaddress(ip)
		e.inProject(p)
		r, err := c.Address.AssociateIpAddress(p)
		if err != nil {
			e.t.Fatalf("associateIpAddress %s: %v", ip, err)
		}
		id = r.Id
		e.awaitAssociated(ip)
	}
	return id
}

// awaitAssociated waits for associateIpAddress's job to associate the
// address with its network (the simulator may run jobs with latency).
func (e *env) awaitAssociated(ip string) {
	e.t.Helper()
	for i := 0; i < 100; i++ {
		for _, a := range e.publicIPs() {
			if a.Ipaddress == ip && a.Associatednetworkid != "" && a.State == "Allocated" {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("public IP %s is not associated with its network after 5s", ip)
}

func (e *env) lbRules() []*csgo.LoadBalancerRule {
	e.t.Helper()
	c := e.client()
	p := c.LoadBalancer.NewListLoadBalancerRulesParams()
	p.SetListall(true)
	e.inProject(p)
	resp, err := c.LoadBalancer.ListLoadBalancerRules(p)
	e.must("listLoadBalancerRules", err)
	return resp.LoadBalancerRules
}

func (e *env) firewallRules() []*csgo.FirewallRule {
	e.t.Helper()
	c := e.client()
	p := c.Firewall.NewListFirewallRulesParams()
	p.SetListall(true)
	e.inProject(p)
	resp, err := c.Firewall.ListFirewallRules(p)
	e.must("listFirewallRules", err)
	return resp.FirewallRules
}

// firewallRuleLive says the firewall rule is still listed.
func (e *env) firewallRuleLive(id string) bool {
	for _, f := range e.firewallRules() {
		if f.Id == id {
			return true
		}
	}
	return false
}

// lbVMs are the ids of the VMs behind a rule.
func (e *env) lbVMs(ruleID string) []string {
	e.t.Helper()
	c := e.client()
	resp, err := c.LoadBalancer.ListLoadBalancerRuleInstances(c.LoadBalancer.NewListLoadBalancerRuleInstancesParams(ruleID))
	e.must("listLoadBalancerRuleInstances", err)
	var ids []string
	for _, vm := range resp.LoadBalancerRuleInstances {
		ids = append(ids, vm.Id)
	}
	return ids
}

func lbVMType(entries ...map[string]any) map[string]any {
	props := map[string]any{}
	for k, v := range smallVM {
		props[k] = v
	}
	props["lbs"] = entries
	return props
}

func webEntry(ip string) map[string]any {
	return map[string]any{"name": "web", "algorithm": "roundrobin", "private_port": 8080, "public_port": 80,
		"open_firewall": true, "public_ip": ip}
}

// oneRule is the only rule, with the VMs behind it.
func (e *env) oneRule(want ...string) *csgo.LoadBalancerRule {
	e.t.Helper()
	rules := e.lbRules()
	if len(rules) != 1 {
		e.t.Fatalf("%d load-balancer rules, want 1", len(rules))
	}
	got := e.lbVMs(rules[0].Id)
	if strings.Join(sorted(got), ",") != strings.Join(sorted(want), ",") {
		e.t.Fatalf("VMs behind rule %s: %v, want %v", rules[0].Name, got, want)
	}
	return rules[0]
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestLBsLifecycle: the first VM creates the rule (and its firewall
// rule), marked; a second VM joins it; deleting one leaves the rule with
// the other; a recreated VM joins the same rule; deleting the last VM
// removes the rule and its firewall rule.
func TestLBsLifecycle(t *testing.T) { lbsLifecycle(t, newEnv(t, nil)) }

// lbsLifecycle runs outside and inside a CloudStack project.
func lbsLifecycle(t *testing.T, e *env) {
	stemcell := e.stemcell()
	e.allocateIP("192.168.2.119", "192.168.2.120")
	props := lbVMType(webEntry("192.168.2.120"))
	create := func(agent, ip string) string {
		return cid(e.call("create_vm", agent, stemcell, props, map[string]any{"default": manualNet(ip)}, []string{}, boshEnv).ok(t))
	}
	e.resetCalls()
	first := create("agent-lb-1", "10.1.1.120")
	calls := e.calls()
	rule := e.oneRule(first)
	if rule.Publicip != "192.168.2.120" || rule.Publicport != "80" || rule.Privateport != "8080" || rule.Algorithm != "roundrobin" {
		t.Fatalf("rule %+v", rule)
	}
	if tags := tagsOf(rule.Tags); tags["bosh-director-uuid"] != "spec-director" || tags["bosh-cpi-created"] != "true" {
		t.Errorf("the CPI's rule is tagged %v", tags)
	}
	if !strings.HasPrefix(rule.Description, "bosh-cpi-created bosh-director-uuid=spec-director bosh-agent-id=agent-lb-1") {
		t.Errorf("the CPI's rule is described %q", rule.Description)
	}
	fw := e.firewallRules()
	if len(fw) != 1 || fw[0].Startport != 80 || fw[0].Ipaddress != "192.168.2.120" {
		t.Fatalf("open_firewall: firewall rules %+v", fw)
	}
	t.Logf("create_vm with one lbs entry whose rule it creates: %d CloudStack calls %v", total(calls), calls)

	e.resetCalls()
	second := create("agent-lb-2", "10.1.1.121")
	t.Logf("create_vm joining an existing rule: %d CloudStack calls %v", total(e.calls()), e.calls())
	if again := e.oneRule(first, second); again.Id != rule.Id {
		t.Fatalf("the second VM made rule %s beside %s", again.Id, rule.Id)
	}

	e.resetCalls()
	e.call("delete_vm", first).ok(t)
	t.Logf("delete_vm of a VM with others behind its rule: %d CloudStack calls %v", total(e.calls()), e.calls())
	e.oneRule(second)
	if len(e.firewallRules()) != 1 {
		t.Fatal("the firewall rule went while a VM is still behind the rule")
	}

	// The director recreates the first instance: the new VM joins the rule.
	recreated := create("agent-lb-1b", "10.1.1.120")
	if again := e.oneRule(second, recreated); again.Id != rule.Id {
		t.Fatalf("the recreated VM made rule %s beside %s", again.Id, rule.Id)
	}
	e.call("delete_vm", recreated).ok(t)
	e.resetCalls()
	e.call("delete_vm", second).ok(t)
	t.Logf("delete_vm of the last VM behind a CPI-created rule: %d CloudStack calls %v", total(e.calls()), e.calls())
	if rules, fw := e.lbRules(), e.firewallRules(); len(rules) != 0 || len(fw) != 0 {
		t.Fatalf("after the last VM's delete_vm: %d rules, %d firewall rules", len(rules), len(fw))
	}
	// The last VM's delete_vm again (the director's retry) is a no-op.
	e.call("delete_vm", second).ok(t)

	// Without expunge, a Destroyed VM's mappings would stay until CloudStack
	// expunges it; delete_vm takes the VM from its rules itself.
	lone := create("agent-lb-3", "10.1.1.122")
	e.oneRule(lone)
	e.call("delete_vm", lone).ok(t)
	if rules := e.lbRules(); len(rules) != 0 {
		t.Fatalf("after delete_vm of the only VM: %d rules", len(rules))
	}
}

// TestLBsUseTheOperatorsRuleAndLeaveIt: a rule of that name that the
// operator made is joined and, when its last VM goes, left as it was.
func TestLBsUseTheOperatorsRuleAndLeaveIt(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) { cfg["cloudstack"].(map[string]any)["expunge_vm"] = false })
	stemcell := e.stemcell()
	ipID := e.allocateIP("192.168.2.123", "192.168.2.124")
	c := e.client()
	p := c.LoadBalancer.NewCreateLoadBalancerRuleParams("leastconn", "web", 8080, 80)
	p.SetPublicipid(ipID)
	p.SetOpenfirewall(false)
	p.SetDescription("the operator's")
	if _, err := c.LoadBalancer.CreateLoadBalancerRule(p); err != nil {
		t.Fatal(err)
	}
	// The operator's firewall rule for 443: open_firewall finds it open
	// and relates no rule of its own (createRuleForAllCidrs).
	fw := c.Firewall.NewCreateFirewallRuleParams(ipID, "tcp")
	fw.SetStartport(443)
	fw.SetEndport(443)
	if _, err := c.Firewall.CreateFirewallRule(fw); err != nil {
		t.Fatal(err)
	}
	entry := webEntry("192.168.2.124")
	entry["algorithm"] = "leastconn"
	tls := map[string]any{"name": "tls", "algorithm": "source", "private_port": 8443, "public_port": 443,
		"open_firewall": true, "public_ip": "192.168.2.124"}
	vm := cid(e.call("create_vm", "agent-lb-op", stemcell, lbVMType(entry, tls),
		map[string]any{"default": manualNet("10.1.1.124")}, []string{}, boshEnv).ok(t))
	var rule *csgo.LoadBalancerRule
	if n := len(e.lbRules()); n != 2 {
		t.Fatalf("%d rules, want the operator's web and the CPI's tls", n)
	}
	for _, r := range e.lbRules() {
		if got := e.lbVMs(r.Id); len(got) != 1 || got[0] != vm {
			t.Fatalf("VMs behind rule %s: %v, want %s", r.Name, got, vm)
		}
		if r.Name == "web" {
			rule = r
		}
	}
	e.call("delete_vm", vm).ok(t)
	after := e.oneRule()
	if after.Id != rule.Id || after.Description != "the operator's" || len(after.Tags) != 0 {
		t.Fatalf("the operator's rule became %+v", after)
	}
	if fws := e.firewallRules(); len(fws) != 1 || fws[0].Startport != 443 {
		t.Fatalf("the operator's firewall rule alone should stay: %+v", fws)
	}
}

// TestLBsBadEntriesAreRefusedBeforeAnythingIsCreated: an entry CloudStack
// would refuse fails create_vm naming the entry, before the deploy.
func TestLBsBadEntriesAreRefusedBeforeAnythingIsCreated(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	ipID := e.allocateIP("192.168.2.125", "192.168.2.126")
	c := e.client()
	p := c.LoadBalancer.NewCreateLoadBalancerRuleParams("roundrobin", "web", 9090, 80)
	p.SetPublicipid(ipID)
	if _, err := c.LoadBalancer.CreateLoadBalancerRule(p); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(map[string]any)) map[string]any {
		entry := webEntry("192.168.2.126")
		f(entry)
		return entry
	}
	vipNets := map[string]any{"default": manualNet("10.1.1.127"), "public": map[string]any{"type": "vip", "ip": "192.168.2.127"}}
	plain := map[string]any{"default": manualNet("10.1.1.127")}
	for _, c := range []struct {
		name     string
		entry    map[string]any
		networks map[string]any
		typ      string
		want     string
	}{
		{"an algorithm CloudStack does not know", edit(func(m map[string]any) { m["algorithm"] = "random" }), plain,
			"VMCreationFailed", `lbs[0] ("web"): algorithm "random" is not one CloudStack accepts`},
		{"port 0", edit(func(m map[string]any) { m["public_port"] = 0 }), plain,
			"VMCreationFailed", `lbs[0] ("web"): public_port 0 is not a port`},
		{"no name", edit(func(m map[string]any) { delete(m, "name") }), plain, "VMCreationFailed", "lbs[0] has no name"},
		{"an unknown key", edit(func(m map[string]any) { m["port"] = 80 }), plain, "VMCreationFailed", `unknown field "port"`},
		{"an address not allocated", edit(func(m map[string]any) { m["public_ip"] = "192.168.2.200" }), plain,
			"VMCreationFailed", `lbs entry "web" (public_ip 192.168.2.200): 192.168.2.200 is not an allocated public IP`},
		{"the VM's vip", edit(func(m map[string]any) { m["public_ip"] = "192.168.2.127" }), vipNets,
			"VMCreationFailed", "is this VM's vip"},
		{"a rule of that name with other ports", webEntry("192.168.2.126"), plain,
			"VMCreationFailed", "exists on 192.168.2.126 with public port 80 and private port 9090, not 80 and 8080"},
		{"another rule on the address's port", edit(func(m map[string]any) { m["name"] = "web2" }), plain,
			"VMCreationFailed", `("web") on 192.168.2.126 already has public port 80`},
	} {
		vms, vols, ips := e.live()
		rules := len(e.lbRules())
		e.resetCalls()
		e.call("create_vm", "agent-lb-bad", stemcell, lbVMType(c.entry), c.networks, []string{}, boshEnv).failed(t, c.typ, c.want)
		v2, vol2, ip2 := e.live()
		if v2 != vms || vol2 != vols || ip2 != ips || len(e.lbRules()) != rules || e.calls()["deployVirtualMachine"] != 0 {
			t.Errorf("%s: refused, but VMs %d→%d, volumes %d→%d, IPs %d→%d, rules %d→%d, deploys %d", c.name,
				vms, v2, vols, vol2, ips, ip2, rules, len(e.lbRules()), e.calls()["deployVirtualMachine"])
		}
	}
}

// operatorIPs allocates addresses as the operator does before naming them
// in lbs; they join the census baseline, since the director never owns
// them.
func (d *director) operatorIPs(ips ...string) {
	d.e.t.Helper()
	d.e.allocateIP(ips...)
	for _, r := range d.e.inventory() {
		if r.Kind == "public IP" {
			d.base[r.key()] = true
		}
	}
}
