package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// withState gives every CPI process of the test one state directory, as
// bin/cpi does on a host, and the rate when rate > 0.
func withState(t testing.TB, rate float64) func(cfg map[string]any) {
	dir := t.TempDir()
	return func(cfg map[string]any) {
		cs := section(cfg, "cloudstack")
		cs["state_dir"] = dir
		if rate > 0 {
			cs["api_rate_limit"] = rate
		}
	}
}

// TestCPIProcessesShareTheHostsRate: eight CPI processes at once, on one
// state directory with api_rate_limit 4, reach CloudStack no faster than
// the bucket's slots allow in any two seconds (8, and the one a window
// starts on) plus those a process sends late: the bucket hands out slots
// 250 ms apart, but a process woken late from its slot on a loaded machine
// (CI runs other packages' tests beside this one) sends its request beside
// later slots' requests, so the bound allows 1.5 s of lateness (6 slots).
// Without the bucket the same calls come in one burst of over 20.
func TestCPIProcessesShareTheHostsRate(t *testing.T) {
	const rate = 4
	e := newEnv(t, withState(t, rate))
	e.resetCalls()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.call("create_disk", 1024, map[string]any{"disk_offering": "Custom"}, nil).ok(t)
		}()
	}
	wg.Wait()
	reqs, err := e.sim.Admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) < 24 {
		t.Fatalf("only %d requests: too few to show a rate", len(reqs))
	}
	var times []time.Time
	for _, r := range reqs {
		times = append(times, r.Time)
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	const window, lateness = 2 * time.Second, 1500 * time.Millisecond
	most := int((window+lateness).Seconds()*rate) + 1
	for i := range times {
		n := 0
		for j := i; j < len(times) && times[j].Sub(times[i]) < window; j++ {
			n++
		}
		if n > most {
			t.Fatalf("%d requests within %s from %s: over the bucket's %d/s", n, window, times[i].Format("15:04:05.000"), rate)
		}
	}
}

// TestJobPollingLearnsAcrossCalls: with createVolume's jobs taking 600 ms
// and createTags' 250 ms, the first create_disk polls its jobs on the
// schedule; the next ones, in other CPI processes on the same state
// directory, poll each job of the commands seen before at most twice.
func TestJobPollingLearnsAcrossCalls(t *testing.T) {
	e := newEnv(t, withState(t, 0), "-job-latency-for", "createVolume=600ms,createTags=250ms")
	polls := func() map[string]int {
		e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, nil)
		reqs, err := e.sim.Admin.Requests()
		if err != nil {
			t.Fatal(err)
		}
		byJob := map[string]int{}
		for _, r := range reqs {
			if r.Command == "queryAsyncJobResult" {
				byJob[r.Params["jobid"]]++
			}
		}
		e.resetCalls()
		return byJob
	}
	e.resetCalls()
	first := polls()
	if len(first) == 0 || slices.Max(mapValues(first)) <= 2 {
		t.Fatalf("the first create_disk's polls per job %v: the schedule (every 50-200 ms here) polls a 600 ms job more", first)
	}
	for range 2 {
		for job, n := range polls() {
			if n > 2 {
				t.Errorf("job %s of a command seen before was polled %d times, want at most 2", job, n)
			}
		}
	}
}

