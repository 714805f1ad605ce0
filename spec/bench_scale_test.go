package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// scaleLatencies are the jobs' latencies of the scale benchmark, per
// command (-job-latency-for); every other job takes scaleDefaultLatency.
// Figures of the order a loaded CloudStack shows: a deploy's start takes
// longest, volume work about a second, tags a fraction of one.
var scaleLatencies = []struct {
	command string
	latency time.Duration
}{
	{"deployVirtualMachine", 2 * time.Second},
	{"createVolume", time.Second},
	{"attachVolume", time.Second},
	{"detachVolume", time.Second},
	{"createTags", 300 * time.Millisecond},
	{"deleteTags", 300 * time.Millisecond},
	{"destroyVirtualMachine", time.Second},
	{"expungeVirtualMachine", time.Second},
}

const (
	scaleDefaultLatency = time.Second
	// scaleLimit is api.throttling.max over a 1 s api.throttling.interval:
	// CloudStack's default limit, as public clouds run it.
	scaleLimit = 25
)

// scaleScenario is one row of the table: n lifecycles at once.
type scaleScenario struct {
	disk      bool // create_disk → attach_disk → detach_disk → delete_disk inside the VM's lifecycle
	throttled bool
	n         int
}

func (s scaleScenario) name() string {
	if s.disk {
		return "create_vm → create_disk → attach_disk → detach_disk → delete_disk → delete_vm"
	}
	return "create_vm → delete_vm"
}

// scaleResult is what one scenario measured.
type scaleResult struct {
	scaleScenario
	ok                int
	wall              time.Duration
	admitted, refused int // requests CloudStack took, and answered 429
	lifecycles        []time.Duration
	failures          map[string]int
	leftFiles         []string
	leftProcs         int
	stateDir          bool // cloudstack.state_dir was set: the CPI has the setting
}

// BenchmarkScale runs n lifecycles at once, each call a CPI process of its
// own as the director runs them (one per call, no bound of its own), as an
// account that is not a root admin (CloudStack's throttle exempts root
// admins), against a simulator with per-command job latencies, without a
// throttle and behind CloudStack's at 25 requests/s. It prints
// docs/development/performance.md's scale table. BENCH_SCALE_N lists the
// n to run (default 50,200); BENCH_SCALE_BOUND bounds each lifecycle
// (default 10m), so a stuck run is reported, never waited for;
// BENCH_SCALE_LIFECYCLE (vm, disk, both) and BENCH_SCALE_THROTTLE (on,
// off, both) run a part of the table; BENCH_SCALE_LOGS names a directory
// that keeps each failed lifecycle's CPI stderr.
// Run with: make bench-scale
func BenchmarkScale(b *testing.B) {
	ns, bound := scaleParams(b)
	disks := scaleChoice(b, "BENCH_SCALE_LIFECYCLE", "vm", "disk")
	throttles := scaleChoice(b, "BENCH_SCALE_THROTTLE", "off", "on")
	var results []scaleResult
	for _, n := range ns {
		for _, disk := range disks {
			for _, throttled := range throttles {
				r := runScale(b, scaleScenario{disk: disk, throttled: throttled, n: n}, bound)
				fmt.Fprintln(os.Stderr, "bench-scale:", scaleRow(r))
				if len(r.leftFiles) > 0 || r.leftProcs > 0 {
					b.Errorf("n = %d left %d CPI processes and TMPDIR entries %v", n, r.leftProcs, r.leftFiles)
				}
				results = append(results, r)
			}
		}
	}
	printScaleTable(results, bound)
}

func scaleParams(b *testing.B) ([]int, time.Duration) {
	var ns []int
	for _, f := range strings.Split(envOr("BENCH_SCALE_N", "50,200"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("BENCH_SCALE_N: %q is not a count of lifecycles", f)
		}
		ns = append(ns, n)
	}
	bound, err := time.ParseDuration(envOr("BENCH_SCALE_BOUND", "10m"))
	if err != nil || bound <= 0 {
		b.Fatalf("BENCH_SCALE_BOUND: %q is not a positive duration", os.Getenv("BENCH_SCALE_BOUND"))
	}
	return ns, bound
}

