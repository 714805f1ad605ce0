package spec

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkCreateVMJobLatency runs create_vm and delete_vm against a
// simulator whose async jobs each take 2 s, and compares each call's wall
// time with the sum of its jobs' latencies (target ≤ 1.2×), with the
// CloudStack calls each made. Run with: make bench-vm
func BenchmarkCreateVMJobLatency(b *testing.B) {
	const latency = 2 * time.Second
	// The CPI's default job polling, not the suite's quick one.
	e := newEnv(b, func(cfg map[string]any) {
		delete(section(cfg, "cloudstack"), "job_poll_interval")
		delete(section(cfg, "cloudstack"), "job_poll_max_interval")
	}, "-job-latency", latency.String())
	stemcell := e.stemcell()
	e.resetCalls()

	start := time.Now()
	var result []json.RawMessage
	e.call("create_vm", "agent-bench", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.90")},
		[]string{}, boshEnv).ok(b).decode(b, &result)
	createTook := time.Since(start)
	createCalls := e.calls()
	var cid string
	_ = json.Unmarshal(result[0], &cid)

	e.resetCalls()
	start = time.Now()
	e.call("delete_vm", cid).ok(b)
	deleteTook := time.Since(start)
	deleteCalls := e.calls()

	fmt.Printf("\nCPI calls against a simulator whose jobs take %s (one manual network, an ephemeral disk)\n", latency)
	fmt.Printf("%-10s %10s %10s %8s %8s %8s  %s\n", "method", "wall s", "jobs s", "ratio", "target", "calls", "Orange Go CPI (jobs at once)")
	row := func(name string, took time.Duration, calls map[string]int, ref string) {
		jobs := time.Duration(asyncJobs(calls)) * latency
		fmt.Printf("%-10s %10.2f %10.2f %7.2fx %8s %8d  %s\n", name, took.Seconds(), jobs.Seconds(),
			took.Seconds()/jobs.Seconds(), "≤1.20x", total(calls), ref)
		b.ReportMetric(took.Seconds()/jobs.Seconds(), name+"-wall/jobs")
		b.ReportMetric(float64(total(calls)), name+"-calls")
	}
	row("create_vm", createTook, createCalls, "14 calls")
	row("delete_vm", deleteTook, deleteCalls, "12 calls")
	fmt.Printf("create_vm calls: %v\ndelete_vm calls: %v\n", createCalls, deleteCalls)
}

// asyncJobs counts the async commands in a call log.
func asyncJobs(calls map[string]int) int {
	n := 0
	for cmd, c := range calls {
		switch cmd {
		case "deployVirtualMachine", "destroyVirtualMachine", "createTags", "deleteTags", "associateIpAddress",
			"disassociateIpAddress", "disableStaticNat", "createAffinityGroup", "createVolume", "attachVolume",
			"detachVolume", "rebootVirtualMachine", "startVirtualMachine":
			n += c
		}
	}
	return n
}