func mapValues(m map[string]int) []int {
	var out []int
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestTheStateKeepsNoSecrets: the state file a lifecycle leaves holds
// neither key.
func TestTheStateKeepsNoSecrets(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, func(cfg map[string]any) {
		section(cfg, "cloudstack")["state_dir"] = dir
		section(cfg, "cloudstack")["api_rate_limit"] = 50
	})
	r := e.call("create_disk", 1024, map[string]any{"disk_offering": "Custom"}, nil).ok(t)
	data, err := os.ReadFile(filepath.Join(dir, "cloudstack-cpi-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	state := string(data)
	if !strings.Contains(state, `"buckets"`) || !strings.Contains(state, `"jobs"`) {
		t.Fatalf("the state file holds no bucket or job times: %s", state)
	}
	for _, s := range []string{apiKey, secretKey} {
		if strings.Contains(state, s) || strings.Contains(r.Stderr, s) {
			t.Errorf("a key reached the state file or the log")
		}
	}
}

// userWithState is a User account's env (the throttle counts it) whose
// CPI processes share one state directory.
func userWithState(t *testing.T, e *env) *env {
	u, _, _ := e.asAccount("throttled", 0, "User")
	var cfg map[string]any
	if err := json.Unmarshal([]byte(readConfig(t, u.config)), &cfg); err != nil {
		t.Fatal(err)
	}
	withState(t, 0)(cfg)
	u.config = writeJSON(t, cfg)
	return u
}

func readConfig(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCPIProcessesStayUnderTheRealThrottle: behind the simulator's API
// throttle at 10 calls per second, a first call learns 90 % of the limit
// listCapabilities reports (no api_rate_limit); then eight CPI processes of
// the User account at once all succeed with (almost) no 429: the bucket,
// not the throttle, spaces them (a 429 is left to a request's way from its
// slot to the simulator). Without the bucket the same calls meet a score.
func TestCPIProcessesStayUnderTheRealThrottle(t *testing.T) {
	e := userWithState(t, newEnv(t, nil, "-api-throttling-enabled", "-api-throttling-max", "10",
		"-api-throttling-interval", "1"))
	first := e.call("create_disk", 1024, map[string]any{"disk_offering": "Custom"}, nil).ok(t).Stderr
	if !strings.Contains(first, "9 requests/s, 90 % of CloudStack's API limit of 10 calls per 1 s") {
		t.Errorf("the first call did not log the rate it took:\n%s", first)
	}
	if n := e.calls()["listCapabilities"]; n != 1 {
		t.Errorf("listCapabilities asked %d times, want once", n)
	}
	e.resetCalls()
	var wg sync.WaitGroup
	logs := make([]string, 8)
	for i := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			logs[i] = e.call("create_disk", 1024, map[string]any{"disk_offering": "Custom"}, nil).ok(t).Stderr
		}()
	}
	wg.Wait()
	reqs, err := e.sim.Admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, r := range reqs {
		if r.Status == 429 {
			refused++
		}
	}
	t.Logf("%d of %d requests refused", refused, len(reqs))
	if refused > 3 {
		t.Errorf("%d of %d requests refused by the throttle: the bucket should space them under it", refused, len(reqs))
	}
	if n := e.calls()["listCapabilities"]; n != 0 {
		t.Errorf("listCapabilities asked %d more times: the state keeps the rate", n)
	}
	if joined := strings.Join(logs, ""); !strings.Contains(joined, "for this host's API rate bucket") {
		t.Errorf("no process waited on the bucket:\n%s", joined)
	}
}

// TestARootAdminGetsNoBucketBehindTheRealThrottle: the throttle exempts
// root admins, so their processes are not spaced: the CPI asks once and
// keeps the answer.
func TestARootAdminGetsNoBucketBehindTheRealThrottle(t *testing.T) {
	e := newEnv(t, withState(t, 0), "-api-throttling-enabled", "-api-throttling-max", "2")
	e.resetCalls()
	r := e.call("create_disk", 1024, map[string]any{"disk_offering": "Custom"}, nil).ok(t)
	if !strings.Contains(r.Stderr, "the account is a root admin, which CloudStack's API throttle (2 calls per 1 s) exempts: no bucket") {
		t.Errorf("stderr:\n%s", r.Stderr)
	}
	if strings.Contains(r.Stderr, "for this host's API rate bucket") {
		t.Errorf("a root admin's call waited on the bucket:\n%s", r.Stderr)
	}
	e.call("create_disk", 1024, map[string]any{"disk_offering": "Custom"}, nil).ok(t)
	if c := e.calls(); c["listCapabilities"] != 1 || c["getUser"] != 1 {
		t.Errorf("listCapabilities %d, getUser %d: want each once, then kept", c["listCapabilities"], c["getUser"])
	}
}
