// Package spec is the lifecycle suite: it builds the CPI and the simulator,
// starts a simulator per test on a free loopback port, and drives the CPI
// binary with the JSON a director sends, one process per call.
package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/simtest"
)

const (
	apiKey    = "spec-api-key-3f9a"
	secretKey = "spec-secret-key-b71c"
	zoneName  = "Sandbox-simulator"
)

var cpiBin, simBin string

// zoneState is the state of a simulator started with -empty whose zone was
// then deployed through the API by hack/zone/deploy.sh, as a harness deploys
// a fresh CloudStack. Every test's simulator starts from a copy of it.
var zoneState string

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cpi-spec-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	cpiBin = filepath.Join(dir, "cloudstack-cpi")
	if out, err := exec.Command("go", "build", "-o", cpiBin, "..").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the CPI: %v\n%s", err, out)
		return 1
	}
	if simBin, err = simtest.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Every process the suite starts (and the suite itself) makes its
	// temporary files below tmp, so what a run leaves behind shows there.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Setenv("TMPDIR", tmp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	zoneState = filepath.Join(dir, "zone.json")
	if err := deployZone(dir, zoneState); err != nil {
		fmt.Fprintln(os.Stderr, "deploying the zone through the API:", err)
		return 1
	}
	code := m.Run()
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		fmt.Fprintf(os.Stderr, "FAIL: the suite left temporary files behind: %s\n", strings.Join(names, ", "))
		return 1
	}
	return code
}

// deployZone starts an -empty simulator keeping its state at statePath, runs
// the zone deploy scripts against it with the CLI, and stops it gracefully so
// the state is saved. The simulator is stopped on every path.
func deployZone(dir, statePath string) (err error) {
	p, err := simtest.Launch(simBin, nil, "-empty", "-state", statePath,
		"-admin-keys", apiKey+":"+secretKey, "-job-latency", "0s", "-quiet")
	if err != nil {
		return err
	}
	defer func() {
		if stop := p.Stop(); stop != nil && err == nil {
			err = fmt.Errorf("stopping the simulator: %w", stop)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	deploy := exec.CommandContext(ctx, "bash", "../hack/zone/deploy.sh")
	deploy.Env = append(os.Environ(), "CLOUDSTACK_ENDPOINT="+p.URL, "ZONE_OUT="+filepath.Join(dir, "zone"),
		"CLOUDSTACK_KEY=", "CLOUDSTACK_SECRET=")
	if out, err := deploy.CombinedOutput(); err != nil {
		return fmt.Errorf("hack/zone/deploy.sh: %w\n%s", err, out)
	}
	return nil
}

// startSimulator starts a simulator on a copy of the API-deployed zone's
// state (zoneState).
func startSimulator(t testing.TB, args ...string) *simtest.Sim {
	t.Helper()
	return startSimulatorProcess(t, args...).Sim
}

// simProcess is a simulator process and what starting it again takes: the
// flags it shares with every start, its state file among them.
type simProcess struct {
	*simtest.Process
	base []string
}

// startSimulatorProcess is startSimulator for a test that restarts it.
func startSimulatorProcess(t testing.TB, args ...string) *simProcess {
	t.Helper()
	state, err := os.ReadFile(zoneState)
	if err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(statePath, state, 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"-admin-keys", apiKey + ":" + secretKey, "-state", statePath,
		"-job-latency", "0s", "-allow-loopback-urls", "-upload-monitoring-interval", "100ms", "-quiet"}
	return &simProcess{Process: simtest.Start(t, simBin, append(slices.Clone(base), args...)...), base: base}
}

// restart stops the simulator as an operator restarts a management server
// (SIGTERM: it saves its state, jobs still running included) and starts it
// again on that state and the same address with args instead of the first
// start's own.
func (p *simProcess) restart(t testing.TB, args ...string) {
	t.Helper()
	if err := p.Stop(); err != nil {
		t.Fatalf("stopping the simulator: %v", err)
	}
	listen := strings.TrimPrefix(p.Base, "http://")
	args = append(append(slices.Clone(p.base), args...), "-listen", listen)
	p.Process = simtest.Start(t, simBin, args...)
}

// env is a simulator and a cpi.json pointing at it.
type env struct {
	t      testing.TB
	sim    *simtest.Sim
	config string
	// stemcellAPIVersion goes into every call's context as the director
	// sends it; 0 leaves it out, as for a stemcell the director does not know.
	stemcellAPIVersion int
	apiVersion         int
	// registryStore is the store directory of the registry the CPI
	// writes to, when the test has one: the census lists its entries.
	registryStore string
	// project is the id of the CloudStack project cpi.json names, when it
	// names one: the helpers that read CloudStack back look in it.
	project string
}

func newEnv(t testing.TB, edit func(cfg map[string]any), simArgs ...string) *env {
	t.Helper()
	return envOn(t, startSimulator(t, simArgs...), edit)
}

// envOn is newEnv on a simulator the test started.
func envOn(t testing.TB, s *simtest.Sim, edit func(cfg map[string]any)) *env {
	t.Helper()
	cfg := map[string]any{
		"cloudstack": map[string]any{
			"endpoint": s.URL, "api_key": apiKey, "secret_access_key": secretKey, "default_zone": zoneName,
			"job_poll_interval": "50ms", "job_poll_max_interval": "200ms", "request_timeout": "10s",
		},
	}
	if edit != nil {
		edit(cfg)
	}
	return &env{t: t, sim: s, config: writeJSON(t, cfg), stemcellAPIVersion: 3, apiVersion: 2}
}

func writeJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cpi.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func section(cfg map[string]any, name string) map[string]any {
	if m, ok := cfg[name].(map[string]any); ok {
		return m
	}
	m := map[string]any{}
	cfg[name] = m
	return m
}

// response is the CPI's answer.
type response struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Retry   bool   `json:"ok_to_retry"`
	} `json:"error"`
	Log    *string `json:"log"`
	Stdout string  `json:"-"`
	Stderr string  `json:"-"`
	// MaxRSS is the CPI process's peak resident memory.
	MaxRSS int64 `json:"-"`
}

