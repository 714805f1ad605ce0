package simulator

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// stepClock is a clock a test moves by hand, so a throttle window is
// stepped through without waiting for it.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// useStepClock makes the simulator's rate limiter read a stepClock.
func useStepClock(s *testSim) *stepClock {
	c := &stepClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s.srv.Mu.Lock()
	s.srv.Throttle.Clock = c.Now
	s.srv.Mu.Unlock()
	return c
}

func ptr[T any](v T) *T { return &v }

// throttled starts a simulator whose API limit is on with max calls a
// window, and a User-role account "tenant" (the root admin that creates it
// is not counted).
func throttled(t *testing.T, opts Options, maxCalls int) (s *testSim, clock *stepClock, key, secret string) {
	t.Helper()
	opts.APIThrottling.Enabled, opts.APIThrottling.Max = ptr(true), ptr(maxCalls)
	s = startSim(t, opts)
	clock = useStepClock(s)
	key, secret = newAccount(t, s, "tenant", 0)
	return s, clock, key, secret
}

// as sends a signed (version 3) request with an account's keys.
func (s *testSim) as(key, secret string, params map[string]string) response {
	s.t.Helper()
	return s.get(signed(v3(params, 10*time.Minute), key, secret))
}

const limitText = "The given user has reached his/her account api limit, please retry after [%d] ms."

func wantLimited(t *testing.T, r response, name string, retryAfterMS int) {
	t.Helper()
	r.wantError(t, name, 429, 9999, fmt.Sprintf(limitText, retryAfterMS))
}

// TestThrottleCountsCallsInAWindowAndResetsAfterIt: api.throttling.max calls
// of an account pass in a window of api.throttling.interval seconds that
// starts at its first call; the next is 429 naming the milliseconds left;
// refused calls count too; a new window starts after the interval.
func TestThrottleCountsCallsInAWindowAndResetsAfterIt(t *testing.T) {
	s, clock, key, secret := throttled(t, Options{}, 3)
	listZones := map[string]string{"command": "listZones"}
	for i := 0; i < 3; i++ {
		if r := s.as(key, secret, listZones); r.status != 200 {
			t.Fatalf("call %d within the limit: %s", i+1, r.raw)
		}
		clock.advance(100 * time.Millisecond)
	}
	wantLimited(t, s.as(key, secret, listZones), "listzonesresponse", 700)
	clock.advance(699 * time.Millisecond)
	wantLimited(t, s.as(key, secret, listZones), "listzonesresponse", 1)
	// The real client sees the same answer.
	tenant := cloudstack.NewClient(s.api, key, secret, false)
	_, err := tenant.Zone.ListZones(tenant.Zone.NewListZonesParams())
	wantAPIError(t, err, 429, "please retry after [1] ms.")
	clock.advance(2 * time.Millisecond) // the window has ended
	for i := 0; i < 3; i++ {
		if r := s.as(key, secret, listZones); r.status != 200 {
			t.Fatalf("call %d of a new window: %s", i+1, r.raw)
		}
	}
	wantLimited(t, s.as(key, secret, listZones), "listzonesresponse", 1000)
	// Async commands are counted as they are asked, under their own name.
	wantLimited(t, s.as(key, secret, map[string]string{"command": "deployVirtualMachine", "zoneid": "x"}),
		"deployvirtualmachineresponse", 1000)
}

// TestThrottleCountsEachAccountAndExemptsTheRootAdmin: another account has
// its own count, the root admin none; a command the role refuses is not
// counted (the role checker runs first).
func TestThrottleCountsEachAccountAndExemptsTheRootAdmin(t *testing.T) {
	s, _, key, secret := throttled(t, Options{}, 2)
	other, otherSecret := newAccount(t, s, "other", 0)
	listZones := map[string]string{"command": "listZones"}
	for i := 0; i < 5; i++ {
		s.as(key, secret, map[string]string{"command": "listHosts"}).
			wantError(t, "errorresponse", 432, 9999, "The API [listHosts] does not exist or is not available for the account tenant.")
	}
	for i := 0; i < 2; i++ {
		if r := s.as(key, secret, listZones); r.status != 200 {
			t.Fatalf("tenant call %d: %s", i+1, r.raw)
		}
	}
	wantLimited(t, s.as(key, secret, listZones), "listzonesresponse", 1000)
	if r := s.as(other, otherSecret, listZones); r.status != 200 {
		t.Fatalf("another account is limited by the tenant's count: %s", r.raw)
	}
	for i := 0; i < 10; i++ {
		if r := s.call(listZones); r.status != 200 {
			t.Fatalf("root admin call %d: %s", i+1, r.raw)
		}
	}
}

