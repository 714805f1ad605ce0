package spec

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// vmRun is one create_vm and delete_vm, timed, with the CloudStack calls
// each made in the order it made them.
type vmRun struct {
	createTook, deleteTook   time.Duration
	createCalls, deleteCalls []string
	// diskTook and diskCalls are a create_disk for the VM.
	diskTook  time.Duration
	diskCalls []string
}

// BenchmarkCreateVMJobLatency runs create_vm and delete_vm with the CPI's
// default job polling twice: against a simulator whose jobs finish at once,
// which is how the Orange Go CPI's call counts were measured, and against one
// whose jobs take 2 s each, comparing each call's wall time with the sum of
// its jobs' latencies (target ≤ 1.2×) and with the latency of the one job
// the method needs (deployVirtualMachine, createVolume, destroyVirtualMachine;
// target ≤ 1.15× for create_vm and create_disk: their tag jobs overlap the
// job they mark). It prints docs/development/performance.md's table.
// Run with: make bench-vm
func BenchmarkCreateVMJobLatency(b *testing.B) {
	const latency = 2 * time.Second
	instant := runVMPair(b, 0)
	slow := runVMPair(b, latency)

	fmt.Printf("\ndocs/development/performance.md's VM table (one manual network, an ephemeral disk; the CPI's default job polling):\n\n")
	fmt.Println("| method | CloudStack calls, jobs at once (the Orange Go CPI, jobs at once) | calls with 2 s jobs | wall time with 2 s jobs | vs the jobs' latency (target ≤ 1.2×) | vs the one job it needs (target ≤ 1.15×) |")
	fmt.Println("|---|---|---|---|---|---|")
	row := func(name string, calls, slowCalls []string, took time.Duration, ref string) {
		jobs := time.Duration(asyncJobs(slowCalls)) * latency
		ratio := took.Seconds() / jobs.Seconds()
		needed := took.Seconds() / latency.Seconds()
		fmt.Printf("| %s | %d: %s (%s) | %d | %.2f s | %.2f× | %.2f× |\n", name, len(calls), sequence(calls), ref,
			len(slowCalls), took.Seconds(), ratio, needed)
		b.ReportMetric(ratio, strings.Fields(name)[0]+"-wall/jobs")
		b.ReportMetric(needed, strings.Fields(name)[0]+"-wall/job")
		b.ReportMetric(float64(len(calls)), strings.Fields(name)[0]+"-calls")
	}
	row("create_vm (one manual network, ephemeral disk)", instant.createCalls, slow.createCalls, slow.createTook, "14")
	row("create_disk (for that VM)", instant.diskCalls, slow.diskCalls, slow.diskTook, "not measured")
	row("delete_vm", instant.deleteCalls, slow.deleteCalls, slow.deleteTook, "12")
}

// runVMPair creates and deletes one VM against a simulator whose async
// jobs take latency, with the CPI's default job polling.
func runVMPair(b *testing.B, latency time.Duration) vmRun {
	e := newEnv(b, func(cfg map[string]any) {
		delete(section(cfg, "cloudstack"), "job_poll_interval")
		delete(section(cfg, "cloudstack"), "job_poll_max_interval")
	}, "-job-latency", latency.String())
	stemcell := e.stemcell()
	var r vmRun
	e.resetCalls()
	start := time.Now()
	var result []json.RawMessage
	e.call("create_vm", "agent-bench", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.90")},
		[]string{}, boshEnv).ok(b).decode(b, &result)
	r.createTook, r.createCalls = time.Since(start), e.callSequence()
	var cid string
	if len(result) != 2 || json.Unmarshal(result[0], &cid) != nil {
		b.Fatalf("create_vm answered %v", result)
	}
	e.resetCalls()
	start = time.Now()
	disk := e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, cid)
	r.diskTook, r.diskCalls = time.Since(start), e.callSequence()
	e.call("delete_disk", disk).ok(b)
	e.resetCalls()
	start = time.Now()
	e.call("delete_vm", cid).ok(b)
	r.deleteTook, r.deleteCalls = time.Since(start), e.callSequence()
	return r
}

// callSequence lists the CloudStack commands in the simulator's log since
// the last reset, in the order they were made.
func (e *env) callSequence() []string {
	e.t.Helper()
	reqs, err := e.sim.Admin.Requests()
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Command
	}
	return out
}

// sequence writes commands in order, runs of one command as "cmd ×n".
func sequence(cmds []string) string {
	var parts []string
	for i := 0; i < len(cmds); {
		j := i
		for j < len(cmds) && cmds[j] == cmds[i] {
			j++
		}
		if j-i > 1 {
			parts = append(parts, fmt.Sprintf("%s ×%d", cmds[i], j-i))
		} else {
			parts = append(parts, cmds[i])
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

// asyncJobs counts the async commands in a call log.
func asyncJobs(cmds []string) int {
	n := 0
	for _, cmd := range cmds {
		switch cmd {
		case "deployVirtualMachine", "destroyVirtualMachine", "createTags", "deleteTags", "associateIpAddress",
			"disassociateIpAddress", "disableStaticNat", "createAffinityGroup", "createVolume", "attachVolume",
			"detachVolume", "rebootVirtualMachine", "startVirtualMachine":
			n++
		}
	}
	return n
}
