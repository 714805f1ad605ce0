package spec

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// directorCall is one method of the director-shaped lifecycle: its
// arguments are read from the CIDs of the calls before it.
type directorCall struct {
	method string
	args   func() []any
	// keep stores the call's result among the CIDs.
	keep func(result json.RawMessage) error
}

// directorCIDs are what the lifecycle has made so far.
type directorCIDs struct{ stemcell, vm, disk, snapshot string }

var vmMeta = map[string]any{"director": "spec-director", "deployment": "cf", "instance_group": "db", "job": "db",
	"id": "4f3c", "name": "db/4f3c", "index": "0", "created_at": "2026-01-02T03:04:05Z"}

// directorLifecycle is one instance with a persistent disk as the director
// drives it: a deploy (create_stemcell, create_vm, set_vm_metadata,
// create_disk, attach_disk, set_disk_metadata), cck's reboot_vm and
// get_disks, a snapshot and its deletion, then
// the deployment's deletion in the director's order (detach_disk, delete_vm,
// the orphaned disk's delete_disk) and the stemcell's clean-up: 14 methods.
func directorLifecycle(e *env) []directorCall {
	image := writeImage(e.t, bzippedVHD(e.t))
	str := func(dst *string) func(json.RawMessage) error {
		return func(r json.RawMessage) error { return json.Unmarshal(r, dst) }
	}
	var c directorCIDs
	return []directorCall{
		{"create_stemcell", func() []any { return []any{image, stemcellMF("cloudstack", "xen", "vhdx")} }, str(&c.stemcell)},
		{"create_vm", func() []any {
			return []any{"agent-director", c.stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.91")}, []string{}, boshEnv}
		}, func(r json.RawMessage) error {
			var out []json.RawMessage
			if err := json.Unmarshal(r, &out); err != nil || len(out) != 2 {
				return fmt.Errorf("create_vm answered %s", r)
			}
			return json.Unmarshal(out[0], &c.vm)
		}},
		{"set_vm_metadata", func() []any { return []any{c.vm, vmMeta} }, nil},
		{"reboot_vm", func() []any { return []any{c.vm} }, nil},
		{"create_disk", func() []any { return []any{1024, map[string]any{"disk_offering": "Custom"}, c.vm} }, str(&c.disk)},
		{"attach_disk", func() []any { return []any{c.vm, c.disk} }, nil},
		{"set_disk_metadata", func() []any { return []any{c.disk, diskMeta} }, nil},
		{"get_disks", func() []any { return []any{c.vm} }, nil},
		{"snapshot_disk", func() []any { return []any{c.disk, diskMeta} }, str(&c.snapshot)},
		{"delete_snapshot", func() []any { return []any{c.snapshot} }, nil},
		{"detach_disk", func() []any { return []any{c.vm, c.disk} }, nil},
		{"delete_vm", func() []any { return []any{c.vm} }, nil},
		{"delete_disk", func() []any { return []any{c.disk} }, nil},
		{"delete_stemcell", func() []any { return []any{c.stemcell} }, nil},
	}
}

// BenchmarkDirectorLifecycleCalls runs the director-shaped lifecycle once
// against a simulator whose jobs take 2 s each, with the CPI's default job
// polling, and prints each method's CloudStack calls (from the simulator's
// request log) and wall time, and their total beside the goal (≤ 92: the
// Orange Go CPI's count for the same lifecycle, issue 23).
// Run with: make bench-vm
func BenchmarkDirectorLifecycleCalls(b *testing.B) {
	const latency = 2 * time.Second
	e := newEnv(b, func(cfg map[string]any) {
		delete(section(cfg, "cloudstack"), "job_poll_interval")
		delete(section(cfg, "cloudstack"), "job_poll_max_interval")
	}, "-job-latency", latency.String())
	calls := directorLifecycle(e)
	var methods []string
	for _, c := range calls {
		methods = append(methods, c.method)
	}
	fmt.Printf("\ndocs/development/performance.md's director-shaped lifecycle (2 s jobs, the CPI's default job polling; "+
		"%d methods: %s):\n\n", len(calls), strings.Join(methods, ", "))
	fmt.Println("| method | CloudStack calls | of them job polls | wall time | calls in order |")
	fmt.Println("|---|---|---|---|---|")
	sum, polls, wall := 0, 0, time.Duration(0)
	for _, c := range calls {
		e.resetCalls()
		start := time.Now()
		r := e.call(c.method, c.args()...).ok(b)
		took := time.Since(start)
		if c.keep != nil {
			if err := c.keep(r.Result); err != nil {
				b.Fatalf("%s: %v", c.method, err)
			}
		}
		seq := e.callSequence()
		p := 0
		for _, cmd := range seq {
			if cmd == "queryAsyncJobResult" {
				p++
			}
		}
		fmt.Printf("| %s | %d | %d | %.2f s | %s |\n", c.method, len(seq), p, took.Seconds(), sequence(seq))
		sum, polls, wall = sum+len(seq), polls+p, wall+took
	}
	fmt.Printf("| **all %d methods** | **%d** (goal ≤ 92) | %d | %.2f s | |\n", len(calls), sum, polls, wall.Seconds())
	b.ReportMetric(float64(sum), "cloudstack-calls")
}
