package spec

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// The instance the crash tests deploy again and again: a manual network
// with a static IP, a vip the CPI acquires, and an ephemeral disk.
const crashVIP = "192.168.2.80"

var crashNetworks = map[string]any{"default": manualNet("10.1.1.80"), "public": map[string]any{"type": "vip", "ip": crashVIP}}

var crashProps = map[string]any{"compute_offering": "Small Instance", "ephemeral_disk_size": 1024,
	"ephemeral_disk_offering": "Custom"}

// step is the n-th call of a command in one create_vm.
type step struct {
	command string
	skip    int // calls of the command before this one
}

func (s step) String() string { return fmt.Sprintf("%s#%d", s.command, s.skip+1) }

// createVMSteps runs create_vm once and returns its CloudStack calls in
// order, then deletes the VM.
func (e *env) createVMSteps() []step {
	e.t.Helper()
	e.crashStemcell()
	e.resetCalls()
	cid := e.createCrashVM("agent-probe")
	reqs, err := e.sim.Admin.Requests()
	if err != nil {
		e.t.Fatal(err)
	}
	e.call("delete_vm", cid).ok(e.t)
	seen := map[string]int{}
	var steps []step
	for _, r := range reqs {
		steps = append(steps, step{command: r.Command, skip: seen[r.Command]})
		seen[r.Command]++
	}
	return steps
}

