package spec

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// TestTwoCreateVMForOneAgent: the director sends two create_vm for one
// agent_id at once. The first is held just after its deploy (its VM's
// tags wait in the simulator) while the second runs: the second's first
// step removes the first's VM, unfinished and for the same agent, and
// the second succeeds. The first then meets its VM gone and answers
// VMCreationFailed saying another create_vm for the agent took over,
// naming the agent and the other's VM, without ok_to_retry (a retry would
// remove the other's VM in turn). Exactly the second's VM is left.
func TestTwoCreateVMForOneAgent(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	nets := map[string]any{"default": manualNet("10.1.1.83")}
	e.inject([]simulator.Fault{{Command: "createTags", Delay: time.Hour}})
	defer e.clearFaults()
	first := e.start("create_vm", "agent-twice", stemcell, smallVM, nets, []string{}, boshEnv)
	if !e.await(e.faultFired) {
		t.Fatal("the first create_vm never tagged its VM")
	}
	var result []json.RawMessage
	e.call("create_vm", "agent-twice", stemcell, smallVM, nets, []string{}, boshEnv).ok(t).decode(t, &result)
	var second string
	_ = json.Unmarshal(result[0], &second)
	e.clearFaults()

	r := first.wait().failed(t, "VMCreationFailed", "another create_vm for agent agent-twice took over")
	t.Logf("the first create_vm answered: %s", r.Error.Message)
	if r.Error.Retry || !strings.Contains(r.Error.Message, "VM "+second+" (") {
		t.Fatalf("want the other's VM %s named and no ok_to_retry: %s", second, r.Stdout)
	}
	if vms := e.vms(); len(vms) != 1 || vms[0].Id != second {
		t.Fatalf("want only VM %s, got %d VMs", second, len(vms))
	}
	e.call("delete_vm", second).ok(t)
	e.nothingButVM(t, "")
}
