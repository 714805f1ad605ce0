package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// director plays the BOSH director for the crash and lost-answer tests:
// it remembers the CIDs the CPI gave back and has not deleted, and checks
// the census against them.
type director struct {
	e     *env
	base  ledger
	holds known
	leaks int // resources beyond what the director knew, over all censuses
	// deferUploads lets templates CloudStack will not delete yet (an
	// upload not finished) wait for a later, strict census.
	deferUploads bool
	// finalWindow: the round's kill came after the method's last step ran
	// in CloudStack; what the census finds then is counted in finalLeft,
	// not as a leak, and is orphans -known's to list and delete.
	finalWindow bool
	finalLeft   int
	image       string // the stemcell image the director uploads
	size        int    // MiB resize_disk adds, growing with each case
}

func newDirector(e *env) *director { return &director{e: e, base: e.baseline()} }

// check takes the census; every extra resource is an error naming it, and
// is then swept away so the next round starts clean.
func (d *director) check(when string) {
	d.e.t.Helper()
	extra := d.e.leaks(d.base, d.holds)
	if d.deferUploads {
		extra = d.deferred(when, extra)
	}
	if len(extra) == 0 {
		return
	}
	if d.finalWindow {
		d.finalLeft += len(extra)
		d.e.t.Logf("%s: killed after its last step ran in CloudStack, it left %d complete resources:\n%s",
			when, len(extra), describe(extra))
		if d.deferUploads {
			// orphans would list the deferred ones too.
			d.e.sweep(d.base, extra)
			return
		}
		d.orphansKnown(when, extra)
		return
	}
	d.leaks += len(extra)
	d.e.t.Errorf("%s: %d CloudStack resources beyond what the director knows (%s):\n%s",
		when, len(extra), d.holds, describe(extra))
	d.e.sweep(d.base, extra)
}

// deferred logs and leaves out the templates and ISOs whose upload has
// not finished: CloudStack refuses to delete them until the upload
// completes or times out (TemplateManagerImpl's "getting uploaded"
// refusal). A config drive ISO create_vm could not delete for that reason
// keeps its incomplete mark and is the next create_vm's to remove (the
// error says so), even once its upload has settled: it waits too. The
// strict census after the upload timeout counts whatever is left.
func (d *director) deferred(when string, extra []resource) []resource {
	var out []resource
	for _, r := range extra {
		if (r.Kind == "template" || r.Kind == "ISO") && awaitingUpload(r.State) || r.sweepable {
			d.e.t.Logf("%s: deferred until the upload timeout: %s", when, r)
			continue
		}
		out = append(out, r)
	}
	return out
}

// awaitingUpload says whether a template status is one of an upload that
// did not finish: NotUploaded or the percentages of UploadInProgress, which
// CloudStack refuses to delete, and UploadAbandoned or UploadError, which
// became deletable perhaps only after the director's last call looked.
func awaitingUpload(status string) bool {
	switch status {
	case "NotUploaded", "Installing Template", "UploadAbandoned", "UploadError":
		return true
	}
	return strings.HasSuffix(status, "% Downloaded")
}

func (k known) String() string {
	return fmt.Sprintf("VMs %v, disks %v, snapshots %v, stemcells %v", k.VMs, k.Disks, k.Snapshots, k.Stemcells)
}

