package spec

import (
	"testing"
)

// start runs a call in the background; its wait gives the answer.
func (e *env) start(method string, args ...any) *cpiRun {
	e.t.Helper()
	return startCPI(e.t, e.config, e.request(method, args...))
}

// TestCreateVMAcrossAManagementServerRestart: CloudStack's management
// server restarts while create_vm's deploy job runs (the job would take an
// hour). On start CloudStack fails the jobs of the server that went away
// and puts their VMs back out of the transitional state
// (AsyncJobManagerImpl.cleanupLeftOverJobs, which the simulator models):
// create_vm sees its deploy job fail, removes the Stopped VM with its
// volumes and answers VMCreationFailed naming the restart, with nothing
// left, instead of waiting out job_timeout (30 minutes by default, past
// the two minutes a CPI call gets here). The director's retry succeeds.
func TestCreateVMAcrossAManagementServerRestart(t *testing.T) {
	sim := startSimulatorProcess(t, "-job-latency-for", "deployVirtualMachine=1h")
	e := envOn(t, sim.Sim, nil)
	stemcell := e.stemcell()
	nets := map[string]any{"default": manualNet("10.1.1.81")}
	run := e.start("create_vm", "agent-restart", stemcell, smallVM, nets, []string{}, boshEnv)
	starting := e.await(func() bool {
		vms := e.vms()
		return len(vms) == 1 && vms[0].State == "Starting"
	})
	if !starting {
		t.Fatal("create_vm's deploy never began")
	}
	sim.restart(t)
	r := run.wait().failed(t, "VMCreationFailed", "management server was probably restarted")
	if !r.Error.Retry {
		t.Errorf("nothing is left, yet ok_to_retry is false: %s", r.Error.Message)
	}
	e.censusOf("")
	cid := e.createVM(stemcell, "10.1.1.81")
	e.call("delete_vm", cid).ok(t)
	e.censusOf("")
}
