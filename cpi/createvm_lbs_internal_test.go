package cpi

import (
	"errors"
	"strings"
	"testing"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

func webLB() vmtype.LB {
	return vmtype.LB{Name: "web", Algorithm: "roundrobin", PrivatePort: 8080, PublicPort: 80, PublicIP: "192.0.2.10"}
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
		l       vmtype.LB
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

// lbPart is the load-balancer part over a strict mock, for director dir.
func lbPart(t *testing.T) (lbs, *cloudstackmock.MockAPI) {
	cloud := cloudstackmock.NewMockAPI(gomock.NewController(t))
	return lbs{callDeps: callDeps{ctx: CallContext{DirectorUUID: "dir"}, logger: boshlog.NewLogger(boshlog.LevelNone)},
		cloud: cloud}, cloud
}

// TestLeavingLBsDeletesOnlyTheCPIsEmptyRules: the VM's removal deletes the
// rules this director's CPI created that it was the last VM behind, takes
// it from the others, and leaves an operator's or another director's rule
// with no VM as it is; an incomplete VM's removal also deletes the rules
// its create_vm created before assigning it. A VM made without lbs asks
// nothing (the strict mock fails on any call).
func TestLeavingLBsDeletesOnlyTheCPIsEmptyRules(t *testing.T) {
	ours := marks.LB{Director: "dir", Agent: "agent-1"}
	earlier := marks.LB{Director: "dir", Agent: "agent-0"}.Description()
	theirs := marks.LB{Director: "other-dir", Agent: "agent-1"}.Description()
	c, cloud := lbPart(t)
	withoutLBs := &cloudstack.VM{ID: "vm-1", DisplayName: "vm-1"}
	if err := c.leaveLBs(withoutLBs); err != nil {
		t.Fatalf("a complete VM made without lbs: %v", err)
	}
	complete := &cloudstack.VM{ID: "vm-1", DisplayName: "vm-1", Tags: map[string]string{marks.LBTag: "true"}}
	cloud.EXPECT().VMLBRules("vm-1").Return([]cloudstack.LBRule{{ID: "last", Description: earlier},
		{ID: "shared", Description: earlier}, {ID: "operator", Description: "ops"}, {ID: "foreign", Description: theirs}}, nil)
	for id, behind := range map[string][]string{"last": {"vm-1"}, "shared": {"vm-1", "vm-2"}, "operator": {"vm-1"},
		"foreign": {"vm-1"}} {
		cloud.EXPECT().LBRuleVMs(id).Return(behind, nil)
	}
	gomock.InOrder(
		cloud.EXPECT().DeleteLBRule("last").Return(nil),
		cloud.EXPECT().RemoveFromLBRule("shared", "vm-1").Return(nil),
		cloud.EXPECT().RemoveFromLBRule("operator", "vm-1").Return(nil),
		cloud.EXPECT().RemoveFromLBRule("foreign", "vm-1").Return(nil),
	)
	if err := c.leaveLBs(complete); err != nil {
		t.Fatal(err)
	}
	incomplete := &cloudstack.VM{ID: "vm-3", DisplayName: marks.NewVM("dir", "", "agent-1").DisplayName()}
	cloud.EXPECT().VMLBRules("vm-3").Return(nil, nil)
	cloud.EXPECT().LBRulesCreatedFor(ours).Return([]cloudstack.LBRule{{ID: "unassigned", Description: ours.Description()},
		{ID: "joined", Description: ours.Description()}}, nil)
	cloud.EXPECT().LBRuleVMs("unassigned").Return(nil, nil)
	cloud.EXPECT().LBRuleVMs("joined").Return([]string{"vm-2"}, nil)
	cloud.EXPECT().DeleteLBRule("unassigned").Return(nil)
	if err := c.leaveLBs(incomplete); err != nil {
		t.Fatal(err)
	}
}

// TestJoiningARuleThatWentMakesItAgain: the rule planLBs found was deleted
// by its last VM's delete_vm before the assign; the rule is made again,
// marked as this call's, and the VM put behind it. A rule that is still
// there when the assign fails is not made twice (the strict mock fails on
// a second CreateLBRule).
func TestJoiningARuleThatWentMakesItAgain(t *testing.T) {
	c, cloud := lbPart(t)
	old := &cloudstack.LBRule{ID: "old", Name: "web", PublicPort: 80, PrivatePort: 8080}
	planned := lbPlan{prop: webLB(), addr: &cloudstack.PublicIP{ID: "ip-1"}, rule: old}
	mark := marks.LB{Director: "dir", Agent: "agent-1"}
	refused := errors.New("Unable to find load balancer rule: 7")
	gomock.InOrder(
		cloud.EXPECT().AssignToLBRule("old", "vm-1").Return(refused),
		cloud.EXPECT().LBRulesOn("ip-1").Return(nil, nil),
		cloud.EXPECT().CreateLBRule(gomock.Any()).DoAndReturn(func(s cloudstack.LBSpec) (*cloudstack.LBRule, error) {
			if s.Mark != mark || s.Name != "web" || s.PublicIPID != "ip-1" {
				t.Errorf("the rule made again is %+v", s)
			}
			return &cloudstack.LBRule{ID: "new", Name: s.Name, Description: s.Mark.Description()}, nil
		}),
		cloud.EXPECT().AssignToLBRule("new", "vm-1").Return(nil),
	)
	if err := c.join(planned, "vm-1", mark); err != nil {
		t.Fatal(err)
	}
	gomock.InOrder(
		cloud.EXPECT().AssignToLBRule("old", "vm-1").Return(refused),
		cloud.EXPECT().LBRulesOn("ip-1").Return([]cloudstack.LBRule{*old}, nil),
	)
	if err := c.join(planned, "vm-1", mark); err == nil || !strings.Contains(err.Error(), "assigning VM vm-1 to load-balancer rule old") {
		t.Fatalf("a rule still there: %v", err)
	}
}
