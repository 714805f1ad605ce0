package cloudstack_test

import (
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// TestIsEphemeralOf: this CPI's DATA-<id> disk is any VM's ephemeral one;
// an earlier CPI's cpi-ephemeral-disk- volume only on an earlier CPI's VM;
// persistent disks and ROOT never.
func TestIsEphemeralOf(t *testing.T) {
	ours := &cloudstack.VM{Name: "vm-1f0c"}
	earlier := &cloudstack.VM{Name: "cpivm-1f0c"}
	for _, c := range []struct {
		vol           cloudstack.Volume
		ours, earlier bool
	}{
		{cloudstack.Volume{Name: "DATA-12", Type: "DATADISK"}, true, true},
		{cloudstack.Volume{Name: "cpi-ephemeral-disk-1f0c", Type: "DATADISK"}, false, true},
		{cloudstack.Volume{Name: "cpi-ephemeral-disk-1f0c", Type: "ROOT"}, false, false},
		{cloudstack.Volume{Name: "cpi-disk-1f0c", Type: "DATADISK"}, false, false},
		{cloudstack.Volume{Name: "bosh-disk-1f0c", Type: "DATADISK"}, false, false},
		{cloudstack.Volume{Name: "ROOT-12", Type: "ROOT"}, false, false},
	} {
		if got := c.vol.IsEphemeralOf(ours); got != c.ours {
			t.Errorf("%s (%s) ephemeral of our VM = %v", c.vol.Name, c.vol.Type, got)
		}
		if got := c.vol.IsEphemeralOf(earlier); got != c.earlier {
			t.Errorf("%s (%s) ephemeral of an earlier CPI's VM = %v", c.vol.Name, c.vol.Type, got)
		}
	}
}
