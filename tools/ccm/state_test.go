package ccm

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// balancer is what a Service's load balancer must be in CloudStack.
type balancer struct {
	name      string // the provider's load balancer name; its rules are name-tcp-PORT
	ip        string // the public address
	algorithm string
	cidrs     []string // the rules' CIDR list, and the firewall rules' (isolated network)
	members   []string // node names
}

// servicePorts are service()'s ports: public port → node port.
var servicePorts = map[int]int{80: 30080, 8080: 30081}

// state is what the provider may change in CloudStack, in a topology's
// scope (the admin's account, or the project), each row as a sentence.
type state map[string][]string

// snapshot reads the allocated public addresses, load balancer rules,
// firewall rules and (on a VPC tier) the ACL list's items.
func (c *cloud) snapshot(t *testing.T, top topology) state {
	t.Helper()
	st := state{}
	for _, ip := range c.addresses(t, top, "") {
		st["address"] = append(st["address"], fmt.Sprintf("%s %s network %s vpc %s", ip.Id, ip.Ipaddress, ip.Associatednetworkid, ip.Vpcid))
	}
	for _, r := range c.rules(t, top, "") {
		st["load balancer rule"] = append(st["load balancer rule"], fmt.Sprintf("%s %s on %s", r.Id, r.Name, r.Publicip))
	}
	for _, r := range c.firewall(t, top, "") {
		st["firewall rule"] = append(st["firewall rule"], fmt.Sprintf("%s %s %d-%d from %s on %s", r.Id, r.Protocol, r.Startport, r.Endport, r.Cidrlist, r.Ipaddress))
	}
	for _, r := range c.aclItems(t, top) {
		st["ACL item"] = append(st["ACL item"], fmt.Sprintf("%s %s %s-%s from %s", r.Id, r.Protocol, r.Startport, r.Endport, r.Cidrlist))
	}
	for k := range st {
		slices.Sort(st[k])
	}
	return st
}

// diff names the rows in one state and not the other, "" if none.
func (s state) diff(after state) string {
	var b strings.Builder
	for _, kind := range []string{"address", "load balancer rule", "firewall rule", "ACL item"} {
		for _, row := range s[kind] {
			if !slices.Contains(after[kind], row) {
				fmt.Fprintf(&b, "  gone: %s %s\n", kind, row)
			}
		}
		for _, row := range after[kind] {
			if !slices.Contains(s[kind], row) {
				fmt.Fprintf(&b, "  left: %s %s\n", kind, row)
			}
		}
	}
	return b.String()
}

// expectBalancer checks the rules, their members, and the firewall rules
// or ACL items of want, and returns the rules' ids by name.
func (c *cloud) expectBalancer(t *testing.T, top topology, want balancer) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, r := range c.rules(t, top, want.name) {
		ids[r.Name] = r.Id
		var port, node int
		if _, err := fmt.Sscanf(r.Publicport+" "+r.Privateport, "%d %d", &port, &node); err != nil || servicePorts[port] != node {
			t.Errorf("rule %s forwards %s to %s, not a port of the Service", r.Name, r.Publicport, r.Privateport)
		}
		if r.Name != fmt.Sprintf("%s-tcp-%d", want.name, port) || r.Protocol != "tcp" || r.Publicip != want.ip ||
			r.Algorithm != want.algorithm || r.Networkid != top.networkID || !sameSet(cidrList(r.Cidrlist), want.cidrs) {
			t.Errorf("rule %+v, want %s-tcp-%d on %s, algorithm %s, CIDRs %v, network %s",
				*r, want.name, port, want.ip, want.algorithm, want.cidrs, top.networkID)
		}
		if got := c.members(t, r.Id); !sameSet(got, want.members) {
			t.Errorf("rule %s balances %v, want %v", r.Name, got, want.members)
		}
	}
	if len(ids) != len(servicePorts) {
		t.Errorf("rules %v, want one a port of %v", ids, servicePorts)
	}
	if top.vpcID == "" {
		c.expectFirewall(t, top, want)
	} else {
		c.expectACL(t, top)
	}
	return ids
}

// expectFirewall: one ingress rule a port on the address, from want.cidrs.
func (c *cloud) expectFirewall(t *testing.T, top topology, want balancer) {
	t.Helper()
	rules := c.firewall(t, top, want.ip)
	for _, r := range rules {
		if r.Protocol != "tcp" || r.Startport != r.Endport || servicePorts[r.Startport] == 0 || !sameSet(cidrList(r.Cidrlist), want.cidrs) {
			t.Errorf("firewall rule %+v, want tcp on a port of %v from %v", *r, servicePorts, want.cidrs)
		}
	}
	if len(rules) != len(servicePorts) {
		t.Errorf("%d firewall rules on %s, want one a port", len(rules), want.ip)
	}
}

