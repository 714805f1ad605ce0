package cloudstack_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// frozenAt is a clock that never moves: every process reserves at the
// same instant, so the waits it records are the slots the bucket handed
// out, as offsets from that instant.
func frozenAt(t time.Time) *fakeClock { return &fakeClock{now: t, frozen: true} }

func (f *fakeClock) sorted() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := slices.Clone(f.waits)
	slices.Sort(w)
	return w
}

// limitCloud answers listZones with no zones, listCapabilities with the
// API limit when max > 0, and getUser as the root admin when root, else
// with the refusal a role without it gets (432).
type limitCloud struct {
	mu        sync.Mutex
	max, secs int
	root      bool
	calls     map[string]int
	// asking and release, when set, hold listCapabilities' answer: asking
	// is closed when it is asked, release lets it answer.
	asking, release chan struct{}
}

// serveAPI serves the commands answer writes, counting them in calls.
func serveAPI(t *testing.T, mu *sync.Mutex, calls map[string]int, answer func(http.ResponseWriter, *http.Request, string)) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		cmd := r.Form.Get("command")
		mu.Lock()
		calls[cmd]++
		mu.Unlock()
		answer(w, r, cmd)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/client/api"
}

func (f *limitCloud) serve(t *testing.T) string {
	f.calls = map[string]int{}
	return serveAPI(t, &f.mu, f.calls, func(w http.ResponseWriter, r *http.Request, cmd string) {
		switch cmd {
		case "listZones":
			fmt.Fprint(w, `{"listzonesresponse":{}}`)
		case "listCapabilities":
			if f.asking != nil {
				close(f.asking)
				<-f.release
			}
			limit := ""
			if f.max > 0 {
				limit = fmt.Sprintf(`,"apilimitinterval":%d,"apilimitmax":%d`, f.secs, f.max)
			}
			fmt.Fprintf(w, `{"listcapabilitiesresponse":{"capability":{"cloudstackversion":"4.22.0.0"%s}}}`, limit)
		case "getUser":
			if r.Form.Get("userapikey") != apiKey {
				t.Errorf("getUser asked about another key")
			}
			if f.root {
				fmt.Fprint(w, `{"getuserresponse":{"user":{"roletype":"Admin","accounttype":1}}}`)
				return
			}
			w.WriteHeader(432)
			fmt.Fprint(w, `{"getuserresponse":{"errorcode":432,"cserrorcode":9999,"errortext":"The given command 'getUser' either does not exist, is not available for user, or not available from ip address"}}`)
		default:
			t.Errorf("unexpected command %s", cmd)
		}
	})
}

// asked checks how many times listCapabilities was asked.
func (f *limitCloud) asked(t *testing.T, want int, why string) {
	t.Helper()
	if n := f.count("listCapabilities"); n != want {
		t.Errorf("listCapabilities asked %d times, want %d: %s", n, want, why)
	}
}

func (f *limitCloud) count(cmd string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[cmd]
}

