package cloudstack_test

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

func TestMarkReadsBackFromTheDisplayName(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, m := range []cloudstack.Mark{
		cloudstack.NewMark("dir-1", "192.168.2.5", "agent-1"),
		cloudstack.NewMark("dir-1", "", "agent with spaces bosh-cpi-vip=1.2.3.4"),
		cloudstack.NewMark("", "", ""),
		cloudstack.NewMark("dir-1", "192.168.2.5", long),
	} {
		name := m.DisplayName()
		if n := len([]rune(name)); n > 255 {
			t.Errorf("display name of %d characters: vm_instance.display_name is varchar(255)", n)
		}
		got, ok := (&cloudstack.VM{DisplayName: name}).IncompleteMark()
		if !ok || got != m {
			t.Errorf("%q reads back as %+v (%v), want %+v", name, got, ok, m)
		}
	}
	if m := cloudstack.NewMark("d", "", long); m != cloudstack.NewMark("d", "", long+"b") || !strings.HasPrefix(long, m.Agent) {
		t.Errorf("a cut agent id must compare equal to itself cut the same way: %q", m.Agent)
	}
	for _, name := range []string{"vm-1234", "web_0", "bosh-cpi-incomplete", "bosh-cpi-incomplete bosh-director-uuid=d",
		"x bosh-cpi-incomplete bosh-director-uuid=d bosh-cpi-vip= bosh-agent-id=a"} {
		if m, ok := (&cloudstack.VM{DisplayName: name}).IncompleteMark(); ok {
			t.Errorf("%q is no mark, read as %+v", name, m)
		}
	}
}

func TestAcquiredForTrustsTheTagOrAnUntaggedIntent(t *testing.T) {
	mark := cloudstack.NewMark("d", "192.168.2.5", "a").DisplayName()
	incomplete := &cloudstack.VM{ID: "vm-1", DisplayName: mark, NICs: []cloudstack.NIC{{NetworkID: "net-1"}}}
	complete := &cloudstack.VM{ID: "vm-1", DisplayName: "vm-1", NICs: incomplete.NICs}
	acquired := map[string]string{cloudstack.AcquiredTag: "true"}
	for _, c := range []struct {
		what string
		addr cloudstack.PublicIP
		vm   *cloudstack.VM
		want bool
	}{
		{"tagged, static NAT to the VM", cloudstack.PublicIP{IP: "192.168.2.9", VMID: "vm-1", Tags: acquired}, complete, true},
		{"tagged, static NAT to another VM", cloudstack.PublicIP{IP: "192.168.2.5", VMID: "vm-2", Tags: acquired}, incomplete, false},
		{"untagged, intended, on the VM's network", cloudstack.PublicIP{IP: "192.168.2.5", NetworkID: "net-1"}, incomplete, true},
		{"untagged, static NAT to the VM", cloudstack.PublicIP{IP: "192.168.2.5", NetworkID: "net-1", VMID: "vm-1"}, incomplete, true},
		{"untagged, the VM complete", cloudstack.PublicIP{IP: "192.168.2.5", NetworkID: "net-1"}, complete, false},
		{"untagged, another address", cloudstack.PublicIP{IP: "192.168.2.6", NetworkID: "net-1"}, incomplete, false},
		{"untagged, intended, not associated yet", cloudstack.PublicIP{IP: "192.168.2.5"}, incomplete, true},
		{"untagged, another network", cloudstack.PublicIP{IP: "192.168.2.5", NetworkID: "net-2"}, incomplete, false},
		{"untagged, source NAT", cloudstack.PublicIP{IP: "192.168.2.5", NetworkID: "net-1", SourceNAT: true}, incomplete, false},
		{"the operator's tags", cloudstack.PublicIP{IP: "192.168.2.5", NetworkID: "net-1", Tags: map[string]string{"owner": "ops"}}, incomplete, false},
	} {
		if got := c.addr.AcquiredFor(c.vm); got != c.want {
			t.Errorf("%s: AcquiredFor = %v, want %v", c.what, got, c.want)
		}
	}
}

func TestLBMarkReadsBackFromTheDescription(t *testing.T) {
	m := cloudstack.LBMark{Director: "dir-1", Agent: "agent-1"}
	r := &cloudstack.LBRule{Description: m.Description()}
	if got, ok := r.Mark(); !ok || got != m || !r.CreatedBy("dir-1") || r.CreatedBy("dir-2") {
		t.Errorf("%q reads back as %+v (%v)", r.Description, got, ok)
	}
	for _, desc := range []string{"", "web servers", "bosh-cpi-created", "bosh-cpi-created bosh-director-uuid=dir-1"} {
		if r := (&cloudstack.LBRule{Description: desc}); r.CreatedBy("dir-1") {
			t.Errorf("an operator's rule described %q is taken for the CPI's", desc)
		}
	}
}