// scaleChoice reads an option naming one of two settings, or both (the
// default): the settings to run, the first as false.
func scaleChoice(b *testing.B, name, no, yes string) []bool {
	switch v := envOr(name, "both"); v {
	case "both":
		return []bool{false, true}
	case no:
		return []bool{false}
	case yes:
		return []bool{true}
	default:
		b.Fatalf("%s: %q is none of %s, %s, both", name, v, no, yes)
		return nil
	}
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// scaleSimArgs are the simulator's flags for a scenario.
func scaleSimArgs(throttled bool) []string {
	var pairs []string
	for _, l := range scaleLatencies {
		pairs = append(pairs, l.command+"="+l.latency.String())
	}
	args := []string{"-job-latency", scaleDefaultLatency.String(), "-job-latency-for", strings.Join(pairs, ",")}
	if throttled {
		args = append(args, "-api-throttling-enabled", "-api-throttling-interval", "1",
			"-api-throttling-max", strconv.Itoa(scaleLimit))
	}
	return args
}

// scaleEnv is a fresh simulator, a Domain Admin account with its own
// network and a stemcell published with its keys, and a cpi.json with the
// CPI's defaults but the keys (job polling, request_timeout, job_timeout).
type scaleEnv struct {
	*env
	net      map[string]any
	stemcell string
	secrets  []string
	stateDir bool
}

func newScaleEnv(b *testing.B, throttled bool) *scaleEnv {
	root := newEnv(b, nil, scaleSimArgs(throttled)...)
	e, key, secret := root.asAccount("bench", 2, "DomainAdmin")
	net := e.ownNetwork(key, secret, "bench-net")
	cs := map[string]any{"endpoint": e.sim.URL, "api_key": key, "secret_access_key": secret, "default_zone": zoneName}
	dir := stateDirIfSupported(b, cs)
	if dir != "" {
		cs["state_dir"] = dir
	}
	e.config = writeJSON(b, map[string]any{"cloudstack": cs})
	s := &scaleEnv{env: e, net: net, secrets: []string{key, secret}, stateDir: dir != ""}
	s.stemcell = e.stemcell()
	// The setup's requests leave the throttle's window before the run.
	time.Sleep(1100 * time.Millisecond)
	e.resetCalls()
	return s
}

// stateDirIfSupported is a per-run directory for the CPI's shared state
// (cloudstack.state_dir: its host-wide token bucket and learned job
// latencies), or "" when this CPI has no such setting: the CPI answers
// info with "unknown key cloudstack.state_dir" then.
func stateDirIfSupported(b *testing.B, cs map[string]any) string {
	dir := b.TempDir()
	probe := map[string]any{}
	for k, v := range cs {
		probe[k] = v
	}
	probe["state_dir"] = dir
	r, err := cpiProcess(context.Background(), writeJSON(b, map[string]any{"cloudstack": probe}),
		`{"method":"info","arguments":[],"context":{"director_uuid":"spec-director"}}`, nil)
	if err != nil {
		if strings.Contains(err.Error(), "unknown key cloudstack.state_dir") {
			return ""
		}
		b.Fatalf("info with cloudstack.state_dir: %v\n%s", err, r.Stderr)
	}
	return dir
}

// runScale runs one scenario's n lifecycles at once and reads back from
// the simulator's request log what they cost.
func runScale(b *testing.B, sc scaleScenario, bound time.Duration) scaleResult {
	s := newScaleEnv(b, sc.throttled)
	before := tmpEntries(b)
	r := scaleResult{scaleScenario: sc, failures: map[string]int{}, lifecycles: make([]time.Duration, sc.n),
		stateDir: s.stateDir}
	errs := make([]error, sc.n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < sc.n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			t0 := time.Now()
			var log bytes.Buffer
			errs[i] = s.lifecycle(ctx, i, sc.disk, &log)
			r.lifecycles[i] = time.Since(t0)
			if errs[i] != nil {
				keepScaleLog(b, sc, i, errs[i], &log, s.secrets)
			}
		}()
	}
	wg.Wait()
	r.wall = time.Since(start)
	for _, err := range errs {
		if err == nil {
			r.ok++
		} else {
			r.failures[failureKind(err)]++
		}
	}
	reqs, err := s.sim.Admin.Requests()
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range reqs {
		if q.Status == 429 {
			r.refused++
		} else {
			r.admitted++
		}
	}
	keepScaleTimeline(b, sc, start, reqs)
	r.leftFiles, r.leftProcs = newEntries(b, before), cpiProcesses()
	return r
}