// expectACL: one item a port in the tier's custom ACL list allowing
// ingress from anywhere (the provider's only ACL rule).
func (c *cloud) expectACL(t *testing.T, top topology) {
	t.Helper()
	items := c.aclItems(t, top)
	for _, r := range items {
		var port int
		if _, err := fmt.Sscanf(r.Startport, "%d", &port); err != nil || r.Endport != r.Startport || servicePorts[port] == 0 ||
			r.Protocol != "tcp" || r.Action != "Allow" || r.Traffictype != "Ingress" || r.Cidrlist != "0.0.0.0/0" {
			t.Errorf("ACL item %+v, want tcp ingress allowed from 0.0.0.0/0 on a port of %v", *r, servicePorts)
		}
	}
	if len(items) != len(servicePorts) {
		t.Errorf("%d ACL items in %s, want one a port", len(items), aclListName)
	}
}

// expectAddress: the address is allocated, associated with the
// topology's network (a VPC address with the tier once a rule balances on
// it) and, in a VPC, with the VPC.
func (c *cloud) expectAddress(t *testing.T, top topology, ip string) {
	t.Helper()
	l := c.addresses(t, top, ip)
	if len(l) != 1 {
		t.Fatalf("listPublicIpAddresses ipaddress=%s: %d addresses", ip, len(l))
	}
	a := l[0]
	if a.Allocated == "" || a.Associatednetworkid != top.networkID || a.Vpcid != top.vpcID || a.Networkid == "" {
		t.Errorf("address %s: allocated %q, associated network %q, VPC %q, public network %q; want allocated, on network %s, VPC %q, a public network",
			ip, a.Allocated, a.Associatednetworkid, a.Vpcid, a.Networkid, top.networkID, top.vpcID)
	}
}

// cidrList splits a CIDR list as CloudStack answers it.
func cidrList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

func sameSet(a, b []string) bool {
	return slices.Equal(sorted(a), sorted(b))
}

// scoped sets a list command's scope: all the root admin sees, in the
// topology's project if it has one (without projectid CloudStack lists no
// project's resources).
func scoped[P interface {
	SetListall(bool)
	SetProjectid(string)
}](top topology, p P) P {
	p.SetListall(true)
	if top.projectID != "" {
		p.SetProjectid(top.projectID)
	}
	return p
}

// addresses lists the scope's allocated public addresses (only ip, if given).
func (c *cloud) addresses(t *testing.T, top topology, ip string) []*cloudstack.PublicIpAddress {
	t.Helper()
	p := scoped(top, c.cs.Address.NewListPublicIpAddressesParams())
	p.SetAllocatedonly(true)
	if ip != "" {
		p.SetIpaddress(ip)
	}
	l, err := c.cs.Address.ListPublicIpAddresses(p)
	if err != nil {
		t.Fatalf("listPublicIpAddresses: %v", err)
	}
	return l.PublicIpAddresses
}

// rules lists the scope's load balancer rules (named with keyword, if given).
func (c *cloud) rules(t *testing.T, top topology, keyword string) []*cloudstack.LoadBalancerRule {
	t.Helper()
	p := scoped(top, c.cs.LoadBalancer.NewListLoadBalancerRulesParams())
	if keyword != "" {
		p.SetKeyword(keyword)
	}
	l, err := c.cs.LoadBalancer.ListLoadBalancerRules(p)
	if err != nil {
		t.Fatalf("listLoadBalancerRules: %v", err)
	}
	return l.LoadBalancerRules
}

// firewall lists the scope's firewall rules (on the address ip, if given).
func (c *cloud) firewall(t *testing.T, top topology, ip string) []*cloudstack.FirewallRule {
	t.Helper()
	p := scoped(top, c.cs.Firewall.NewListFirewallRulesParams())
	if ip != "" {
		l := c.addresses(t, top, ip)
		if len(l) != 1 {
			t.Fatalf("listPublicIpAddresses ipaddress=%s: %d addresses", ip, len(l))
		}
		p.SetIpaddressid(l[0].Id)
	}
	l, err := c.cs.Firewall.ListFirewallRules(p)
	if err != nil {
		t.Fatalf("listFirewallRules: %v", err)
	}
	return l.FirewallRules
}

