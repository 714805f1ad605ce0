package cpi

import (
	"strings"
	"testing"

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

func TestAnExistingRuleWithOtherPortsIsRefused(t *testing.T) {
	if err := sameRule(webLB(), &cloudstack.LBRule{ID: "r", PublicPort: 80, PrivatePort: 8080}); err != nil {
		t.Errorf("same ports: %v", err)
	}
	err := sameRule(webLB(), &cloudstack.LBRule{ID: "r", PublicPort: 80, PrivatePort: 80})
	if err == nil || !strings.Contains(err.Error(), "private port 80, not 80 and 8080") {
		t.Errorf("other private port: %v", err)
	}
}