// keepScaleLog writes a failed lifecycle's CPI stderr to BENCH_SCALE_LOGS,
// when set, for the diagnosis the table's failure counts cannot give.
// The keys are blanked, should a CPI have let one through.
func keepScaleLog(b *testing.B, sc scaleScenario, i int, err error, log *bytes.Buffer, secrets []string) {
	dir := os.Getenv("BENCH_SCALE_LOGS")
	if dir == "" {
		return
	}
	body := err.Error() + "\n\n" + log.String()
	for _, secret := range secrets {
		body = strings.ReplaceAll(body, secret, "[redacted]")
	}
	writeScaleLog(b, dir, sc, fmt.Sprintf("%03d.log", i), body)
}

// writeScaleLog writes a scenario's file to dir, named after the scenario.
func writeScaleLog(b *testing.B, dir string, sc scaleScenario, suffix, body string) {
	name := fmt.Sprintf("n%d-%s-%s-%s", sc.n, map[bool]string{false: "vm", true: "disk"}[sc.disk],
		map[bool]string{false: "off", true: "on"}[sc.throttled], suffix)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Errorf("BENCH_SCALE_LOGS: %v", err)
	} else if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		b.Errorf("BENCH_SCALE_LOGS: %v", err)
	}
}

// keepScaleTimeline writes to BENCH_SCALE_LOGS, when set, the requests
// CloudStack took and refused in each second of the run: where the
// admitted rate fell below the limit.
func keepScaleTimeline(b *testing.B, sc scaleScenario, start time.Time, reqs []kernel.LoggedRequest) {
	dir := os.Getenv("BENCH_SCALE_LOGS")
	if dir == "" {
		return
	}
	var took, refused []int
	for _, q := range reqs {
		sec := int(q.Time.Sub(start) / time.Second)
		if sec < 0 {
			continue
		}
		for len(took) <= sec {
			took, refused = append(took, 0), append(refused, 0)
		}
		if q.Status == 429 {
			refused[sec]++
		} else {
			took[sec]++
		}
	}
	var out strings.Builder
	out.WriteString("second\ttaken\trefused\n")
	for i := range took {
		fmt.Fprintf(&out, "%d\t%d\t%d\n", i, took[i], refused[i])
	}
	writeScaleLog(b, dir, sc, "timeline.tsv", out.String())
}

// lifecycle is one instance's life as the director drives it, each call a
// CPI process whose stderr goes to log; it stops at the first failure,
// naming the call.
func (s *scaleEnv) lifecycle(ctx context.Context, i int, disk bool, log *bytes.Buffer) error {
	net := map[string]any{}
	for k, v := range s.net {
		net[k] = v
	}
	net["ip"] = fmt.Sprintf("10.1.1.%d", 10+i)
	var created []json.RawMessage
	if err := s.run(ctx, log, &created, "create_vm", fmt.Sprintf("agent-scale-%d", i), s.stemcell, smallVM,
		map[string]any{"default": net}, []string{}, boshEnv); err != nil {
		return err
	}
	var vm string
	if len(created) != 2 || json.Unmarshal(created[0], &vm) != nil {
		return fmt.Errorf("create_vm answered %v", created)
	}
	if disk {
		var cid string
		if err := s.run(ctx, log, &cid, "create_disk", 1024, map[string]any{"disk_offering": "Custom"}, vm); err != nil {
			return err
		}
		for _, call := range []struct {
			method string
			args   []any
		}{{"attach_disk", []any{vm, cid}}, {"detach_disk", []any{vm, cid}}, {"delete_disk", []any{cid}}} {
			if err := s.run(ctx, log, nil, call.method, call.args...); err != nil {
				return err
			}
		}
	}
	return s.run(ctx, log, nil, "delete_vm", vm)
}

// run is one CPI call, its stderr appended to log; its result goes to out
// when out is not nil.
func (s *scaleEnv) run(ctx context.Context, log *bytes.Buffer, out any, method string, args ...any) error {
	r, err := cpiProcess(ctx, s.config, s.request(method, args...), s.secrets)
	fmt.Fprintf(log, "=== %s\n%s", method, r.Stderr)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return fmt.Errorf("%s answered %s: %w", method, r.Result, err)
		}
	}
	return nil
}

// cpiProcess runs the CPI once, killed when ctx ends (the director bounds
// no call: the bound only keeps a stuck benchmark from hanging). Unlike
// runCPI it returns what went wrong, as it runs off the test's goroutine.
func cpiProcess(ctx context.Context, config, stdin string, secrets []string) (response, error) {
	cmd := exec.CommandContext(ctx, cpiBin, "-configPath", config)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run() // the director ignores the exit code
	var r response
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	if ctx.Err() != nil {
		return r, errors.New("killed at the lifecycle's bound")
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return r, fmt.Errorf("stdout is not one JSON response: %q", stdout.String())
	}
	for _, secret := range append([]string{"signature="}, secrets...) {
		if strings.Contains(r.Stdout+r.Stderr, secret) {
			return r, errors.New("a secret reached the CPI's output")
		}
	}
	if r.Error != nil {
		return r, fmt.Errorf("%s: %s", r.Error.Type, firstLine(r.Error.Message))
	}
	return r, nil
}