// aclItems lists the items of the tier's ACL list (none without a VPC).
func (c *cloud) aclItems(t *testing.T, top topology) []*cloudstack.NetworkACL {
	t.Helper()
	if top.aclID == "" {
		return nil
	}
	p := scoped(top, c.cs.NetworkACL.NewListNetworkACLsParams())
	p.SetAclid(top.aclID)
	l, err := c.cs.NetworkACL.ListNetworkACLs(p)
	if err != nil {
		t.Fatalf("listNetworkACLs aclid=%s: %v", top.aclID, err)
	}
	return l.NetworkACLs
}

// members names the VMs a rule balances.
func (c *cloud) members(t *testing.T, ruleID string) []string {
	t.Helper()
	l, err := c.cs.LoadBalancer.ListLoadBalancerRuleInstances(c.cs.LoadBalancer.NewListLoadBalancerRuleInstancesParams(ruleID))
	if err != nil {
		t.Fatalf("listLoadBalancerRuleInstances id=%s: %v", ruleID, err)
	}
	var names []string
	for _, vm := range l.LoadBalancerRuleInstances {
		names = append(names, vm.Name)
	}
	return names
}

// publicIP is an address the operator associated.
type publicIP struct{ id, address string }

// associate associates an address as an operator would for the topology:
// with the isolated network, or with the VPC.
func (c *cloud) associate(t *testing.T, top topology) publicIP {
	t.Helper()
	p := c.cs.Address.NewAssociateIpAddressParams()
	if top.vpcID != "" {
		p.SetVpcid(top.vpcID)
	} else {
		p.SetNetworkid(top.networkID)
	}
	if top.projectID != "" {
		p.SetProjectid(top.projectID)
	}
	r, err := c.cs.Address.AssociateIpAddress(p)
	if err != nil {
		t.Fatalf("associateIpAddress: %v", err)
	}
	return publicIP{id: r.Id, address: r.Ipaddress}
}

func (c *cloud) disassociate(t *testing.T, ip publicIP) {
	if _, err := c.cs.Address.DisassociateIpAddress(c.cs.Address.NewDisassociateIpAddressParams(ip.id)); err != nil {
		t.Errorf("disassociateIpAddress %s: %v", ip.address, err)
	}
}

// clearRequests empties the simulator's request log.
func (c *cloud) clearRequests(t *testing.T) {
	t.Helper()
	if err := c.sim.Admin.ClearRequests(); err != nil {
		t.Fatal(err)
	}
}

// checkpoint checks every request since the log was cleared (expectNoErrors)
// and clears it.
func (c *cloud) checkpoint(t *testing.T) {
	t.Helper()
	c.expectNoErrors(t)
	c.clearRequests(t)
}

// changes are the commands that change what a load balancer is made of.
var changes = []string{"associateIpAddress", "disassociateIpAddress", "createLoadBalancerRule", "updateLoadBalancerRule",
	"deleteLoadBalancerRule", "assignToLoadBalancerRule", "removeFromLoadBalancerRule", "createFirewallRule",
	"deleteFirewallRule", "createNetworkACL", "deleteNetworkACL"}

// expectNoChange: no request since the log was cleared changed anything,
// but for updateLoadBalancerRule with the values want already has (the
// provider's redundant updates, expectUnchanged), which it counts.
func (c *cloud) expectNoChange(t *testing.T, want balancer) (redundant int) {
	t.Helper()
	reqs, err := c.sim.Admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if !slices.ContainsFunc(changes, func(cmd string) bool { return strings.EqualFold(cmd, r.Command) }) {
			continue
		}
		if r.Command == "updateLoadBalancerRule" && r.Params["algorithm"] == want.algorithm &&
			r.Params["cidrlist"] == strings.Join(want.cidrs, ",") && r.Params["protocol"] == "tcp" {
			redundant++
			continue
		}
		t.Errorf("EnsureLoadBalancer without a change sent %s %v", r.Command, r.Params)
	}
	return redundant
}

// expectNoErrors: every request since the log was cleared was answered
// without an error, and every job it queued succeeded. The provider logs
// some errors and carries on (a firewall rule it could not delete), so its
// return values alone would not show them.
func (c *cloud) expectNoErrors(t *testing.T) {
	t.Helper()
	reqs, err := c.sim.Admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.Status != 200 {
			t.Errorf("%s %v was answered %d", r.Command, r.Params, r.Status)
			continue
		}
		if r.JobID == "" {
			continue
		}
		job, err := c.cs.Asyncjob.QueryAsyncJobResult(c.cs.Asyncjob.NewQueryAsyncJobResultParams(r.JobID))
		if err != nil {
			t.Errorf("queryAsyncJobResult of %s's job %s: %v", r.Command, r.JobID, err)
		} else if job.Jobstatus != 1 {
			t.Errorf("%s %v: its job ended with status %d: %s", r.Command, r.Params, job.Jobstatus, job.Jobresult)
		}
	}
}
