package vmtype

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func webLB() LB {
	return LB{Name: "web", Algorithm: "roundrobin", PrivatePort: 8080, PublicPort: 80, PublicIP: "192.0.2.10"}
}

// TestEarlierCPIsVMKeysKeepTheirMeaning: the Java CPI's and the Go CPI's VM
// types decode to the same VM as ours.
func TestEarlierCPIsVMKeysKeepTheirMeaning(t *testing.T) {
	for raw, want := range map[string]Props{
		// The Java CPI's resource pool (seed 004).
		`{"compute_offering":"CO2 - Medium STD","disk":20000,"ephemeral_disk_offering":"custom_size_disk_offering2"}`: {
			ComputeOffering: "CO2 - Medium STD", EphemeralDiskSize: 20000, EphemeralDiskOffering: "custom_size_disk_offering2"},
		// bosh-deployment's cloudstack/cpi.yml.
		`{"compute_offering":"Small","disk":25000,"ephemeral_disk_offering":"shared.custom","root_disk_size":15000}`: {
			ComputeOffering: "Small", EphemeralDiskSize: 25000, EphemeralDiskOffering: "shared.custom", RootDiskSize: 15000},
		// The Go CPI's custom offering, affinity and ignored disk_offering.
		`{"compute_offering":"Custom","cpu":2,"ram":2048,"cpu_speed":1000,"disk_offering":"x","affinity_group":"g",` +
			`"affinity_group_type":"host affinity","lbs":[]}`: {ComputeOffering: "Custom", CPU: 2, RAM: 2048, CPUSpeed: 1000,
			DiskOffering: "x", AffinityGroup: "g", AffinityGroupType: "host affinity"},
		`{"disk":2048,"ephemeral_disk_size":2048}`: {EphemeralDiskSize: 2048},
		`{"ephemeral_disk_size":1024}`:             {EphemeralDiskSize: 1024},
	} {
		got, err := Read(json.RawMessage(raw))
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		got.Disk, got.LBs = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", raw, got, want)
		}
	}
}

func TestVMKeysNoVocabularyKnowsAreRefused(t *testing.T) {
	for raw, want := range map[string]string{
		`{"disk":2048,"ephemeral_disk_size":4096}`: "disk (2048 MiB) and ephemeral_disk_size (4096 MiB) both size the ephemeral disk and differ",
		`{"disk":0,"ephemeral_disk_size":4096}`:    "disk (0 MiB) and ephemeral_disk_size (4096 MiB)",
		`{"dsk":2048}`:                             `VM cloud_properties: unknown field "dsk"`,
		`{"lbs":[{"name":"web","algorithm":"roundrobin","private_port":80,"public_port":80}]}`:                                `lbs[0] ("web"): public_ip is missing`,
		`{"lbs":[{"name":"web","algorithm":"roundrobin","private_port":80,"public_port":80,"public_ip":"1.2.3.4","port":1}]}`: `unknown field "port"`,
		`{"affinity_group":"g","affinity_group_type":"rack affinity"}`:                                                        `affinity_group_type is "rack affinity"`,
		`{"disk":-1}`: "must not be negative",
		`{"routes":{"default":[{"cidr":"10.2.0.0/16","via":"10.1.1.1"}]}}`: `unknown field "via"`,
	} {
		if _, err := Read(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

func TestLBEntriesCloudStackWouldRefuseAreRefusedNamingTheEntry(t *testing.T) {
	for want, edit := range map[string]func(*LB){
		"lbs[0] has no name":                                     func(l *LB) { l.Name = " " },
		`lbs[0] ("web"): algorithm "random" is not one`:          func(l *LB) { l.Algorithm = "random" },
		`lbs[0] ("web"): public_port 0 is not a port`:            func(l *LB) { l.PublicPort = 0 },
		`lbs[0] ("web"): private_port 65536 is not a port`:       func(l *LB) { l.PrivatePort = 65536 },
		`lbs[0] ("web"): public_ip is missing`:                   func(l *LB) { l.PublicIP = "" },
		`lbs[0] ("web"): public_ip "2001:db8::1" is not an IPv4`: func(l *LB) { l.PublicIP = "2001:db8::1" },
	} {
		l := webLB()
		edit(&l)
		if err := checkLBs([]LB{l}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", l, err, want)
		}
	}
	if err := checkLBs([]LB{webLB(), webLB()}); err == nil || !strings.Contains(err.Error(), "lbs[1]") {
		t.Errorf("a duplicate entry: %v", err)
	}
	for _, a := range []string{"roundrobin", "leastconn", "source", "RoundRobin"} {
		l := webLB()
		l.Algorithm = a
		if err := checkLBs([]LB{l}); err != nil {
			t.Errorf("algorithm %q: %v", a, err)
		}
	}
}