func drop(list []string, id string) []string {
	var out []string
	for _, x := range list {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// cid reads the CID from a result: a string, or a v2 create_vm's [cid, networks].
func cid(r response) string {
	var s string
	if json.Unmarshal(r.Result, &s) == nil {
		return s
	}
	var pair []json.RawMessage
	if json.Unmarshal(r.Result, &pair) == nil && len(pair) > 0 && json.Unmarshal(pair[0], &s) == nil {
		return s
	}
	return ""
}

// outcome is how a call ended from the director's side.
type outcome struct {
	killed bool          // the CPI died before answering
	took   time.Duration // until the answer, or until SIGKILL was sent
	r      *response     // the answer, when there was one
	calls  []call        // the CloudStack calls the killed CPI made
}

func (o outcome) String() string {
	switch {
	case o.killed && len(o.calls) == 0:
		return fmt.Sprintf("killed at %v, before any CloudStack call", o.took.Round(time.Millisecond))
	case o.killed:
		last := o.calls[len(o.calls)-1]
		return fmt.Sprintf("killed at %v, after %d CloudStack calls, the last %s #%d", o.took.Round(time.Millisecond),
			len(o.calls), last.command, last.k+1)
	case o.r.Error != nil:
		return fmt.Sprintf("%s (ok_to_retry %v): %s", o.r.Error.Type, o.r.Error.Retry, clip(o.r.Error.Message, 300))
	}
	return fmt.Sprintf("answered after %v: %s", o.took.Round(time.Millisecond), clip(string(o.r.Result), 100))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// killPoint is when a crash test kills the CPI with SIGKILL: a time after
// it started, or as soon as a condition on CloudStack holds (polled every
// 10 ms) and settle has passed — the CPI is then waiting for an answer.
type killPoint struct {
	after  time.Duration // 0: no timer
	when   func() bool   // nil: no condition
	settle time.Duration
	limit  time.Duration // a when that does not hold by then fails the test
	what   string        // what when waits for, for that failure
}

// callKilled runs one CPI call on stdin as call does, and SIGKILLs it at k
// unless it answered first. The process gets its own temporary directory,
// tmp: what a killed CPI leaves there is counted, not the suite's concern
// (nothing runs after kill -9 to remove it). Every crash test kills the CPI
// through it.
func (e *env) callKilled(stdin, tmp string, k killPoint) outcome {
	e.t.Helper()
	cmd := exec.Command(cpiBin, "-configPath", e.config)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	start := time.Now()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() { _ = cmd.Process.Kill(); <-exited }() // on every path, a failed test's too
	took := e.awaitKillPoint(k, exited, start)
	if took > 0 {
		_ = cmd.Process.Kill()
		<-exited
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return outcome{killed: true, took: took}
	}
	var r response
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		e.t.Fatalf("stdout is not one JSON response: %q (%v)\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	return outcome{r: &r, took: time.Since(start)}
}

// awaitKillPoint waits for k and says how long after start it came; 0 when
// the CPI exited first.
func (e *env) awaitKillPoint(k killPoint, exited <-chan struct{}, start time.Time) time.Duration {
	e.t.Helper()
	var timer, giveUp <-chan time.Time
	if k.after > 0 {
		timer = time.After(k.after)
	}
	if k.when != nil {
		giveUp = time.After(k.limit)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			return 0
		case <-timer:
			return time.Since(start)
		case <-giveUp:
			e.t.Fatalf("the CPI never reached %s within %s", k.what, k.limit)
		case <-tick.C:
			if k.when != nil && k.when() {
				time.Sleep(k.settle)
				return time.Since(start)
			}
		}
	}
}

// timed runs a call and says how long it took.
func (e *env) timed(method string, args ...any) (response, time.Duration) {
	e.t.Helper()
	start := time.Now()
	r := e.call(method, args...)
	return r, time.Since(start)
}

// tally is one method's line of a summary table.
type tally struct {
	method               string
	calls, cases, faults int
	killed, answered     int
	inJob                int            // kills while a job was running (the last call queued or polled one)
	lastCalls            map[string]int // kills by the last CloudStack call before them
	failed               int            // the director's next step did not succeed
	dirty                int            // rounds or cases that left resources behind
	leaks                int            // the resources they left
	final, finalLeft     int            // kills after the last step ran in CloudStack, and what they left
}

// after counts a kill by the CloudStack calls made before it.
func (tl *tally) after(calls []call) {
	if tl.lastCalls == nil {
		tl.lastCalls = map[string]int{}
	}
	last := "(none)"
	if n := len(calls); n > 0 {
		last = calls[n-1].command
		if calls[n-1].job {
			tl.inJob++
		}
	}
	tl.lastCalls[last]++
}

func printTallies(t *testing.T, title string, rows []*tally, crash bool) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", title)
	if crash {
		fmt.Fprintf(&b, "| method | kills tried | killed (inside a job) | answered first | killed after the last step (complete resources left) | next call failed | rounds leaking | resources leaked |\n|---|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %d | %d (%d) | %d | %d (%d) | %d | %d | %d |\n", r.method, r.cases, r.killed, r.inJob, r.answered,
				r.final, r.finalLeft, r.failed, r.dirty, r.leaks)
		}
	} else {
		fmt.Fprintf(&b, "| method | calls | cases | faults fired | retry failed | cases leaking | resources leaked |\n|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d |\n", r.method, r.calls, r.cases, r.faults, r.failed, r.dirty, r.leaks)
		}
	}
	for _, r := range rows {
		if len(r.lastCalls) > 0 {
			fmt.Fprintf(&b, "%s: kills after %s\n", r.method, byCount(r.lastCalls))
		}
	}
	var sum tally
	for _, r := range rows {
		sum.cases, sum.faults, sum.killed, sum.dirty, sum.leaks = sum.cases+r.cases, sum.faults+r.faults, sum.killed+r.killed, sum.dirty+r.dirty, sum.leaks+r.leaks
	}
	landed, what := sum.faults, "faults fired"
	if crash {
		landed, what = sum.killed, "kills landed"
	}
	fmt.Fprintf(&b, "total: %d cases (%d %s), %d leaking, %d resources leaked\n", sum.cases, landed, what, sum.dirty, sum.leaks)
	t.Log(b.String())
}

// byCount writes counts as "a 3, b 1", most first.
func byCount(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
