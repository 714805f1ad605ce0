package spec

import (
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
// state directory with api_rate_limit 10, reach CloudStack no faster than
// 10 requests in any second (one more for the first slot, one for a
// request's way from its slot to the simulator's log), where without the
// bucket their calls come in a burst.
func TestCPIProcessesShareTheHostsRate(t *testing.T) {
	e := newEnv(t, withState(t, 10))
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
	for i := range times {
		n := 0
		for j := i; j < len(times) && times[j].Sub(times[i]) < time.Second; j++ {
			n++
		}
		if n > 12 {
			t.Fatalf("%d requests within a second from %s: over the bucket's 10/s", n, times[i].Format("15:04:05.000"))
		}
	}
}

// TestJobPollingLearnsAcrossCalls: with 500 ms jobs, the first create_disk
// polls its jobs on the schedule; the next one, in another CPI process on
// the same state directory, polls each job of the commands it has seen at
// most twice.
func TestJobPollingLearnsAcrossCalls(t *testing.T) {
	e := newEnv(t, withState(t, 0), "-job-latency", "500ms")
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
		t.Fatalf("the first create_disk's polls per job %v: the schedule (every 50-200 ms here) polls a 500 ms job more", first)
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
