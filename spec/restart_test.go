package spec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
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

// TestKVMCreateVMWhoseStartNeverEnds: the config drive VM's start job
// never finishes. create_vm answers VMCreationFailed once job_timeout has
// passed and removes the VM, still Starting, with its config drive ISO at
// once: CloudStack refuses to detach an ISO from a VM that is neither
// Stopped nor Running, so the VM is destroyed with the ISO attached and the
// ISO deleted once the VM is expunged. Nothing is left, so a retry is safe,
// and the director's retry succeeds.
func TestKVMCreateVMWhoseStartNeverEnds(t *testing.T) {
	e := kvmEnv(t, func(cfg map[string]any) { section(cfg, "cloudstack")["job_timeout"] = "2s" })
	stemcell := e.openStackStemcell()
	r := e.createVMWhoseStartNeverEnds(stemcell)
	if !r.Error.Retry {
		t.Errorf("nothing is left, yet ok_to_retry is false: %s", r.Error.Message)
	}
	e.nothingButVM(t, "")
	cid := e.createVM(stemcell, "10.1.1.82")
	e.call("delete_vm", cid).ok(t)
	e.nothingButVM(t, "")
}

// TestKVMCreateVMWhoseStartAndDestroyNeverEnd: as above, but the destroy
// of the VM does not end within job_timeout either, as in CloudStack,
// which runs it only after the job that holds the VM. create_vm says the
// VM is still Starting and that it is left, without ok_to_retry. Once the
// destroy has ended, the director's retry removes the ISO left behind and
// succeeds.
func TestKVMCreateVMWhoseStartAndDestroyNeverEnd(t *testing.T) {
	e := kvmEnv(t, func(cfg map[string]any) { section(cfg, "cloudstack")["job_timeout"] = "2s" },
		"-job-latency-for", "destroyVirtualMachine=3s")
	stemcell := e.openStackStemcell()
	vms := map[string]string{}
	r := e.createVMWhoseStartNeverEnds(stemcell, func() {
		for _, vm := range e.vms() {
			vms[vm.Id] = vm.Name
		}
	})
	t.Logf("create_vm answered: %s", r.Error.Message)
	if len(vms) != 1 || r.Error.Retry {
		t.Fatalf("want one VM left and no ok_to_retry; got VMs %v and %s", vms, r.Stdout)
	}
	for id, name := range vms {
		if !strings.Contains(r.Error.Message, "VM "+id+" ("+name+") is still Starting") {
			t.Fatalf("the error does not say VM %s is still Starting: %s", id, r.Error.Message)
		}
	}
	if !e.await(func() bool { return len(e.vms()) == 0 }) {
		t.Fatal("the queued destroy never ended")
	}
	cid := e.createVM(stemcell, "10.1.1.82")
	e.nothingButVM(t, cid)
}

// createVMWhoseStartNeverEnds runs create_vm with its startVirtualMachine
// job pending for good; seen runs while the VM is Starting.
func (e *env) createVMWhoseStartNeverEnds(stemcell string, seen ...func()) response {
	e.t.Helper()
	e.inject([]simulator.Fault{{Command: "startVirtualMachine", Pending: true}})
	defer e.clearFaults()
	run := e.start("create_vm", "agent-10.1.1.82", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.82")},
		[]string{}, boshEnv)
	if len(seen) > 0 {
		if !e.await(func() bool { vms := e.vms(); return len(vms) == 1 && vms[0].State == "Starting" }) {
			e.t.Fatal("create_vm never started its VM")
		}
		seen[0]()
	}
	return run.wait().failed(e.t, "VMCreationFailed", "startVirtualMachine did not finish within 2s")
}

// nothingButVM checks CloudStack holds no VM but cid (none when ""), no
// volume but cid's and no ISO but cid's config drive.
func (e *env) nothingButVM(t *testing.T, cid string) {
	t.Helper()
	var problems []string
	name := ""
	for _, vm := range e.vms() {
		if vm.Id != cid {
			problems = append(problems, fmt.Sprintf("VM %s (%s, %s)", vm.Id, vm.Name, vm.State))
		}
		name = vm.Name
	}
	for _, v := range e.volumes() {
		if cid == "" || v.Virtualmachineid != cid {
			problems = append(problems, fmt.Sprintf("volume %s (%s, VM %q)", v.Id, v.Name, v.Virtualmachineid))
		}
	}
	for _, iso := range e.isos() {
		if cid == "" || !strings.Contains(iso.Displaytext, name) {
			problems = append(problems, fmt.Sprintf("ISO %s (%s)", iso.Id, iso.Displaytext))
		}
	}
	if len(problems) > 0 {
		t.Fatalf("beyond what the director knows (VM %q): %s", cid, strings.Join(problems, "; "))
	}
}
