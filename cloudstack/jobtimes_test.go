package cloudstack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// jobCloud answers queryAsyncJobResult: a job is done once it is as old
// as its latency, counted from when the test starts waiting for it.
type jobCloud struct {
	mu      sync.Mutex
	latency time.Duration
	started map[string]time.Time
	polls   map[string]int
	// answerAfter delays every answer, as a loaded CloudStack or a poll's
	// wait for the throttle would: the job's state is of the poll's arrival.
	answerAfter time.Duration
	// dated: a done job's answer gives its created and completed dates,
	// to the second, as CloudStack does: the same second here.
	dated bool
}

func (f *jobCloud) serve(t *testing.T) string {
	f.started, f.polls = map[string]time.Time{}, map[string]int{}
	return serveAPI(t, &f.mu, map[string]int{}, func(w http.ResponseWriter, r *http.Request, cmd string) {
		if cmd != "queryAsyncJobResult" {
			t.Errorf("unexpected command %s", cmd)
			return
		}
		id := r.Form.Get("jobid")
		f.mu.Lock()
		f.polls[id]++
		done := time.Since(f.started[id]) >= f.latency
		delay, dated := f.answerAfter, f.dated
		f.mu.Unlock()
		time.Sleep(delay)
		status, dates := 0, ""
		if done {
			status = 1
		}
		if done && dated {
			dates = `,"created":"2026-01-01T00:00:07+0000","completed":"2026-01-01T00:00:07+0000"`
		}
		fmt.Fprintf(w, `{"queryasyncjobresultresponse":{"jobid":%q,"jobstatus":%d,"jobresult":{"volume":{}}%s}}`,
			id, status, dates)
	})
}

func (f *jobCloud) start(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started[id] = time.Now()
}

func (f *jobCloud) count(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.polls[id]
}

// TestPollingLearnsEachCommandsJobTime: the first createVolume job is
// polled on the schedule (every 5-10 ms here); the next, in another
// process on the same state, first at about the learned time, so at most
// twice; a command not yet seen waits no longer than the schedule's
// longest gap (10 ms here) for its first poll. The test counts polls;
// the jobs' 150 ms only gives the schedule something to count.
func TestPollingLearnsEachCommandsJobTime(t *testing.T) {
	cloud := &jobCloud{latency: 150 * time.Millisecond}
	endpoint, dir := cloud.serve(t), t.TempDir()
	wait := func(command, id string) int {
		c, logs := process(t, endpoint, apiKey, dir, rate(0), realClock{})
		cloud.start(id)
		if _, err := c.WaitJob(command, id); err != nil {
			t.Fatalf("%v\n%s", err, logs)
		}
		return cloud.count(id)
	}
	if n := wait("createVolume", "job-1"); n <= 2 {
		t.Fatalf("the first job was polled %d times: the schedule polls every 5-10 ms", n)
	}
	for _, id := range []string{"job-2", "job-3", "job-4"} {
		if n := wait("createVolume", id); n > 2 {
			t.Errorf("%s of a learned command was polled %d times, want at most 2", id, n)
		}
	}
	if n := wait("deployVirtualMachine", "job-5"); n <= 2 {
		t.Errorf("a command not yet seen was polled %d times: its first poll waits job_poll_max_interval at most", n)
	}
}