var (
	uuidPattern   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	numberPattern = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
)

// failureKind is an error with its CIDs and figures left out, so that the
// table counts failures of one kind together.
func failureKind(err error) string {
	s := uuidPattern.ReplaceAllString(err.Error(), "…")
	s = numberPattern.ReplaceAllString(s, "N")
	if r := []rune(s); len(r) > 240 {
		s = string(r[:240]) + "…"
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// tmpEntries lists what is in the suite's TMPDIR.
func tmpEntries(b *testing.B) map[string]bool {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range entries {
		out[e.Name()] = true
	}
	return out
}

// newEntries is what the lifecycles left in TMPDIR.
func newEntries(b *testing.B, before map[string]bool) []string {
	var left []string
	for name := range tmpEntries(b) {
		if !before[name] {
			left = append(left, name)
		}
	}
	sort.Strings(left)
	return left
}

// cpiProcesses counts the running processes of the CPI binary under test.
func cpiProcesses() int {
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	n := 0
	for _, p := range procs {
		if exe, err := os.Readlink(p); err == nil && exe == cpiBin {
			n++
		}
	}
	return n
}

// printScaleTable prints docs/development/performance.md's scale table,
// the latencies it ran with, and why lifecycles failed.
func printScaleTable(results []scaleResult, bound time.Duration) {
	var lat []string
	for _, l := range scaleLatencies {
		lat = append(lat, fmt.Sprintf("%s %s", l.command, l.latency))
	}
	stateDir := "not a setting of this CPI"
	if len(results) > 0 && results[0].stateDir {
		stateDir = "a directory of its own per scenario"
	}
	fmt.Printf("\ndocs/development/performance.md's scale table (a Domain Admin's keys; one CPI process per call, "+
		"n lifecycles at once, each bounded at %s; jobs: %s, any other %s; the CPI's default settings; "+
		"cloudstack.state_dir: %s):\n\n", bound, strings.Join(lat, ", "), scaleDefaultLatency, stateDir)
	fmt.Println("| lifecycle | throttle | n | successes | wall time | lifecycle p50 / max | calls per lifecycle | " +
		"429 answers | admitted rate (limit) | floor (calls ÷ limit) | wall ÷ floor | left behind |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Println(scaleRow(r))
	}
	for _, r := range results {
		for msg, n := range r.failures {
			fmt.Printf("\n- %s, n = %d, %s: %d× %s", r.name(), r.n, throttleName(r.throttled), n, msg)
		}
		if len(r.leftFiles) > 0 {
			fmt.Printf("\n- %s, n = %d: left in TMPDIR: %s", r.name(), r.n, strings.Join(r.leftFiles, ", "))
		}
	}
	fmt.Println()
}

func throttleName(throttled bool) string {
	if throttled {
		return fmt.Sprintf("%d/s", scaleLimit)
	}
	return "none"
}

// scaleRow is one scenario's row of the table.
func scaleRow(r scaleResult) string {
	sorted := append([]time.Duration{}, r.lifecycles...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	rate := float64(r.admitted) / r.wall.Seconds()
	rateCol, floorCol, ratioCol := fmt.Sprintf("%.1f/s (none)", rate), "–", "–"
	if r.throttled {
		floor := float64(r.admitted) / scaleLimit
		rateCol = fmt.Sprintf("%.1f/s (%d/s): %.0f %%", rate, scaleLimit, 100*rate/scaleLimit)
		floorCol = fmt.Sprintf("%.1f s", floor)
		ratioCol = fmt.Sprintf("%.2f×", r.wall.Seconds()/floor)
	}
	return fmt.Sprintf("| %s | %s | %d | %d/%d | %.1f s | %.1f / %.1f s | %.1f (%d) | %d | %s | %s | %s | %d files, %d processes |",
		r.name(), throttleName(r.throttled), r.n, r.ok, r.n, r.wall.Seconds(),
		sorted[len(sorted)/2].Seconds(), sorted[len(sorted)-1].Seconds(),
		float64(r.admitted)/float64(r.n), r.admitted, r.refused, rateCol, floorCol, ratioCol,
		len(r.leftFiles), r.leftProcs)
}
