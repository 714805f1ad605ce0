package cpi

import (
	"errors"
	"slices"
	"strings"
	"testing"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

func webLB() lbProp {
	return lbProp{Name: "web", Algorithm: "roundrobin", PrivatePort: 8080, PublicPort: 80, PublicIP: "192.0.2.10"}
}

func TestLBEntriesCloudStackWouldRefuseAreRefusedNamingTheEntry(t *testing.T) {
	for want, edit := range map[string]func(*lbProp){
		"lbs[0] has no name":                                     func(l *lbProp) { l.Name = " " },
		`lbs[0] ("web"): algorithm "random" is not one`:          func(l *lbProp) { l.Algorithm = "random" },
		`lbs[0] ("web"): public_port 0 is not a port`:            func(l *lbProp) { l.PublicPort = 0 },
		`lbs[0] ("web"): private_port 65536 is not a port`:       func(l *lbProp) { l.PrivatePort = 65536 },
		`lbs[0] ("web"): public_ip is missing`:                   func(l *lbProp) { l.PublicIP = "" },
		`lbs[0] ("web"): public_ip "2001:db8::1" is not an IPv4`: func(l *lbProp) { l.PublicIP = "2001:db8::1" },
	} {
		l := webLB()
		edit(&l)
		if err := checkLBProps([]lbProp{l}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", l, err, want)
		}
	}
	if err := checkLBProps([]lbProp{webLB(), webLB()}); err == nil || !strings.Contains(err.Error(), "lbs[1]") {
		t.Errorf("a duplicate entry: %v", err)
	}
	for _, a := range []string{"roundrobin", "leastconn", "source", "RoundRobin"} {
		l := webLB()
		l.Algorithm = a
		if err := checkLBProps([]lbProp{l}); err != nil {
			t.Errorf("algorithm %q: %v", a, err)
		}
	}
}

func TestLBNetworkFollowsTheAddress(t *testing.T) {
	nics := []nicPlan{{name: "a", network: cloudstack.Network{ID: "net-a"}},
		{name: "b", network: cloudstack.Network{ID: "tier-b", VPCID: "vpc-1"}}}
	open := webLB()
	open.OpenFirewall = true
	dns := webLB()
	dns.PublicPort = 53
	cases := []struct {
		name    string
		l       lbProp
		addr    *cloudstack.PublicIP
		vip     string
		network string
		err     string
	}{
		{"not allocated", webLB(), nil, "", "", "is not an allocated public IP address"},
		{"the vip", webLB(), &cloudstack.PublicIP{NetworkID: "net-a"}, "192.0.2.10", "", "is this VM's vip"},
		{"static NAT", webLB(), &cloudstack.PublicIP{NetworkID: "net-a", StaticNAT: true, VMID: "vm-9"}, "", "",
			"is static NAT to VM vm-9"},
		{"source NAT, port 53", dns, &cloudstack.PublicIP{NetworkID: "net-a", SourceNAT: true}, "", "", "port 53"},
		{"source NAT", webLB(), &cloudstack.PublicIP{NetworkID: "net-a", SourceNAT: true}, "", "", ""},
		{"another network", webLB(), &cloudstack.PublicIP{NetworkID: "net-z"}, "", "", "on which this VM has no NIC"},
		{"its network", webLB(), &cloudstack.PublicIP{NetworkID: "net-a"}, "", "", ""},
		{"no network", webLB(), &cloudstack.PublicIP{}, "", "", "is not associated with a network"},
		{"VPC, open_firewall", open, &cloudstack.PublicIP{VPCID: "vpc-1"}, "", "", "refuses open_firewall"},
		{"VPC, no tier yet", webLB(), &cloudstack.PublicIP{VPCID: "vpc-1"}, "", "tier-b", ""},
		{"VPC, its tier", webLB(), &cloudstack.PublicIP{VPCID: "vpc-1", NetworkID: "tier-b"}, "", "", ""},
		{"another VPC", webLB(), &cloudstack.PublicIP{VPCID: "vpc-2"}, "", "", "no NIC on a tier of it"},
	}
	for _, c := range cases {
		network, err := lbNetwork(c.l, c.addr, c.vip, nics)
		switch {
		case c.err == "" && err != nil, c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		case err == nil && network != c.network:
			t.Errorf("%s: network %q, want %q", c.name, network, c.network)
		case err != nil && !strings.Contains(err.Error(), `lbs entry "web" (public_ip 192.0.2.10)`):
			t.Errorf("%s: %v does not name the entry", c.name, err)
		}
	}
}

func TestAnExistingRuleMustHaveTheEntrysPorts(t *testing.T) {
	rules := []cloudstack.LBRule{{ID: "r1", Name: "web", PublicPort: 80, PrivatePort: 8080},
		{ID: "r2", Name: "api", PublicPort: 443, PrivatePort: 8443}}
	if r, err := existingRule(webLB(), rules); err != nil || r == nil || r.ID != "r1" {
		t.Errorf("same name, same ports: %v, %v", r, err)
	}
	other := webLB()
	other.PrivatePort = 80
	if _, err := existingRule(other, rules); err == nil || !strings.Contains(err.Error(), "private port 8080, not 80 and 80") {
		t.Errorf("other private port: %v", err)
	}
	taken := webLB()
	taken.Name, taken.PublicPort = "web2", 443
	if _, err := existingRule(taken, rules); err == nil || !strings.Contains(err.Error(), `rule r2 ("api") on 192.0.2.10 already has public port 443`) {
		t.Errorf("a port another rule has: %v", err)
	}
	fresh := webLB()
	fresh.Name, fresh.PublicPort = "web3", 8000
	if r, err := existingRule(fresh, rules); r != nil || err != nil {
		t.Errorf("a new rule: %v, %v", r, err)
	}
	named := webLB()
	named.Name = "WEB" // CloudStack's name filter ignores case; the entry's rule is the one of its exact name
	if _, err := existingRule(named, rules); err == nil {
		t.Error("a rule named differently but on the entry's port was taken for the entry's")
	}
}

// fakeLBs holds rules and the VMs behind them, and records what the CPI
// did to them.
type fakeLBs struct {
	lbCloud
	rules  []cloudstack.LBRule
	behind map[string][]string
	did    []string
	listed int // VMLBRules calls
}

func (f *fakeLBs) VMLBRules(vmID string) ([]cloudstack.LBRule, error) {
	f.listed++
	var out []cloudstack.LBRule
	for _, r := range f.rules {
		if slices.Contains(f.behind[r.ID], vmID) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f *fakeLBs) LBRulesCreatedFor(m cloudstack.LBMark) ([]cloudstack.LBRule, error) {
	var out []cloudstack.LBRule
	for _, r := range f.rules {
		if got, ok := r.Mark(); ok && got == m {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f *fakeLBs) LBRuleVMs(id string) ([]string, error) { return f.behind[id], nil }

func (f *fakeLBs) DeleteLBRule(id string) error {
	f.did = append(f.did, "delete "+id)
	return nil
}

func (f *fakeLBs) RemoveFromLBRule(id, vmID string) error {
	f.did = append(f.did, "remove "+vmID+" from "+id)
	return nil
}

// TestLeavingLBsDeletesOnlyTheCPIsEmptyRules: the VM's removal deletes the
// rules this director's CPI created that it was the last VM behind, takes
// it from the others, and leaves an operator's or another director's rule
// with no VM as it is; an incomplete VM's removal also deletes the rules
// its create_vm created before assigning it.
func TestLeavingLBsDeletesOnlyTheCPIsEmptyRules(t *testing.T) {
	ours := cloudstack.LBMark{Director: "dir", Agent: "agent-1"}.Description()
	earlier := cloudstack.LBMark{Director: "dir", Agent: "agent-0"}.Description()
	theirs := cloudstack.LBMark{Director: "other-dir", Agent: "agent-1"}.Description()
	cloud := &fakeLBs{rules: []cloudstack.LBRule{
		{ID: "last", Description: earlier}, {ID: "shared", Description: earlier}, {ID: "operator", Description: "ops"},
		{ID: "foreign", Description: theirs}, {ID: "unassigned", Description: ours}, {ID: "joined", Description: ours},
	}, behind: map[string][]string{"last": {"vm-1"}, "shared": {"vm-1", "vm-2"}, "operator": {"vm-1"},
		"foreign": {"vm-1"}, "joined": {"vm-2"}}}
	c := lbs{request: request{ctx: CallContext{DirectorUUID: "dir"}, logger: boshlog.NewLogger(boshlog.LevelNone)}, cloud: cloud}
	withoutLBs := &cloudstack.VM{ID: "vm-1", DisplayName: "vm-1"}
	if err := c.leaveLBs(withoutLBs); err != nil || len(cloud.did) != 0 || cloud.listed != 0 {
		t.Fatalf("a complete VM made without lbs: %v, did %q after %d listings, want nothing", err, cloud.did, cloud.listed)
	}
	complete := &cloudstack.VM{ID: "vm-1", DisplayName: "vm-1", Tags: map[string]string{cloudstack.LBTag: "true"}}
	if err := c.leaveLBs(complete); err != nil {
		t.Fatal(err)
	}
	want := []string{"delete last", "remove vm-1 from shared", "remove vm-1 from operator", "remove vm-1 from foreign"}
	if !slices.Equal(cloud.did, want) {
		t.Errorf("a complete VM's removal did %q, want %q", cloud.did, want)
	}
	cloud.did, cloud.behind = nil, map[string][]string{"joined": {"vm-2"}}
	incomplete := &cloudstack.VM{ID: "vm-3", DisplayName: cloudstack.NewMark("dir", "", "agent-1").DisplayName()}
	if err := c.leaveLBs(incomplete); err != nil {
		t.Fatal(err)
	}
	if want := []string{"delete unassigned"}; !slices.Equal(cloud.did, want) {
		t.Errorf("an incomplete VM's removal did %q, want %q", cloud.did, want)
	}
}

// joinCloud answers assign, list and create for one address.
type joinCloud struct {
	fakeLBs
	onIP     []cloudstack.LBRule
	refuse   map[string]bool // rule ids whose assign fails
	assigned []string
	created  []cloudstack.LBSpec
}

func (f *joinCloud) LBRulesOn(string) ([]cloudstack.LBRule, error) { return f.onIP, nil }

func (f *joinCloud) AssignToLBRule(id, vmID string) error {
	if f.refuse[id] {
		return errors.New("Unable to find load balancer rule: 7")
	}
	f.assigned = append(f.assigned, id+"<-"+vmID)
	return nil
}

func (f *joinCloud) CreateLBRule(s cloudstack.LBSpec) (*cloudstack.LBRule, error) {
	f.created = append(f.created, s)
	r := cloudstack.LBRule{ID: "new", Name: s.Name, Description: s.Mark.Description()}
	f.onIP = append(f.onIP, r)
	return &r, nil
}

// TestJoiningARuleThatWentMakesItAgain: the rule planLBs found was deleted
// by its last VM's delete_vm before the assign; the rule is made again,
// marked as this call's, and the VM put behind it. A rule that is still
// there when the assign fails is not made twice.
func TestJoiningARuleThatWentMakesItAgain(t *testing.T) {
	cloud := &joinCloud{refuse: map[string]bool{"old": true}}
	c := lbs{request: request{ctx: CallContext{DirectorUUID: "dir"}, logger: boshlog.NewLogger(boshlog.LevelNone)}, cloud: cloud}
	old := &cloudstack.LBRule{ID: "old", Name: "web", PublicPort: 80, PrivatePort: 8080}
	v := &vmCreation{vms: vms{request: c.request, lbs: c}, vm: &cloudstack.VM{ID: "vm-1"}, mark: cloudstack.NewMark("dir", "", "agent-1"),
		lbs: []lbPlan{{prop: webLB(), addr: &cloudstack.PublicIP{ID: "ip-1"}, rule: old}}}
	if err := v.joinLBs(); err != nil {
		t.Fatal(err)
	}
	if len(cloud.created) != 1 || cloud.created[0].Mark != (cloudstack.LBMark{Director: "dir", Agent: "agent-1"}) ||
		!slices.Equal(cloud.assigned, []string{"new<-vm-1"}) {
		t.Fatalf("created %+v, assigned %q", cloud.created, cloud.assigned)
	}
	cloud = &joinCloud{refuse: map[string]bool{"old": true}, onIP: []cloudstack.LBRule{*old}}
	v.vms.lbs.cloud = cloud
	if err := v.joinLBs(); err == nil || !strings.Contains(err.Error(), "assigning VM vm-1 to load-balancer rule old") ||
		len(cloud.created) != 0 {
		t.Fatalf("a rule still there: %v, created %+v", err, cloud.created)
	}
}