// onHost serves cloud and gives a state directory and a frozen clock.
func onHost(t *testing.T, cloud *limitCloud) (endpoint, dir string, clock *fakeClock) {
	return cloud.serve(t), t.TempDir(), frozenAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// process is one CPI process's client on the host's state directory.
func process(t *testing.T, endpoint, key, dir string, rate *float64, clock cloudstack.Clock) (*cloudstack.Client, *bytes.Buffer) {
	t.Helper()
	return processBound(t, endpoint, key, dir, rate, clock, time.Minute)
}

// processBound is a process whose requests are bounded at requestTimeout.
func processBound(t *testing.T, endpoint, key, dir string, rate *float64, clock cloudstack.Clock,
	requestTimeout time.Duration) (*cloudstack.Client, *bytes.Buffer) {
	t.Helper()
	return processOf(t, hostConfig(endpoint, key, dir, rate, requestTimeout), clock)
}

// hostConfig is a process's settings: jobs polled from 5 ms, every 10 ms
// at the most.
func hostConfig(endpoint, key, dir string, rate *float64, requestTimeout time.Duration) config.CloudStack {
	retries := 0
	return config.CloudStack{Endpoint: endpoint, APIKey: key, SecretAccessKey: secretKey, DefaultZone: "z",
		RequestTimeout: config.Duration(requestTimeout), JobTimeout: config.Duration(time.Minute),
		JobPollInterval: config.Duration(5 * time.Millisecond), JobPollMaxInterval: config.Duration(10 * time.Millisecond),
		MaxRetries: &retries, StateDir: dir, APIRateLimit: rate}
}

// processOf is a process with the settings cfg.
func processOf(t *testing.T, cfg config.CloudStack, clock cloudstack.Clock) (*cloudstack.Client, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	c, err := cloudstack.New(cfg, boshlog.NewWriterLogger(boshlog.LevelDebug, &syncWriter{w: &logs}),
		cloudstack.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	return c, &logs
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func rate(r float64) *float64 { return &r }

func zones(t *testing.T, c *cloudstack.Client, n int) {
	t.Helper()
	for range n {
		if _, err := c.Zones(); err != nil {
			t.Error(err)
		}
	}
}

// wantSlots checks the waits clock recorded are n calls' at rate: the
// first at once, then one each 1/rate.
func wantSlots(t *testing.T, clock *fakeClock, n int, rate float64) {
	t.Helper()
	interval := time.Duration(float64(time.Second) / rate)
	var want []time.Duration
	for i := 1; i < n; i++ {
		want = append(want, time.Duration(i)*interval)
	}
	if got := clock.sorted(); !slices.Equal(got, want) {
		t.Errorf("waits %v, want %d calls %s apart (%g/s), each slot once", got, n, interval, rate)
	}
}

// TestProcessesOnOneStateFileShareTheRate: eight processes, each with its
// own handle on the state file, make five calls each at once: the 40
// calls get 40 distinct slots 1/rate apart, so no window holds more than
// the rate allows.
func TestProcessesOnOneStateFileShareTheRate(t *testing.T) {
	cloud := &limitCloud{}
	endpoint, dir, clock := onHost(t, cloud)
	var wg sync.WaitGroup
	for range 8 {
		c, _ := process(t, endpoint, apiKey, dir, rate(20), clock)
		wg.Add(1)
		go func() {
			defer wg.Done()
			zones(t, c, 5)
		}()
	}
	wg.Wait()
	wantSlots(t, clock, 40, 20)
	cloud.asked(t, 0, "with api_rate_limit set")
}

// TestBucketWaitsCountAsThrottleWaits: doctor leaves them out of the
// latency it measures, as it does the 429 waits.
func TestBucketWaitsCountAsThrottleWaits(t *testing.T) {
	endpoint, dir, clock := onHost(t, &limitCloud{})
	c, _ := process(t, endpoint, apiKey, dir, rate(10), clock)
	zones(t, c, 3)
	if got := c.ThrottleWaited(); got != 300*time.Millisecond {
		t.Errorf("ThrottleWaited %s, want the bucket's 100ms + 200ms", got)
	}
}

// TestTwoAPIKeysDoNotShareABucket: each key's calls start at once.
func TestTwoAPIKeysDoNotShareABucket(t *testing.T) {
	cloud := &limitCloud{}
	endpoint, dir, clock := onHost(t, cloud)
	a, logs := process(t, endpoint, apiKey, dir, rate(10), clock)
	b, _ := process(t, endpoint, apiKey+"-other", dir, rate(10), clock)
	zones(t, a, 3)
	zones(t, b, 3)
	if got, want := clock.sorted(), ms(100, 100, 200, 200); !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v: each key its own bucket", got, want)
	}
	data, err := os.ReadFile(stateFile(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecrets(t, string(data), logs.String())
}

func stateFile(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("state files in %s: %v", dir, files)
	}
	return files[0]
}

// TestRateFromListCapabilities: unset, the rate is 90 % of the limit
// listCapabilities reports for an account the throttle does not exempt,
// asked once and kept in the state for the next processes until it is
// ten minutes old.
func TestRateFromListCapabilities(t *testing.T) {
	cloud := &limitCloud{max: 25, secs: 1}
	endpoint, dir, clock := onHost(t, cloud)
	c, logs := process(t, endpoint, apiKey, dir, nil, clock)
	zones(t, c, 3)
	wantSlots(t, clock, 3, 22.5)
	if !strings.Contains(logs.String(), "22.5 requests/s, 90 % of CloudStack's API limit of 25 calls per 1 s") {
		t.Errorf("the log does not say the rate:\n%s", logs)
	}
	next, _ := process(t, endpoint, apiKey, dir, nil, clock)
	zones(t, next, 1)
	if l, u := cloud.count("listCapabilities"), cloud.count("getUser"); l != 1 || u != 1 {
		t.Errorf("listCapabilities asked %d times, getUser %d: once, then kept", l, u)
	}
	clock.now = clock.now.Add(11 * time.Minute)
	later, _ := process(t, endpoint, apiKey, dir, nil, clock)
	zones(t, later, 1)
	cloud.asked(t, 2, "again once the rate is ten minutes old")
	assertNoSecrets(t, logs.String())
}

// TestNoBucketForRootAdminsOrWithoutTheThrottle: a root admin (exempt)
// and a cloud without the throttle get no waits, and the answer is kept.
func TestNoBucketForRootAdminsOrWithoutTheThrottle(t *testing.T) {
	for name, cloud := range map[string]*limitCloud{"root admin": {max: 25, secs: 1, root: true}, "no throttle": {}} {
		t.Run(name, func(t *testing.T) {
			endpoint, dir := cloud.serve(t), t.TempDir()
			clock := frozenAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			for range 2 {
				c, logs := process(t, endpoint, apiKey, dir, nil, clock)
				zones(t, c, 3)
				if !strings.Contains(logs.String(), "no bucket") && cloud.count("listZones") == 3 {
					t.Errorf("the log does not say why there is no bucket:\n%s", logs)
				}
			}
			if got := clock.sorted(); len(got) > 0 {
				t.Errorf("waits %v, want none", got)
			}
			cloud.asked(t, 1, "once and kept")
		})
	}
}

// TestAPIRateLimitZeroTurnsTheBucketOff: no waits, nothing asked.
func TestAPIRateLimitZeroTurnsTheBucketOff(t *testing.T) {
	cloud := &limitCloud{max: 1, secs: 1}
	endpoint, dir, clock := onHost(t, cloud)
	c, _ := process(t, endpoint, apiKey, dir, rate(0), clock)
	zones(t, c, 3)
	if got := clock.sorted(); len(got) > 0 || cloud.count("listCapabilities") > 0 {
		t.Errorf("waits %v, listCapabilities %d: want none", got, cloud.count("listCapabilities"))
	}
}

// TestACorruptStateFileIsReset: garbage in the file is logged, the call
// succeeds and the file is written afresh.
func TestACorruptStateFileIsReset(t *testing.T) {
	cloud := &limitCloud{}
	endpoint, dir, clock := onHost(t, cloud)
	first, _ := process(t, endpoint, apiKey, dir, rate(10), clock)
	zones(t, first, 1)
	path := stateFile(t, dir)
	if err := os.WriteFile(path, []byte("{\"version\":1,\"buckets\":{\"x\":"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, logs := process(t, endpoint, apiKey, dir, rate(10), clock)
	zones(t, c, 2)
	if !strings.Contains(logs.String(), "is corrupt or of another version: starting afresh") {
		t.Errorf("the log does not say the state was reset:\n%s", logs)
	}
	var st map[string]any
	if data, err := os.ReadFile(path); err != nil || json.Unmarshal(data, &st) != nil {
		t.Errorf("the state file was not written afresh: %v", err)
	}
	if got := clock.sorted(); !slices.Equal(got, ms(100)) {
		t.Errorf("waits %v: the reset bucket starts again", got)
	}
}

// TestAnUnusableStateDirIsSkipped: a state directory that cannot be made
// is logged once and the calls go on without the bucket; a state file that
// cannot be written is logged once and the process paces its own calls at
// the bucket's rate; neither is an error.
func TestAnUnusableStateDirIsSkipped(t *testing.T) {
	cloud := &limitCloud{}
	endpoint := cloud.serve(t)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	blocked := t.TempDir()
	// A directory where the state file goes: it cannot be written.
	if err := os.Mkdir(filepath.Join(blocked, "cloudstack-cpi-state.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir, line string
		paced     bool
	}{{filepath.Join(file, "state"), "cannot be made", false}, {blocked, "cannot be written", true}} {
		clock := frozenAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		c, logs := process(t, endpoint, apiKey, tc.dir, rate(10), clock)
		zones(t, c, 3)
		if n := strings.Count(logs.String(), tc.line); n != 1 {
			t.Errorf("%s: %q logged %d times, want once:\n%s", tc.dir, tc.line, n, logs)
		}
		if tc.paced {
			wantSlots(t, clock, 3, 10)
		} else if got := clock.sorted(); len(got) > 0 {
			t.Errorf("%s: waits %v without a state", tc.dir, got)
		}
	}
}

// TestAWallClockSteppedBackDoesNotStall: a slot an hour ahead (reserved
// before the host's clock was set back an hour) is taken as a clock step.
func TestAWallClockSteppedBackDoesNotStall(t *testing.T) {
	cloud := &limitCloud{}
	endpoint, dir := cloud.serve(t), t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	before := frozenAt(t0.Add(time.Hour))
	c, _ := process(t, endpoint, apiKey, dir, rate(10), before)
	zones(t, c, 2)
	after := frozenAt(t0)
	c, _ = process(t, endpoint, apiKey, dir, rate(10), after)
	zones(t, c, 2)
	if got := after.sorted(); !slices.Equal(got, ms(100)) {
		t.Errorf("waits after the step %v, want the bucket started again", got)
	}
}

// holdLock takes the state directory's lock as a stuck process would,
// until the test ends.
func holdLock(t *testing.T, dir string) {
	t.Helper()
	lock, err := os.OpenFile(filepath.Join(dir, "cloudstack-cpi-state.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
}

// lockTimer stands in for the bound on the lock's wait: it records the
// bound and fires at once.
type lockTimer struct {
	mu     sync.Mutex
	bounds []time.Duration
}

func (l *lockTimer) after(d time.Duration) <-chan time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bounds = append(l.bounds, d)
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

// TestAHeldLockIsWaitedForABoundedTime: a lock another process holds past
// the bound (10 s: 200 processes queue for it a few seconds at worst) is
// logged, waited for once, and the process then paces its calls by itself
// from where the shared bucket left it, never unpaced.
func TestAHeldLockIsWaitedForABoundedTime(t *testing.T) {
	cloud := &limitCloud{}
	endpoint, dir, clock := onHost(t, cloud)
	c, logs := process(t, endpoint, apiKey, dir, rate(10), clock)
	zones(t, c, 1) // the shared bucket: the slot at once
	holdLock(t, dir)
	timer := &lockTimer{}
	c.SetStateLockWait(timer.after)
	zones(t, c, 2)
	if !strings.Contains(logs.String(), "its lock is held for over 10s") {
		t.Errorf("the log does not say the lock is held:\n%s", logs)
	}
	if !slices.Equal(timer.bounds, []time.Duration{10 * time.Second}) {
		t.Errorf("waited for the lock with bounds %v, want 10s once", timer.bounds)
	}
	wantSlots(t, clock, 3, 10)
}

// TestNoBucketLeavesTheStateFileAlone: once a process learns that
// CloudStack's throttle is off, its later requests do not touch the state
// file (a held lock would show it).
func TestNoBucketLeavesTheStateFileAlone(t *testing.T) {
	cloud := &limitCloud{}
	endpoint, dir, clock := onHost(t, cloud)
	c, logs := process(t, endpoint, apiKey, dir, nil, clock)
	zones(t, c, 1)
	cloud.asked(t, 1, "the first call asks")
	holdLock(t, dir)
	timer := &lockTimer{}
	c.SetStateLockWait(timer.after)
	zones(t, c, 3)
	if len(timer.bounds) > 0 || strings.Contains(logs.String(), "lock is held") {
		t.Errorf("requests after \"no bucket\" waited for the state file's lock:\n%s", logs)
	}
	if got := clock.sorted(); len(got) > 0 {
		t.Errorf("waits %v without a bucket", got)
	}
}

// TestWhileOneProcessAsksTheOthersGoAtCloudStacksDefault: the first
// processes on a host, while one of them asks listCapabilities, space
// their calls at 90 % of api.throttling.max's default (25/s) rather than
// burst into the throttle.
func TestWhileOneProcessAsksTheOthersGoAtCloudStacksDefault(t *testing.T) {
	cloud := &limitCloud{max: 5, secs: 1, asking: make(chan struct{}), release: make(chan struct{})}
	endpoint, dir := cloud.serve(t), t.TempDir()
	asker := frozenAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a, _ := process(t, endpoint, apiKey, dir, nil, asker)
	done := make(chan struct{})
	go func() {
		defer close(done)
		zones(t, a, 1)
	}()
	<-cloud.asking
	other := frozenAt(asker.now)
	b, _ := process(t, endpoint, apiKey, dir, nil, other)
	zones(t, b, 3)
	close(cloud.release)
	<-done
	wantSlots(t, other, 3, 22.5)
	cloud.asked(t, 1, "the others leave it to the first")
}

// TestASlotPastTheBoundFailsAtOnce: a slot further off than the request's
// bound (request_timeout, a minute here) fails the call at once with the
// throttle's type, naming the bucket, instead of sleeping into a timeout,
// and is not taken from the processes that come after.
func TestASlotPastTheBoundFailsAtOnce(t *testing.T) {
	endpoint, dir, clock := onHost(t, &limitCloud{})
	c, _ := process(t, endpoint, apiKey, dir, rate(0.01), clock)
	zones(t, c, 1)
	_, err := c.Zones()
	if !cloudstack.IsThrottled(err) || !strings.Contains(err.Error(), "this host's API rate bucket had no slot for listZones") {
		t.Fatalf("want the bucket's error, got %v", err)
	}
	if got := clock.sorted(); len(got) > 0 {
		t.Errorf("slept %v", got)
	}
	// The slot it could not use is left to the next process, whose
	// requests may wait longer.
	patient, _ := processBound(t, endpoint, apiKey, dir, rate(0.01), clock, 10*time.Minute)
	zones(t, patient, 1)
	if got := clock.sorted(); !slices.Equal(got, []time.Duration{100 * time.Second}) {
		t.Errorf("the next process waited %v, want the slot handed back, 100s", got)
	}
}
