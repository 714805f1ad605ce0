package spec

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkLearnedPolling runs a director-shaped lifecycle (13 methods,
// create_stemcell … delete_stemcell) with 2 s jobs and the CPI's default
// polling three times: without a state directory (the schedule alone), then
// twice on one state directory (learning, then learned), printing each
// run's CloudStack calls and job polls.
// Run with: cd spec && go test -run '^$' -bench BenchmarkLearnedPolling -benchtime 1x
func BenchmarkLearnedPolling(b *testing.B) {
	state := b.TempDir()
	e := newEnv(b, func(cfg map[string]any) {
		delete(section(cfg, "cloudstack"), "job_poll_interval")
		delete(section(cfg, "cloudstack"), "job_poll_max_interval")
	}, "-job-latency", "2s")
	fmt.Printf("\n| run (2 s jobs, default polling) | CloudStack calls | of them queryAsyncJobResult | wall time |\n|---|---|---|---|\n")
	for _, run := range []struct{ name, dir string }{{"no state_dir (the schedule)", ""},
		{"state_dir, first run (learning)", state}, {"state_dir, second run (learned)", state}} {
		e.config = writeJSON(b, directorConfig(b, e, run.dir))
		e.resetCalls()
		start := time.Now()
		directorLifecycle(b, e)
		took := time.Since(start)
		calls := e.calls()
		fmt.Printf("| %s | %d | %d | %.1f s |\n", run.name, total(calls), calls["queryAsyncJobResult"], took.Seconds())
		b.ReportMetric(float64(total(calls)), "calls")
	}
}

func directorConfig(b *testing.B, e *env, stateDir string) map[string]any {
	var cfg map[string]any
	if err := json.Unmarshal([]byte(readConfig(b, e.config)), &cfg); err != nil {
		b.Fatal(err)
	}
	if stateDir == "" {
		delete(section(cfg, "cloudstack"), "state_dir")
	} else {
		section(cfg, "cloudstack")["state_dir"] = stateDir
	}
	return cfg
}

// directorLifecycle is the 13 methods a director calls over one VM with a
// persistent disk, from its stemcell's upload to its deletion.
func directorLifecycle(b testing.TB, e *env) {
	stemcell := e.stemcell()
	var result []json.RawMessage
	e.call("create_vm", "agent-bench", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.91")},
		[]string{}, boshEnv).ok(b).decode(b, &result)
	var vm string
	if len(result) != 2 || json.Unmarshal(result[0], &vm) != nil {
		b.Fatalf("create_vm answered %v", result)
	}
	e.call("set_vm_metadata", vm, diskMeta).ok(b)
	e.call("has_vm", vm).ok(b)
	disk := e.createDisk(3000, map[string]any{"disk_offering": "Custom"}, vm)
	e.attachDisk(vm, disk)
	e.call("set_disk_metadata", disk, diskMeta).ok(b)
	var snap string
	e.call("snapshot_disk", disk, diskMeta).ok(b).decode(b, &snap)
	e.call("delete_snapshot", snap).ok(b)
	e.call("detach_disk", vm, disk).ok(b)
	e.call("delete_disk", disk).ok(b)
	e.call("delete_vm", vm).ok(b)
	e.call("delete_stemcell", stemcell).ok(b)
}
