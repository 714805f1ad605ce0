package spec

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// TestCreateDiskAfterAnInterruptedOne: create_disk calls for a VM killed
// while their job ran or after it had finished leave never-used volumes
// named for the VM; the next create_disk for that VM removes them once
// they are older than any call can last, and nothing the director uses.
func TestCreateDiskAfterAnInterruptedOne(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) {
		cs := section(cfg, "cloudstack")
		cs["job_timeout"], cs["request_timeout"], cs["max_retries"] = "1s", "1s", 0
	})
	const longestCall = 7 * time.Second // job_timeout + 5 request_timeouts + 1 s
	vm := e.createVM(e.stemcell(), "10.1.1.76")
	props := map[string]any{"disk_offering": "Custom"}
	used := e.createDisk(1024, props, vm)
	e.attachDisk(vm, used)
	e.call("detach_disk", vm, used).ok(t) // Ready, detached: it holds data
	attached := e.createDisk(1024, props, vm)
	e.attachDisk(vm, attached)

	for _, f := range []simulator.Fault{
		{Command: "createVolume", Pending: true},                 // killed while the job runs
		{Command: "queryAsyncJobResult", Delay: 3 * time.Second}, // killed after the job finished
	} {
		e.inject([]simulator.Fault{f})
		e.killDuring("createVolume", "create_disk", 1024, props, vm)
	}
	e.inject(nil)
	leftovers := e.disksFor(vm)
	if len(leftovers) != 4 {
		t.Fatalf("the killed calls left %v", leftovers)
	}

	// Too young to be known dead: the next create_disk leaves them.
	fresh := e.createDisk(1024, props, vm)
	e.attachDisk(vm, fresh)
	if got := e.disksFor(vm); len(got) != 5 {
		t.Fatalf("create_disk right after the kills left %v", got)
	}
	time.Sleep(longestCall)
	last := e.createDisk(1024, props, vm)
	got := strings.Join(e.disksFor(vm), " ")
	for _, want := range []string{used, attached, fresh, last} {
		if !strings.Contains(got, want) {
			t.Fatalf("disk %s is gone: %s", want, got)
		}
	}
	if n := len(e.disksFor(vm)); n != 4 {
		t.Fatalf("after the next create_disk CloudStack has %s; the director knows %s %s %s %s", got, used, attached, fresh, last)
	}
}

// disksFor lists the live data volumes named for the VM.
func (e *env) disksFor(vm string) []string {
	e.t.Helper()
	var ids []string
	for _, v := range e.volumes() {
		if strings.HasSuffix(v.Name, "-for-"+vm) && v.State != "Destroy" {
			ids = append(ids, v.Id)
		}
	}
	return ids
}

// killDuring runs a CPI call and kills it (SIGKILL) as soon as CloudStack
// has processed command.
func (e *env) killDuring(command, method string, args ...any) {
	e.t.Helper()
	before, err := e.sim.Admin.CountRequests(command)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := json.Marshal(map[string]any{"method": method, "arguments": args, "api_version": 2,
		"context": map[string]any{"director_uuid": "spec-director", "request_id": "cpi-killed",
			"vm": map[string]any{"stemcell": map[string]any{"api_version": 3}}}})
	cmd := exec.Command(cpiBin, "-configPath", e.config)
	cmd.Stdin = strings.NewReader(string(req))
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if n, err := e.sim.Admin.CountRequests(command); err == nil && n > before {
			time.Sleep(100 * time.Millisecond) // into the wait for the job
			return
		}
	}
	e.t.Fatalf("%s never reached CloudStack's %s", method, command)
}
