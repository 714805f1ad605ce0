package cloudstack_test

import (
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// Each VirtualMachine.State the CPI treats apart, and what the predicates
// say of it.
func TestVMStatePredicates(t *testing.T) {
	type says struct{ expunged, gone, awaitingExpunge, stopped, busy bool }
	for state, want := range map[cloudstack.VMState]says{
		"Running":              {},
		cloudstack.VMStopped:   {stopped: true},
		cloudstack.VMStarting:  {busy: true},
		cloudstack.VMStopping:  {busy: true},
		cloudstack.VMMigrating: {busy: true},
		cloudstack.VMRestoring: {busy: true},
		cloudstack.VMDestroyed: {gone: true, awaitingExpunge: true},
		cloudstack.VMExpunging: {expunged: true, gone: true},
		"Expunged":             {expunged: true, gone: true},
		"Error":                {},
	} {
		vm := &cloudstack.VM{State: state}
		got := says{vm.Expunged(), vm.Gone(), vm.AwaitingExpunge(), vm.Stopped(), vm.Busy()}
		if got != want {
			t.Errorf("%s: %+v, want %+v", state, got, want)
		}
	}
}