func (e *env) createCrashVM(agent string) string {
	e.t.Helper()
	var result []json.RawMessage
	e.call("create_vm", agent, e.crashStemcell(), crashProps, crashNetworks, []string{}, boshEnv).ok(e.t).decode(e.t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	return cid
}

var crashStemcells = map[*env]string{}

func (e *env) crashStemcell() string {
	if cid, ok := crashStemcells[e]; ok {
		return cid
	}
	crashStemcells[e] = e.stemcell()
	e.t.Cleanup(func() { delete(crashStemcells, e) })
	return crashStemcells[e]
}

// killCreateVMDuring starts create_vm, holds step s's request in the simulator,
// kills the CPI with SIGKILL while it waits for the answer, and returns
// once the simulator has run the request: a crash just after the CPI sent
// it, before it could act on the answer.
func (e *env) killCreateVMDuring(s step, agent string) {
	e.t.Helper()
	e.killRequestDuring(s, e.request("create_vm", agent, e.crashStemcell(), crashProps, crashNetworks, []string{}, boshEnv))
}

// killRequestDuring is killCreateVMDuring for any request.
func (e *env) killRequestDuring(s step, stdin string) {
	e.t.Helper()
	if err := e.sim.Admin.AddFault(simulator.Fault{Command: s.command, Skip: s.skip, Delay: time.Minute}); err != nil {
		e.t.Fatal(err)
	}
	defer e.clearFaults()
	held := func() bool { // a rule that has fired its one time is dropped
		faults, err := e.sim.Admin.Faults()
		return err == nil && len(faults) == 0
	}
	o := e.callKilled(stdin, e.t.TempDir(), killPoint{when: held, limit: 30 * time.Second, what: s.String()})
	if !o.killed {
		e.t.Fatalf("the call answered before it was killed in %s: %s", s, o)
	}
	ran := e.await(func() bool {
		reqs, err := e.sim.Admin.Requests()
		if err != nil {
			return false
		}
		for _, r := range reqs {
			if r.Command == s.command && r.Fault != "" {
				return true
			}
		}
		return false
	})
	if !ran {
		e.t.Fatalf("the simulator never ran the held %s", s)
	}
}

func (e *env) await(cond func() bool) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

// censusOf checks CloudStack holds exactly what the director knows: the VM
// cid (none when cid is ""), its own volumes, and the vip static NAT to it;
// Destroyed VMs count, since they still hold host names and addresses.
func (e *env) censusOf(cid string) {
	e.t.Helper()
	var problems []string
	for _, vm := range e.vms() {
		switch {
		case vm.Id != cid:
			problems = append(problems, fmt.Sprintf("VM %s (%s, %s, %q)", vm.Id, vm.Name, vm.State, vm.Displayname))
		case vm.Displayname != vm.Name || !tagged(vm.Tags, marks.DirectorTag) || !tagged(vm.Tags, marks.AgentTag):
			problems = append(problems, fmt.Sprintf("VM %s is not marked complete: display name %q, tags %v",
				vm.Id, vm.Displayname, vm.Tags))
		}
	}
	for _, v := range e.volumes() {
		if cid == "" || v.Virtualmachineid != cid {
			problems = append(problems, fmt.Sprintf("volume %s (%s, %s, VM %q)", v.Id, v.Name, v.Type, v.Virtualmachineid))
		}
	}
	vips := 0
	for _, ip := range e.publicIPs() {
		switch {
		case ip.Issourcenat:
		case cid != "" && ip.Ipaddress == crashVIP && ip.Virtualmachineid == cid && tagged(ip.Tags, marks.AcquiredTag):
			vips++
		default:
			problems = append(problems, fmt.Sprintf("public IP %s (static NAT to %q, tags %v)", ip.Ipaddress,
				ip.Virtualmachineid, ip.Tags))
		}
	}
	if cid != "" && vips != 1 {
		problems = append(problems, fmt.Sprintf("%d vips static NAT to VM %s", vips, cid))
	}
	if len(problems) > 0 {
		e.t.Fatalf("beyond what the director knows (VM %q): %s", cid, strings.Join(problems, "; "))
	}
}

func tagged(tags []csgo.Tags, key string) bool {
	for _, t := range tags {
		if t.Key == key {
			return true
		}
	}
	return false
}

// TestCreateVMConvergesAfterACrashAtEachCall: create_vm (static IP, vip,
// ephemeral disk) is killed just after each CloudStack call it makes, the
// deploy's, associateIpAddress's, each createTags and each job poll
// included; then the director's next attempt, a create_vm with a new
// agent_id and the same networks, succeeds and CloudStack holds exactly
// that VM, its volumes and its vip; delete_vm of it leaves nothing.
func TestCreateVMConvergesAfterACrashAtEachCall(t *testing.T) {
	e := newEnv(t, nil)
	steps := e.createVMSteps()
	for i, s := range steps {
		// What a failed step leaves would fail every later one.
		if !t.Run(s.String(), func(t *testing.T) {
			e.t = t
			e.killCreateVMDuring(s, fmt.Sprintf("agent-killed-%d", i))
			if s.command == "updateVirtualMachine" {
				e.completeButUnanswered()
				return
			}
			cid := e.createCrashVM(fmt.Sprintf("agent-next-%d", i))
			e.censusOf(cid)
			e.call("delete_vm", cid).ok(t)
			e.censusOf("")
		}) {
			break
		}
	}
}

// TestCreateVMLostAnswerAtEachCall: the answer to each CloudStack call of
// create_vm is lost after CloudStack acted. Whatever create_vm answers,
// ok_to_retry comes only with nothing left behind, and what the director
// does next (the same agent_id after ok_to_retry, else a new one) ends
// with exactly one VM.
func TestCreateVMLostAnswerAtEachCall(t *testing.T) {
	e := newEnv(t, nil)
	steps := e.createVMSteps()
	for i, s := range steps {
		if !t.Run(s.String(), func(t *testing.T) {
			e.t = t
			defer e.clearFaults()
			if err := e.sim.Admin.AddFault(simulator.Fault{Command: s.command, Skip: s.skip, Lost: true}); err != nil {
				t.Fatal(err)
			}
			agent := fmt.Sprintf("agent-lost-%d", i)
			r := e.call("create_vm", agent, e.crashStemcell(), crashProps, crashNetworks, []string{}, boshEnv)
			if err := e.sim.Admin.ClearFaults(); err != nil {
				t.Fatal(err)
			}
			if r.Error != nil {
				t.Logf("create_vm answered %s (ok_to_retry %v)", r.Error.Message, r.Error.Retry)
			}
			if r.Error == nil {
				var result []json.RawMessage
				r.decode(t, &result)
				var cid string
				_ = json.Unmarshal(result[0], &cid)
				e.censusOf(cid)
				e.call("delete_vm", cid).ok(t)
				e.censusOf("")
				return
			}
			if r.Error.Retry {
				e.censusOf("") // ok_to_retry promises nothing is left
			} else {
				agent += "-next"
			}
			cid := e.createCrashVM(agent)
			e.censusOf(cid)
			e.call("delete_vm", cid).ok(t)
			e.censusOf("")
		}) {
			break
		}
	}
}

// completeButUnanswered: killed after CloudStack cleared the mark (the
// last call), the VM is complete and the director never heard of it. That
// window, between the last answer and the CPI's own, cannot be closed by
// marks: the next create_vm must not take a complete VM for a leftover, so
// it fails, naming the VM that holds the addresses, with ok_to_retry false;
// the operator deletes that VM and the attempt after succeeds.
func (e *env) completeButUnanswered() {
	e.t.Helper()
	vms := e.vms()
	if len(vms) != 1 {
		e.t.Fatalf("%d VMs after a crash at the last call", len(vms))
	}
	orphan := vms[0].Id
	r := e.call("create_vm", "agent-after-last", e.crashStemcell(), crashProps, crashNetworks, []string{}, boshEnv).
		failed(e.t, "VMCreationFailed", orphan)
	if r.Error.Retry {
		e.t.Fatalf("ok_to_retry while VM %s holds the addresses: %s", orphan, r.Error.Message)
	}
	e.censusOf(orphan)
	e.call("delete_vm", orphan).ok(e.t)
	e.censusOf("")
	cid := e.createCrashVM("agent-after-delete")
	e.censusOf(cid)
	e.call("delete_vm", cid).ok(e.t)
	e.censusOf("")
}

// afterDeploy is the step just after deployVirtualMachine's job finished.
var afterDeploy = step{command: "queryAsyncJobResult"}

// TestCreateVMNeverTouchesAnotherDirectorsLeftover: an incomplete VM of
// another director holding the static IP and the vip stays; create_vm
// fails naming it, without ok_to_retry.
func TestCreateVMNeverTouchesAnotherDirectorsLeftover(t *testing.T) {
	e := newEnv(t, nil)
	req := e.request("create_vm", "agent-other", e.crashStemcell(), crashProps, crashNetworks, []string{}, boshEnv)
	other := strings.Replace(req, `"director_uuid":"spec-director"`, `"director_uuid":"other-director"`, 1)
	if other == req {
		t.Fatalf("no director_uuid to replace in %s", req)
	}
	e.killRequestDuring(afterDeploy, other)
	vms := e.vms()
	if len(vms) != 1 {
		t.Fatalf("%d VMs after the crash", len(vms))
	}
	r := e.call("create_vm", "agent-mine", e.crashStemcell(), crashProps, crashNetworks, []string{}, boshEnv).
		failed(t, "VMCreationFailed", vms[0].Id)
	if r.Error.Retry {
		t.Fatalf("ok_to_retry while another director's VM holds the address: %s", r.Error.Message)
	}
	if after := e.vms(); len(after) != 1 || after[0].Id != vms[0].Id || after[0].State != vms[0].State {
		t.Fatalf("another director's VM %s (%s) was touched: now %d VMs", vms[0].Id, vms[0].State, len(after))
	}
	e.call("delete_vm", vms[0].Id).ok(t)
	e.censusOf("")
}

// TestDeleteVMReleasesTheVIPAnIncompleteVMMeantToAcquire: killed between
// associateIpAddress and its createTags, the address is untagged; the VM's
// intent makes it the CPI's, so delete_vm of the VM releases it.
func TestDeleteVMReleasesTheVIPAnIncompleteVMMeantToAcquire(t *testing.T) {
	e := newEnv(t, nil)
	var afterAssociate step
	for i, s := range e.createVMSteps() {
		if s.command == "associateIpAddress" {
			afterAssociate = e.createVMSteps()[i+1]
			break
		}
	}
	if afterAssociate.command != "queryAsyncJobResult" {
		t.Fatalf("associateIpAddress is not followed by its job poll: %v", afterAssociate)
	}
	e.killCreateVMDuring(afterAssociate, "agent-killed")
	var untagged bool
	for _, ip := range e.publicIPs() {
		untagged = untagged || ip.Ipaddress == crashVIP && len(ip.Tags) == 0
	}
	vms := e.vms()
	if !untagged || len(vms) != 1 {
		t.Fatalf("want the vip acquired and untagged and one VM, got IPs %+v and %d VMs", e.publicIPs(), len(vms))
	}
	e.call("delete_vm", vms[0].Id).ok(t)
	e.censusOf("")
}

// TestCreateVMRetryWithTheSameAgentConverges: a VM on a dynamic network
// alone has no address to be recognised by; the director's retry with the
// same agent_id still finds the incomplete VM and leaves one.
func TestCreateVMRetryWithTheSameAgentConverges(t *testing.T) {
	e := newEnv(t, nil)
	dynamic := map[string]any{"default": map[string]any{"type": "dynamic", "dns": []string{"10.1.1.2"},
		"default": []string{"dns", "gateway"}, "cloud_properties": map[string]any{"name": "guest-network"}}}
	e.killRequestDuring(afterDeploy, e.request("create_vm", "agent-same", e.crashStemcell(), crashProps, dynamic,
		[]string{}, boshEnv))
	var result []json.RawMessage
	e.call("create_vm", "agent-same", e.crashStemcell(), crashProps, dynamic, []string{}, boshEnv).ok(t).decode(t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	if vms := e.vms(); len(vms) != 1 || vms[0].Id != cid {
		t.Fatalf("want only VM %s, got %d VMs", cid, len(vms))
	}
	e.call("delete_vm", cid).ok(t)
	e.censusOf("")
}

// TestCreateVMConvergenceRemovesTheLeftoversRegistrySettings: for an old
// stemcell the settings of the incomplete VM, keyed by its name, go with it.
func TestCreateVMConvergenceRemovesTheLeftoversRegistrySettings(t *testing.T) {
	e, base := oldStemcellEnv(t)
	e.killCreateVMDuring(afterDeploy, "agent-killed")
	vms := e.vms()
	if len(vms) != 1 {
		t.Fatalf("%d VMs after the crash", len(vms))
	}
	if code, _ := registryGet(t, base, vms[0].Name); code != 200 {
		t.Fatalf("the killed create_vm wrote no settings for %s (%d)", vms[0].Name, code)
	}
	cid := e.createCrashVM("agent-next")
	e.censusOf(cid)
	if code, _ := registryGet(t, base, vms[0].Name); code != 404 {
		t.Fatalf("the leftover's registry settings survived (%d)", code)
	}
	if code, _ := registryGet(t, base, e.vm(cid).Name); code != 200 {
		t.Fatalf("the new VM has no registry settings (%d)", code)
	}
	e.call("delete_vm", cid).ok(t)
	e.censusOf("")
}

// TestCreateVMJobTimeoutAtEachJob: a job of create_vm that never finishes
// (the deploy, the VM's tags, associateIpAddress, the vip's tags) ends in a
// job timeout; what the job may still make is removed before create_vm
// answers, ok_to_retry comes only with nothing left, and the director's
// next attempt leaves exactly one VM.
func TestCreateVMJobTimeoutAtEachJob(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) { section(cfg, "cloudstack")["job_timeout"] = "1s" })
	for _, s := range []step{{"deployVirtualMachine", 0}, {"createTags", 0}, {"associateIpAddress", 0}, {"createTags", 1}} {
		if !t.Run(s.String(), func(t *testing.T) {
			e.t = t
			defer e.clearFaults()
			if err := e.sim.Admin.AddFault(simulator.Fault{Command: s.command, Skip: s.skip, Pending: true}); err != nil {
				t.Fatal(err)
			}
			r := e.call("create_vm", "agent-pending", e.crashStemcell(), crashProps, crashNetworks, []string{}, boshEnv).
				failed(t, "VMCreationFailed", "did not finish within 1s")
			t.Logf("create_vm answered %s (ok_to_retry %v)", r.Error.Message, r.Error.Retry)
			agent := "agent-pending"
			if r.Error.Retry {
				e.censusOf("")
			} else {
				agent = "agent-after-pending"
			}
			cid := e.createCrashVM(agent)
			e.censusOf(cid)
			e.call("delete_vm", cid).ok(t)
			e.censusOf("")
		}) {
			break
		}
	}
}