// tenantAPIs is how many APIs listApis lists to a User-role account.
func tenantAPIs(t *testing.T) int {
	t.Helper()
	s := startSim(t, Options{})
	key, secret := newAccount(t, s, "tenant", 0)
	r := s.as(key, secret, map[string]string{"command": "listApis"})
	return int(num(r.inner(t, "listapisresponse")["count"]))
}

// TestThrottleListApisCountsOncePerAllowedAPI: listApis costs its own count
// and one per API the caller's role allows (getApisAllowedToUser); past the
// limit it is refused as a PermissionDeniedException (531, 4545). With a
// name it costs two, and past the limit the name is "not found" (530).
func TestThrottleListApisCountsOncePerAllowedAPI(t *testing.T) {
	n := tenantAPIs(t)
	listApis := map[string]string{"command": "listApis"}

	s, _, key, secret := throttled(t, Options{}, n+1)
	if r := s.as(key, secret, listApis); r.status != 200 {
		t.Fatalf("listApis with room for 1+%d counts: %s", n, r.raw)
	}
	wantLimited(t, s.as(key, secret, map[string]string{"command": "listZones"}), "listzonesresponse", 1000)

	s, _, key, secret = throttled(t, Options{}, n)
	s.as(key, secret, listApis).wantError(t, "listapisresponse", 531, 4545,
		fmt.Sprintf(limitText, 1000))

	s, _, key, secret = throttled(t, Options{}, 1)
	s.as(key, secret, map[string]string{"command": "listApis", "name": "listZones"}).wantError(t, "listapisresponse",
		530, 9999, "Api Discovery plugin was unable to find an api by that name or process any apis")
	s, _, key, secret = throttled(t, Options{}, 2)
	if r := s.as(key, secret, map[string]string{"command": "listApis", "name": "listZones"}); r.status != 200 {
		t.Fatalf("listApis name=listZones with room for 2 counts: %s", r.raw)
	}
	// The root admin's listApis lists every API and counts nothing.
	for i := 0; i < 3; i++ {
		if r := s.call(listApis); r.status != 200 {
			t.Fatalf("root admin listApis: %s", r.raw)
		}
	}
}

// capabilities is listCapabilities' answer to the caller whose keys are given.
func capabilities(t *testing.T, s *testSim, key, secret string) map[string]any {
	t.Helper()
	c, _ := s.as(key, secret, map[string]string{"command": "listCapabilities"}).
		inner(t, "listcapabilitiesresponse")["capability"].(map[string]any)
	return c
}

// TestListCapabilitiesShowsTheLimitOnlyWhileOn: apilimitinterval and
// apilimitmax are there, to every caller, only while throttling is enabled.
func TestListCapabilitiesShowsTheLimitOnlyWhileOn(t *testing.T) {
	off := startSim(t, Options{})
	if c := capabilities(t, off, testKey, testSecret); c["apilimitinterval"] != nil || c["apilimitmax"] != nil {
		t.Fatalf("limit fields while off: %v", c)
	}
	s, _, key, secret := throttled(t, Options{APIThrottling: APIThrottling{Interval: ptr(4)}}, 7)
	for _, who := range [][2]string{{testKey, testSecret}, {key, secret}} {
		c := capabilities(t, s, who[0], who[1])
		if num(c["apilimitinterval"]) != 4 || num(c["apilimitmax"]) != 7 {
			t.Fatalf("limit fields while on = %v/%v", c["apilimitinterval"], c["apilimitmax"])
		}
	}
	cs := s.client()
	cp, err := cs.Configuration.ListCapabilities(cs.Configuration.NewListCapabilitiesParams())
	if err != nil || cp.Capabilities.Apilimitinterval != 4 || cp.Capabilities.Apilimitmax != 7 {
		t.Fatalf("cloudstack-go capabilities = %+v, %v", cp, err)
	}
}

