package cloudstack_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
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

// TestIsChangeRefused: CloudStack's checks (431) and a missing command
// (432) leave the volume as it was; a failed migration or resize (530),
// capacity and transport errors are not refusals.
func TestIsChangeRefused(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&cloudstack.APIError{ErrorCode: 431, Text: "Disk offering size strictness does not match with new disk offering."}, true},
		{fmt.Errorf("resizing: %w", &cloudstack.APIError{ErrorCode: 431, JobID: "j", Text: "Unable to shrink volumes of type QCOW2"}), true},
		{&cloudstack.APIError{ErrorCode: 432, Text: "The given command:changeOfferingForVolume does not exist or it is not available for user"}, true},
		{&cloudstack.APIError{ErrorCode: 530, Text: "Volume change offering operation failed for volume ID: v due to resize volume operation failed"}, false},
		{&cloudstack.APIError{ErrorCode: 533, Text: "Insufficient capacity"}, false},
		{&cloudstack.UnreachableError{}, false},
		{errors.New("plain"), false},
	} {
		if got := cloudstack.IsChangeRefused(c.err); got != c.want {
			t.Errorf("IsChangeRefused(%v) = %v", c.err, got)
		}
	}
}

// TestResizesAttachedDisks: XenServer resizes offline only.
func TestResizesAttachedDisks(t *testing.T) {
	for _, c := range []struct {
		hv    cloudstack.Hypervisor
		state cloudstack.VMState
		want  bool
	}{
		{hypervisor.XenServer, "Running", false},
		{hypervisor.XenServer, "Starting", false},
		{hypervisor.XenServer, "Stopped", true},
		{hypervisor.KVM, "Running", true},
		{hypervisor.VMware, "Running", true},
	} {
		vm := &cloudstack.VM{Hypervisor: c.hv, State: c.state}
		if got := vm.ResizesAttachedDisks(); got != c.want {
			t.Errorf("%s VM %s: ResizesAttachedDisks = %v", c.hv, c.state, got)
		}
	}
}
