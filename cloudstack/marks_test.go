package cloudstack_test

import (
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

func TestAcquiredForTrustsTheTagOrAnUntaggedIntent(t *testing.T) {
	mark := marks.NewVM("d", "192.168.2.5", "a").DisplayName()
	incomplete := &cloudstack.VM{ID: "vm-1", DisplayName: mark, NICs: []cloudstack.NIC{{NetworkID: "net-1"}}}
	complete := &cloudstack.VM{ID: "vm-1", DisplayName: "vm-1", NICs: incomplete.NICs}
	acquired := map[string]string{marks.AcquiredTag: "true"}
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

// TestLBRuleCreatedBy: a rule is this director's when its description
// carries the director's mark, never when it is an operator's.
func TestLBRuleCreatedBy(t *testing.T) {
	m := marks.LB{Director: "dir-1", Agent: "agent-1"}
	r := &cloudstack.LBRule{Description: m.Description()}
	if got, ok := r.Mark(); !ok || got != m || !r.CreatedBy("dir-1") || r.CreatedBy("dir-2") {
		t.Errorf("%q reads back as %+v (%v)", r.Description, got, ok)
	}
	if r := (&cloudstack.LBRule{Description: "web servers"}); r.CreatedBy("dir-1") {
		t.Errorf("an operator's rule described %q is taken for the CPI's", r.Description)
	}
}

// TestVolumeDiskMark: the leftover rules read a volume's name, whether it
// is attached and whether it was ever created on primary storage.
func TestVolumeDiskMark(t *testing.T) {
	created := time.Now()
	for _, c := range []struct {
		vol  cloudstack.Volume
		want marks.Disk
	}{
		{cloudstack.Volume{Name: "n", State: "Allocated", Created: created}, marks.Disk{Name: "n", NeverUsed: true, Created: created}},
		{cloudstack.Volume{Name: "n", State: "Ready", VMID: "vm-1"}, marks.Disk{Name: "n", Attached: true}},
	} {
		if got := c.vol.DiskMark(); got != c.want {
			t.Errorf("%+v: DiskMark = %+v, want %+v", c.vol, got, c.want)
		}
	}
}