func (r response) ok(t testing.TB) response {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("CPI error %s: %s\nstderr:\n%s", r.Error.Type, r.Error.Message, r.Stderr)
	}
	return r
}

func (r response) failed(t testing.TB, typ, contains string) response {
	t.Helper()
	if r.Error == nil || r.Error.Type != "Bosh::Clouds::"+typ || !strings.Contains(r.Error.Message, contains) {
		t.Fatalf("want %s containing %q, got %s\nstderr:\n%s", typ, contains, r.Stdout, r.Stderr)
	}
	return r
}

func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Result, v); err != nil {
		t.Fatalf("result %s: %v", r.Result, err)
	}
}

// call runs the CPI once with a director-shaped request.
func (e *env) call(method string, args ...any) response {
	e.t.Helper()
	return e.raw(e.request(method, args...))
}

// request is the JSON a director sends for a call.
func (e *env) request(method string, args ...any) string {
	if args == nil {
		args = []any{}
	}
	ctx := map[string]any{"director_uuid": "spec-director", "request_id": "cpi-123456"}
	if e.stemcellAPIVersion > 0 {
		ctx["vm"] = map[string]any{"stemcell": map[string]any{"api_version": e.stemcellAPIVersion}}
	}
	req := map[string]any{"method": method, "arguments": args, "api_version": e.apiVersion, "context": ctx}
	b, _ := json.Marshal(req)
	return string(b)
}

// raw pipes stdin to the CPI exactly as given.
func (e *env) raw(stdin string) response {
	e.t.Helper()
	return runCPI(e.t, e.config, stdin)
}

func runCPI(t testing.TB, config, stdin string) response {
	t.Helper()
	return launchCPI(t, config, stdin).wait()
}

// cpiRun is one CPI process under way.
type cpiRun struct {
	t              testing.TB
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	exited         chan struct{}
	cancel         context.CancelFunc
}

// startCPI starts the CPI on stdin; wait gives its answer. A run the test
// never waits for is killed when the test ends.
func startCPI(t testing.TB, config, stdin string) *cpiRun {
	t.Helper()
	r := launchCPI(t, config, stdin)
	t.Cleanup(func() { r.cancel(); <-r.exited })
	return r
}

// launchCPI starts the CPI on stdin, bounded to two minutes.
func launchCPI(t testing.TB, config, stdin string) *cpiRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	r := &cpiRun{t: t, cmd: exec.CommandContext(ctx, cpiBin, "-configPath", config), exited: make(chan struct{}),
		cancel: cancel}
	r.cmd.Stdin = strings.NewReader(stdin)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.exited) }() // the director ignores the exit code; so do we
	return r
}

// wait is the CPI's answer once it has exited.
func (run *cpiRun) wait() response {
	t := run.t
	t.Helper()
	<-run.exited
	run.cancel()
	stdout, stderr := &run.stdout, &run.stderr
	var r response
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("stdout is not one JSON response: %q (%v)\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	if r.Log == nil {
		t.Fatalf("the response has no log string: %s", stdout.String())
	}
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	if ru, ok := run.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSS = ru.Maxrss * 1024 // Linux reports KiB
	}
	// Keys, the request signature, the registry's and WebDAV daemon's
	// passwords, and user data (base64 of agent settings, which start with
	// {"agent_id" or {"dns") never reach the CPI's output.
	for _, secret := range []string{apiKey, secretKey, "signature=", regPass, davPass, "eyJhZ2VudF9pZC", "eyJkbnMi"} {
		if strings.Contains(r.Stderr, secret) || strings.Contains(r.Stdout, secret) {
			t.Fatalf("a secret reached the CPI's output:\nstdout: %s\nstderr:\n%s", r.Stdout, r.Stderr)
		}
	}
	return r
}

// calls counts the CloudStack API calls in the simulator's log since the
// last reset, by command.
func (e *env) calls() map[string]int {
	e.t.Helper()
	reqs, err := e.sim.Admin.Requests()
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range reqs {
		out[r.Command]++
	}
	return out
}

func (e *env) resetCalls() {
	e.t.Helper()
	if err := e.sim.Admin.ClearRequests(); err != nil {
		e.t.Fatal(err)
	}
}

func total(calls map[string]int) int {
	n := 0
	for _, c := range calls {
		n += c
	}
	return n
}

func jsonString(raw json.RawMessage, s *string) error { return json.Unmarshal(raw, s) }
