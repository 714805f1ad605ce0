package vm_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// TestJobLatencyForACommand: a command named in JobLatencyFor takes its own
// latency, the others JobLatency; here deploys finish at once while host
// maintenance jobs stay pending for an hour.
func TestJobLatencyForACommand(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{JobLatencyFor: map[string]time.Duration{"prepareHostForMaintenance": time.Hour}})}
	vm := e.Deploy(t, e.Params("quick"))
	if vm.State != "Running" {
		t.Fatalf("deployed VM = %+v", vm)
	}
	host := simtesting.Items(t, e.Call(map[string]string{"command": "listHosts"}).Inner(t, "listhostsresponse"), "host")[0]
	jobID := e.Call(map[string]string{"command": "prepareHostForMaintenance", "id": host["id"].(string)}).
		Inner(t, "preparehostformaintenanceresponse")["jobid"].(string)
	job := e.Call(map[string]string{"command": "queryAsyncJobResult", "jobid": jobID}).Inner(t, "queryasyncjobresultresponse")
	if simtesting.Num(job["jobstatus"]) != 0 {
		t.Fatalf("maintenance job with an hour's latency = %v", job)
	}
}

// TestJobLatencyForUnknownCommandIsAnError: a misspelt name is refused, not
// silently ignored.
func TestJobLatencyForUnknownCommandIsAnError(t *testing.T) {
	for name, d := range map[string]time.Duration{"deployvirtualmachine": time.Second, "deployVirtualMachine": -time.Second} {
		_, err := simulator.New(simulator.Options{JobLatencyFor: map[string]time.Duration{name: d}})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Fatalf("New with job latency %s=%s: %v", name, d, err)
		}
	}
}

// TestSeededZoneHolds200SmallInstances: the seeded zone's hosts take 16
// Small Instance VMs each (512 MiB of 8 GiB), 208 in all; the 209th finds
// no host.
func TestSeededZoneHolds200SmallInstances(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	capacity := 16 * e.hostCount(t)
	if capacity < 200 {
		t.Fatalf("the seeded zone holds %d Small Instance VMs", capacity)
	}
	for i := 0; i < capacity; i++ {
		e.Deploy(t, e.Params(fmt.Sprintf("small-%d", i)))
	}
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(e.Params("one-too-many"))
	simtesting.WantJobError(t, err, 533, "Unable to create a deployment for VM instance")
}