// TestAnUnseenCommandWaitsForTheQuickestJobLearned: with polls every 5 ms
// to 1 s, a new host's first job (nothing learned) is polled on the
// schedule; once a 150 ms createVolume job is learned, a command not yet
// seen is first polled when that job would have ended, so at most twice
// for its 150 ms job; a job learned on another endpoint lends it nothing.
func TestAnUnseenCommandWaitsForTheQuickestJobLearned(t *testing.T) {
	cloud, other := &jobCloud{latency: 150 * time.Millisecond}, &jobCloud{latency: 150 * time.Millisecond}
	endpoints, dir := map[*jobCloud]string{cloud: cloud.serve(t), other: other.serve(t)}, t.TempDir()
	wait := func(cloud *jobCloud, command, id string) int {
		cfg := hostConfig(endpoints[cloud], apiKey, dir, rate(0), time.Minute)
		cfg.JobPollMaxInterval = config.Duration(time.Second)
		c, logs := processOf(t, cfg, realClock{})
		cloud.start(id)
		if _, err := c.WaitJob(command, id); err != nil {
			t.Fatalf("%v\n%s", err, logs)
		}
		return cloud.count(id)
	}
	if n := wait(cloud, "createVolume", "job-1"); n <= 2 {
		t.Fatalf("the host's first job was polled %d times: with nothing learned, the schedule polls from 5 ms", n)
	}
	if n := wait(cloud, "deployVirtualMachine", "job-2"); n > 2 {
		t.Errorf("a command not yet seen was polled %d times, want at most 2: none before the quickest job learned", n)
	}
	if n := wait(other, "attachVolume", "job-3"); n <= 2 {
		t.Errorf("a command on an endpoint with nothing learned was polled %d times: the schedule polls from 5 ms", n)
	}
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// TestOneSlowJobHardlyMovesTheFirstPoll: after 100 ms jobs, one taking a
// second lifts what the state expects of the command by 30 % at most, so
// the next short job is not first polled near a second.
func TestOneSlowJobHardlyMovesTheFirstPoll(t *testing.T) {
	cloud := &jobCloud{latency: 100 * time.Millisecond}
	endpoint, dir := cloud.serve(t), t.TempDir()
	wait := func(id string) {
		c, logs := process(t, endpoint, apiKey, dir, rate(0), realClock{})
		cloud.start(id)
		if _, err := c.WaitJob("createVolume", id); err != nil {
			t.Fatalf("%v\n%s", err, logs)
		}
	}
	for _, id := range []string{"job-1", "job-2", "job-3"} {
		wait(id)
	}
	before := expectedMS(t, dir)
	cloud.mu.Lock()
	cloud.latency = time.Second
	cloud.mu.Unlock()
	wait("slow")
	if after := expectedMS(t, dir); after > 1.31*before {
		t.Errorf("one 1 s job moved the expected %.0f ms to %.0f ms", before, after)
	}
}

// TestJobTimeIsMeasuredWhenThePollsWereSent: 100 ms jobs whose polls are
// answered 300 ms late are learned from when the polls were sent (about
// 160 ms: found running at 5 ms, done at 310 ms), not from when their
// answers came (about 460 ms), which would poll every later job late.
func TestJobTimeIsMeasuredWhenThePollsWereSent(t *testing.T) {
	cloud := &jobCloud{latency: 100 * time.Millisecond, answerAfter: 300 * time.Millisecond}
	if got := learnedOfOneJob(t, cloud, 0); got >= 300 {
		t.Errorf("learned %.0f ms for 100 ms jobs: measured when the answers came, not when the polls went", got)
	}
}

// TestAJobsDatesBoundWhatLatePollsTeach: a 500 ms job whose second poll
// waits 2.5 s for this host's bucket (0.4/s) is found done at 2.5 s; its
// dates say it took under a second, so under a second is learned, not the
// 1.25 s the polls alone would teach (at 200 processes, polls wait 9 s).
func TestAJobsDatesBoundWhatLatePollsTeach(t *testing.T) {
	cloud := &jobCloud{latency: 500 * time.Millisecond, dated: true}
	if got := learnedOfOneJob(t, cloud, 0.4); got >= 1000 {
		t.Errorf("learned %.0f ms for a job its dates put under a second", got)
	}
}

// learnedOfOneJob waits for one createVolume job of cloud in a process
// whose bucket runs at bucketRate (0: none) and says what it learned.
func learnedOfOneJob(t *testing.T, cloud *jobCloud, bucketRate float64) float64 {
	t.Helper()
	endpoint, dir := cloud.serve(t), t.TempDir()
	c, logs := process(t, endpoint, apiKey, dir, rate(bucketRate), realClock{})
	cloud.start("job-1")
	if _, err := c.WaitJob("createVolume", "job-1"); err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	return expectedMS(t, dir)
}

// expectedMS reads the one command's expected job time from the state file.
func expectedMS(t *testing.T, dir string) float64 {
	t.Helper()
	var st struct {
		Jobs map[string]struct {
			MeanMS float64 `json:"mean_ms"`
		} `json:"jobs"`
	}
	data, err := os.ReadFile(stateFile(t, dir))
	if err != nil || json.Unmarshal(data, &st) != nil || len(st.Jobs) != 1 {
		t.Fatalf("state %s (%v)", data, err)
	}
	for _, j := range st.Jobs {
		return j.MeanMS
	}
	return 0
}
