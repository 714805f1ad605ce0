package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

// createCustomVM runs create_vm with the given VM type and returns the VM's
// CID and the deployVirtualMachine parameters the CPI sent.
func (e *env) createCustomVM(stemcell string, props map[string]any, ip string) (string, map[string]string) {
	e.t.Helper()
	e.resetCalls()
	var result []json.RawMessage
	e.call("create_vm", "agent-"+ip, stemcell, props, map[string]any{"default": manualNet(ip)}, []string{},
		boshEnv).ok(e.t).decode(e.t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	return cid, e.deployParams()
}

// deployParams are the parameters of the last deployVirtualMachine sent.
func (e *env) deployParams() map[string]string {
	e.t.Helper()
	reqs, err := e.sim.Admin.Requests()
	if err != nil {
		e.t.Fatal(err)
	}
	var last map[string]string
	for _, r := range reqs {
		if r.Command == "deployVirtualMachine" {
			last = r.Params
		}
	}
	return last
}

// sentDetail finds a deployVirtualMachine detail by key, whatever its index.
func sentDetail(params map[string]string, key string) (string, bool) {
	for k, v := range params {
		if strings.HasPrefix(k, "details[") && strings.HasSuffix(k, "]."+key) {
			return v, true
		}
	}
	return "", false
}

// The seeded custom constrained offering (1-2 CPUs, 512-4096 MiB, 1000 MHz)
// takes cpu and ram within its limits; its speed is its own, so the CPI
// sends no cpuSpeed (CloudStack refuses one).
func TestCreateVMOnAConstrainedOffering(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	cid, sent := e.createCustomVM(stemcell, map[string]any{"compute_offering": "Custom Constrained", "cpu": 2, "ram": 1024}, "10.1.1.61")
	if vm := e.vm(cid); vm.Cpunumber != 2 || vm.Memory != 1024 || vm.Cpuspeed != 1000 || vm.Serviceofferingname != "Custom Constrained" {
		t.Fatalf("VM = %d CPUs at %d MHz, %d MiB on %q", vm.Cpunumber, vm.Cpuspeed, vm.Memory, vm.Serviceofferingname)
	}
	if v, has := sentDetail(sent, "cpuSpeed"); has {
		t.Fatalf("cpuSpeed %s sent to an offering that fixes it: %v", v, sent)
	}
	if v, _ := sentDetail(sent, "cpuNumber"); v != "2" {
		t.Fatalf("cpuNumber sent = %q: %v", v, sent)
	}
}

// An unconstrained customized offering takes cpu_speed, or
// cloudstack.default_cpu_speed without one.
func TestCreateVMOnAnUnconstrainedOffering(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	cid, sent := e.createCustomVM(stemcell, map[string]any{"compute_offering": "Custom", "cpu": 4, "ram": 6144, "cpu_speed": 1500}, "10.1.1.62")
	if vm := e.vm(cid); vm.Cpunumber != 4 || vm.Memory != 6144 || vm.Cpuspeed != 1500 {
		t.Fatalf("VM = %d CPUs at %d MHz, %d MiB", vm.Cpunumber, vm.Cpuspeed, vm.Memory)
	}
	if v, _ := sentDetail(sent, "cpuSpeed"); v != "1500" {
		t.Fatalf("cpuSpeed sent = %q", v)
	}
	cid, _ = e.createCustomVM(stemcell, map[string]any{"compute_offering": "Custom", "cpu": 1, "ram": 512}, "10.1.1.63")
	if vm := e.vm(cid); vm.Cpuspeed != 1000 {
		t.Fatalf("default_cpu_speed not applied: %d MHz", vm.Cpuspeed)
	}
}

// With no compute_offering named, cpu and ram go to a constrained offering
// whose limits take them, else to an unconstrained one.
func TestCreateVMWithNoOfferingNamedPrefersAFittingConstrainedOne(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	cid, sent := e.createCustomVM(stemcell, map[string]any{"cpu": 2, "ram": 2048}, "10.1.1.64")
	if vm := e.vm(cid); vm.Serviceofferingname != "Custom Constrained" || vm.Cpunumber != 2 || vm.Cpuspeed != 1000 {
		t.Fatalf("fitting VM went to %q (%d CPUs at %d MHz)", vm.Serviceofferingname, vm.Cpunumber, vm.Cpuspeed)
	}
	if _, has := sentDetail(sent, "cpuSpeed"); has {
		t.Fatalf("cpuSpeed sent to a constrained offering: %v", sent)
	}
	cid, _ = e.createCustomVM(stemcell, map[string]any{"cpu": 4, "ram": 2048}, "10.1.1.65")
	if vm := e.vm(cid); vm.Serviceofferingname != "Custom" || vm.Cpunumber != 4 {
		t.Fatalf("4 CPUs went to %q", vm.Serviceofferingname)
	}
	cid, _ = e.createCustomVM(stemcell, map[string]any{"cpu": 2, "ram": 2048, "cpu_speed": 2000}, "10.1.1.66")
	if vm := e.vm(cid); vm.Serviceofferingname != "Custom" || vm.Cpuspeed != 2000 {
		t.Fatalf("a cpu_speed the constrained offering cannot give went to %q at %d MHz", vm.Serviceofferingname, vm.Cpuspeed)
	}
}

// cpu, ram or cpu_speed outside the named offering's limits are refused
// before anything is created, naming the offering and its limits.
func TestCreateVMOutsideAnOfferingsLimitsIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	limits := `compute offering "Custom Constrained" takes 1 to 2 CPUs and 512 to 4096 MiB of memory at 1000 MHz`
	for _, tc := range []struct {
		props map[string]any
		asks  string
	}{
		{map[string]any{"cpu": 3, "ram": 1024}, "3 CPUs"},
		{map[string]any{"cpu": 2, "ram": 256}, "256 MiB of memory"},
		{map[string]any{"cpu": 2, "ram": 6144}, "6144 MiB of memory"},
		{map[string]any{"cpu": 2, "ram": 1024, "cpu_speed": 2000}, "2000 MHz"},
	} {
		tc.props["compute_offering"] = "Custom Constrained"
		e.resetCalls()
		r := e.call("create_vm", "agent-x", stemcell, tc.props, map[string]any{"default": manualNet("10.1.1.67")},
			[]string{}, boshEnv).failed(t, "VMCreationFailed", limits+"; the VM asks for "+tc.asks)
		if r.Error.Retry {
			t.Errorf("out-of-limits input marked ok_to_retry: %s", r.Error.Message)
		}
		if n := e.calls()["deployVirtualMachine"]; n != 0 {
			t.Fatalf("%v: deployVirtualMachine sent %d times", tc.props, n)
		}
	}
	if vms, vols, ips := e.live(); vms+vols+ips != 0 {
		t.Fatalf("refusals left %d VMs, %d volumes, %d IPs", vms, vols, ips)
	}
}
