package cloudstack_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// fakeClock records the waits asked of it and moves its time by them; no
// test here sleeps.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
	spans []time.Duration // the jitter spans drawn from
	// frozen: sleeps do not move the time, so that processes sharing the
	// clock all reserve at one instant (bucket_test.go).
	frozen bool
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(_ context.Context, d time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waits = append(f.waits, d)
	if !f.frozen {
		f.now = f.now.Add(d)
	}
	return true
}

// quarter is the jitter: a quarter of the span, recorded.
func (f *fakeClock) quarter(span time.Duration) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spans = append(f.spans, span)
	return span / 4
}

func (f *fakeClock) recorded() ([]time.Duration, []time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.waits), slices.Clone(f.spans)
}

// throttleCloud answers each command from its script, whose last answer
// repeats: "429:N" is the throttle's refusal asking N ms, as ApiServer
// writes it; "429" a 429 without CloudStack's text (a proxy's); "503" a
// proxy's bare 503; anything else a 200 with that body.
type throttleCloud struct {
	mu     sync.Mutex
	script map[string][]string
	calls  map[string]int
}

func (f *throttleCloud) serve(t *testing.T) string {
	f.calls = map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		cmd := r.Form.Get("command")
		f.mu.Lock()
		answers := f.script[cmd]
		n := f.calls[cmd]
		f.calls[cmd]++
		f.mu.Unlock()
		if len(answers) == 0 {
			t.Errorf("unexpected command %s", cmd)
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		writeAnswer(w, cmd, answers[min(n, len(answers)-1)])
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/client/api"
}

func writeAnswer(w http.ResponseWriter, cmd, answer string) {
	var hint int
	_, notHinted := fmt.Sscanf(answer, "429:%d", &hint)
	switch {
	case answer == "429":
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
	case answer == "503":
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
	case answer == "531:listApis":
		// The throttle refusing listApis from inside the command
		// (getApisAllowedToUser) does not pass through commandAvailable's
		// API_LIMIT_EXCEED: ApiServer.handleRequest's catches answer it, as
		// ACCOUNT_ERROR (531) where RequestLimitException is a
		// PermissionDeniedException. Its text, not its code, marks it.
		throttleRefusal(w, cmd, 531, 300)
	case notHinted == nil:
		throttleRefusal(w, cmd, http.StatusTooManyRequests, hint)
	default:
		_, _ = w.Write([]byte(answer))
	}
}

// throttleRefusal is ApiServlet's answer to ApiRateLimitServiceImpl's
// RequestLimitException: ServerApiException(API_LIMIT_EXCEED) serialized by
// getSerializedApiError, its description also in X-Description.
func throttleRefusal(w http.ResponseWriter, cmd string, status, ms int) {
	text := fmt.Sprintf("The given user has reached his/her account api limit, please retry after [%d] ms.", ms)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("X-Description", text)
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"%sresponse":{"uuidList":[],"errorcode":%d,"cserrorcode":9999,"errortext":%q}}`,
		strings.ToLower(cmd), status, text)
}

func (f *throttleCloud) count(cmd string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[cmd]
}

// throttledClient is a client on a fake clock whose jitter is a quarter of
// its span; retries is the transient-failure budget.
func throttledClient(t *testing.T, endpoint string, retries int, timeout time.Duration) (*cloudstack.Client, *fakeClock, *bytes.Buffer) {
	t.Helper()
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := config.CloudStack{
		Endpoint: endpoint, APIKey: apiKey, SecretAccessKey: secretKey, DefaultZone: "z",
		RequestTimeout: config.Duration(timeout), JobTimeout: config.Duration(300 * time.Millisecond),
		JobPollInterval: config.Duration(5 * time.Millisecond), JobPollMaxInterval: config.Duration(10 * time.Millisecond),
		MaxRetries: &retries,
	}
	var logs bytes.Buffer
	c, err := cloudstack.New(cfg, boshlog.NewWriterLogger(boshlog.LevelDebug, &logs),
		cloudstack.WithClock(clock), cloudstack.WithJitter(clock.quarter))
	if err != nil {
		t.Fatal(err)
	}
	return c, clock, &logs
}

func ms(n ...int) []time.Duration {
	var out []time.Duration
	for _, v := range n {
		out = append(out, time.Duration(v)*time.Millisecond)
	}
	return out
}

// TestThrottledCallWaitsWhatCloudStackSays: each refusal is waited for the
// delay its text names plus jitter drawn from a span that widens with each
// refusal; the 429s spend nothing of the transient budget (0 here); the
// log says when each wait begins and the total once CloudStack takes the
// call, with no secret in it.
func TestThrottledCallWaitsWhatCloudStackSays(t *testing.T) {
	f := &throttleCloud{script: map[string][]string{
		"listVirtualMachines": {"429:734", "429:512", "429:90", vmList("cpivm-x")},
	}}
	c, clock, logs := throttledClient(t, f.serve(t), 0, time.Minute)
	vm, err := c.FindVM("cpivm-x")
	if err != nil || vm == nil || f.count("listVirtualMachines") != 4 {
		t.Fatalf("vm %+v err %v after %d calls", vm, err, f.count("listVirtualMachines"))
	}
	waits, spans := clock.recorded()
	if want := ms(734+250, 512+500, 90+1000); !slices.Equal(waits, want) {
		t.Errorf("waited %v, want %v (the hint plus a quarter of the span)", waits, want)
	}
	if want := ms(1000, 2000, 4000); !slices.Equal(spans, want) {
		t.Errorf("jitter spans %v, want %v", spans, want)
	}
	for _, line := range []string{
		"listVirtualMachines: refused by CloudStack's API throttle (refusal 1; it asks to retry after 734ms); waiting 984ms",
		"listVirtualMachines: refused by CloudStack's API throttle (refusal 3; it asks to retry after 90ms); waiting 1.09s",
		"listVirtualMachines: taken by CloudStack after 3 refusals of its API throttle; waited 3.086s in all",
	} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("the log lacks %q:\n%s", line, logs.String())
		}
	}
	assertNoSecrets(t, logs.String())
}

// TestThrottleWithoutAHintBacksOff: a 429 without CloudStack's text (a
// proxy's) is waited 1 s, doubling, plus jitter.
func TestThrottleWithoutAHintBacksOff(t *testing.T) {
	f := &throttleCloud{script: map[string][]string{"listVirtualMachines": {"429", "429", "429", vmList("cpivm-x")}}}
	c, clock, logs := throttledClient(t, f.serve(t), 0, time.Minute)
	if _, err := c.FindVM("cpivm-x"); err != nil {
		t.Fatal(err)
	}
	waits, _ := clock.recorded()
	if want := ms(1000+250, 2000+500, 4000+1000); !slices.Equal(waits, want) {
		t.Errorf("waited %v, want %v", waits, want)
	}
	if !strings.Contains(logs.String(), "(refusal 1; it names no delay); waiting 1.25s") {
		t.Errorf("log:\n%s", logs.String())
	}
}

// TestThrottleBoundEndsTheWait: refused on every try, the call waits while
// another try still fits in request_timeout, then fails naming the throttle,
// as a refusal CloudStack never acted on.
func TestThrottleBoundEndsTheWait(t *testing.T) {
	f := &throttleCloud{script: map[string][]string{"listVirtualMachines": {"429:1000"}}}
	c, clock, logs := throttledClient(t, f.serve(t), 5, 10*time.Second)
	_, err := c.FindVM("cpivm-x")
	var throttled *cloudstack.ThrottledError
	if !errors.As(err, &throttled) || !cloudstack.IsThrottled(err) || !cloudstack.NotActedOn(err) {
		t.Fatalf("want the throttle's error, got %v (%T)", err, err)
	}
	waits, _ := clock.recorded()
	// 1 s + 250 ms, 1 s + 500 ms, 1 s + 1 s, 1 s + 2 s: 8.75 s; the next
	// (1 s + 2 s) would end past 10 s.
	if want := ms(1250, 1500, 2000, 3000); !slices.Equal(waits, want) {
		t.Errorf("waited %v, want %v", waits, want)
	}
	if f.count("listVirtualMachines") != 5 {
		t.Errorf("%d tries", f.count("listVirtualMachines"))
	}
	for _, part := range []string{"CloudStack's API throttle (api.throttling.max) refused listVirtualMachines for 7.75s",
		"5 refusals", "the account's limit is shared by every client of it"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("the error lacks %q: %v", part, err)
		}
	}
	assertNoSecrets(t, err.Error(), logs.String())
}

// TestTransientBudgetIsApartFromTheThrottle: 503s keep today's budget and
// backoff (250 ms doubling), whether or not 429s come between them.
func TestTransientBudgetIsApartFromTheThrottle(t *testing.T) {
	t.Run("503s alone", func(t *testing.T) {
		f := &throttleCloud{script: map[string][]string{"listVirtualMachines": {"503"}}}
		c, clock, _ := throttledClient(t, f.serve(t), 3, time.Minute)
		if _, err := c.FindVM("cpivm-x"); err == nil || cloudstack.IsThrottled(err) {
			t.Fatalf("want the 503, got %v", err)
		}
		waits, _ := clock.recorded()
		if want := ms(250, 500, 1000); !slices.Equal(waits, want) || f.count("listVirtualMachines") != 4 {
			t.Errorf("waited %v in %d tries, want %v in 4", waits, f.count("listVirtualMachines"), want)
		}
	})
	t.Run("429s between", func(t *testing.T) {
		f := &throttleCloud{script: map[string][]string{
			"listVirtualMachines": {"429:100", "503", "429:100", "503", "503", vmList("cpivm-x")},
		}}
		c, clock, _ := throttledClient(t, f.serve(t), 3, time.Minute)
		if _, err := c.FindVM("cpivm-x"); err != nil {
			t.Fatalf("three 503s are within a budget of 3 however many 429s come between: %v", err)
		}
		waits, _ := clock.recorded()
		if want := ms(100+250, 250, 100+500, 500, 1000); !slices.Equal(waits, want) {
			t.Errorf("waited %v, want %v", waits, want)
		}
	})
}

// TestThrottledDeployIsSentAgain: a command that creates is sent again
// after a 429, since the throttle refused it before it ran.
func TestThrottledDeployIsSentAgain(t *testing.T) {
	f := &throttleCloud{script: map[string][]string{
		"deployVirtualMachine": {"429:200", "429:200", `{"deployvirtualmachineresponse":{"id":"` + vmUUID + `","jobid":"j1"}}`},
		"queryAsyncJobResult":  {jobDone(`{"virtualmachine":{"id":"` + vmUUID + `","state":"Running"}}`)},
	}}
	c, clock, _ := throttledClient(t, f.serve(t), 0, time.Minute)
	id, _, err := c.DeployVM(cloudstack.DeploySpec{Name: "vm-1", ZoneID: "z1", ServiceOfferingID: "o", TemplateID: "t"})
	if err != nil || id != vmUUID || f.count("deployVirtualMachine") != 3 {
		t.Fatalf("deploy %q %v after %d sends", id, err, f.count("deployVirtualMachine"))
	}
	if waits, _ := clock.recorded(); !slices.Equal(waits, ms(450, 700)) {
		t.Errorf("waited %v", waits)
	}
}

// TestThrottledPollsWaitWithinTheJobsBound: a poll refused past
// request_timeout does not end the wait for the job, which runs on; the
// job's bound does, with an error naming the throttle that says the job
// may still complete.
func TestThrottledPollsWaitWithinTheJobsBound(t *testing.T) {
	t.Run("the job ends", func(t *testing.T) {
		f := &throttleCloud{script: map[string][]string{"queryAsyncJobResult": {
			"429:1000", "429:1000", "429:1000", jobDone(`{"virtualmachine":{"id":"` + vmUUID + `"}}`)}}}
		c, _, logs := throttledClient(t, f.serve(t), 0, 2*time.Second)
		if _, err := c.WaitJob("deployVirtualMachine", "j1"); err != nil {
			t.Fatalf("%v\n%s", err, logs.String())
		}
		if !strings.Contains(logs.String(), "job j1 of deployVirtualMachine: polls refused by CloudStack's API throttle") {
			t.Errorf("log:\n%s", logs.String())
		}
	})
	t.Run("the job's bound ends", func(t *testing.T) {
		f := &throttleCloud{script: map[string][]string{"queryAsyncJobResult": {"429:1000"}}}
		c, _, _ := throttledClient(t, f.serve(t), 0, 2*time.Second)
		_, err := c.WaitJob("deployVirtualMachine", "j1")
		if !cloudstack.IsJobTimeout(err) || !cloudstack.IsThrottled(err) || cloudstack.NotActedOn(err) ||
			!strings.Contains(err.Error(), "CloudStack's API throttle (api.throttling.max) refused queryAsyncJobResult") ||
			!strings.Contains(err.Error(), "it may still complete") {
			t.Fatalf("got %v", err)
		}
	})
}

// TestListApisWaitsOnce: listApis counts once per API the role allows, so
// a refused one is tried once more, not until the bound.
func TestListApisWaitsOnce(t *testing.T) {
	f := &throttleCloud{script: map[string][]string{"listApis": {"429:300"}}}
	c, clock, _ := throttledClient(t, f.serve(t), 3, time.Minute)
	if _, err := c.APIs(); !cloudstack.IsThrottled(err) || f.count("listApis") != 2 {
		t.Fatalf("got %v after %d tries", err, f.count("listApis"))
	}
	if waits, _ := clock.recorded(); !slices.Equal(waits, ms(550)) {
		t.Errorf("waited %v", waits)
	}
}

// TestThrottleTextInAnotherAnswerIsWaitedOut: a refusal that carries the
// throttle's text under another code is the throttle's, and waited out.
func TestThrottleTextInAnotherAnswerIsWaitedOut(t *testing.T) {
	f := &throttleCloud{script: map[string][]string{
		"listApis": {"531:listApis", `{"listapisresponse":{"count":1,"api":[{"name":"listZones"}]}}`},
	}}
	c, clock, _ := throttledClient(t, f.serve(t), 0, time.Minute)
	apis, err := c.APIs()
	if err != nil || !apis["listZones"] || f.count("listApis") != 2 {
		t.Fatalf("apis %v err %v after %d tries", apis, err, f.count("listApis"))
	}
	if waits, _ := clock.recorded(); !slices.Equal(waits, ms(550)) {
		t.Errorf("waited %v", waits)
	}
}