// setting is updateConfiguration as the root admin.
func setting(t *testing.T, s *testSim, name, value string) response {
	t.Helper()
	return s.call(map[string]string{"command": "updateConfiguration", "name": name, "value": value})
}

// TestThrottleSettingsTakeEffectAfterARestart: updateConfiguration changes
// what listCapabilities reports at once, while the limit enforced is the one
// read at start until a simulator starts again on the saved state.
func TestThrottleSettingsTakeEffectAfterARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s1, _, key, secret := throttled(t, Options{StatePath: path}, 2)
	setting(t, s1, "api.throttling.enabled", "yes").wantError(t, "updateconfigurationresponse", 431, 4350,
		"Please enter either 'true' or 'false'.")
	if r := setting(t, s1, "api.throttling.max", "5"); r.status != 200 {
		t.Fatal(r.raw)
	}
	if c := capabilities(t, s1, testKey, testSecret); num(c["apilimitmax"]) != 5 {
		t.Fatalf("apilimitmax after updateConfiguration = %v", c["apilimitmax"])
	}
	listZones := map[string]string{"command": "listZones"}
	for i := 0; i < 2; i++ {
		if r := s1.as(key, secret, listZones); r.status != 200 {
			t.Fatal(r.raw)
		}
	}
	wantLimited(t, s1.as(key, secret, listZones), "listzonesresponse", 1000)
	s1.stop()

	s2 := startSim(t, Options{StatePath: path})
	useStepClock(s2)
	for i := 0; i < 5; i++ {
		if r := s2.as(key, secret, listZones); r.status != 200 {
			t.Fatalf("call %d under the limit saved before the restart: %s", i+1, r.raw)
		}
	}
	wantLimited(t, s2.as(key, secret, listZones), "listzonesresponse", 1000)
	// Turning it off shows at once in listCapabilities, not in enforcement.
	if r := setting(t, s2, "api.throttling.enabled", "false"); r.status != 200 {
		t.Fatal(r.raw)
	}
	if c := capabilities(t, s2, testKey, testSecret); c["apilimitmax"] != nil {
		t.Fatalf("limit fields after turning it off: %v", c)
	}
	wantLimited(t, s2.as(key, secret, listZones), "listzonesresponse", 1000)
}

// TestThrottleCacheHoldsCachesizeAccounts: the limit cache holds
// api.throttling.cachesize accounts and evicts the least recently used, whose
// count starts again.
func TestThrottleCacheHoldsCachesizeAccounts(t *testing.T) {
	s, _, key, secret := throttled(t, Options{APIThrottling: APIThrottling{CacheSize: ptr(1)}}, 1)
	other, otherSecret := newAccount(t, s, "other", 0)
	listZones := map[string]string{"command": "listZones"}
	if r := s.as(key, secret, listZones); r.status != 200 {
		t.Fatal(r.raw)
	}
	wantLimited(t, s.as(key, secret, listZones), "listzonesresponse", 1000)
	if r := s.as(other, otherSecret, listZones); r.status != 200 {
		t.Fatalf("the other account: %s", r.raw)
	}
	if r := s.as(key, secret, listZones); r.status != 200 {
		t.Fatalf("the tenant's count survived its eviction: %s", r.raw)
	}
}

// TestThrottleCountsACallAtItsArrival: CloudStack checks the limit on the
// request's own servlet thread as it arrives; a call the simulator's lock
// holds back past its window's end still counts in the window it arrived
// in. Real time here: the step clock would stand in for the arrival.
func TestThrottleCountsACallAtItsArrival(t *testing.T) {
	s := startSim(t, Options{APIThrottling: APIThrottling{Enabled: ptr(true), Max: ptr(1), Interval: ptr(1)}})
	key, secret := newAccount(t, s, "tenant", 0)
	listZones := map[string]string{"command": "listZones"}
	if r := s.as(key, secret, listZones); r.status != 200 {
		t.Fatalf("the window's first call: %s", r.raw)
	}
	s.srv.Mu.Lock()
	held := make(chan response)
	go func() { held <- s.as(key, secret, listZones) }()
	time.Sleep(1200 * time.Millisecond) // past the first call's window
	s.srv.Mu.Unlock()
	if r := <-held; r.status != 429 {
		t.Errorf("a call that arrived within a full window was counted after it: %d %s", r.status, r.raw)
	}
}
