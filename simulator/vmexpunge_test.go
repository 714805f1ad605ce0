package simulator_test

import (
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// TestDefaultExpungeDelayKeepsVMs: with CloudStack's defaults (a day) a
// Destroyed VM stays.
func TestDefaultExpungeDelay(t *testing.T) {
	e := simtesting.NewVMEnv(t, simulator.Options{})
	if d := simulator.ExpungeDelay(e.Srv.State); d != 24*time.Hour {
		t.Fatalf("expunge.delay default %s", d)
	}
	vm := e.Deploy(t, e.Params("cpivm-stays"))
	if _, err := e.CS.VirtualMachine.DestroyVirtualMachine(e.CS.VirtualMachine.NewDestroyVirtualMachineParams(vm.Id)); err != nil {
		t.Fatal(err)
	}
	simulator.ExpungeDestroyed(e.Srv)
	if s := e.StateOf(t, vm.Id); s != "Destroyed" {
		t.Fatalf("state %q right after destroy", s)
	}
}
