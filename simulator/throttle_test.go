package simulator_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
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
func useStepClock(s *simtesting.Sim) *stepClock {
	c := &stepClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s.Srv.Mu.Lock()
	s.Srv.Throttle.Clock = c.Now
	s.Srv.Mu.Unlock()
	return c
}

func ptr[T any](v T) *T { return &v }

// throttled starts a simulator whose API limit is on with max calls a
// window, and a User-role account "tenant" (the root admin that creates it
// is not counted).
func throttled(t *testing.T, opts simulator.Options, maxCalls int) (s *simtesting.Sim, clock *stepClock, key, secret string) {
	t.Helper()
	opts.APIThrottling.Enabled, opts.APIThrottling.Max = ptr(true), ptr(maxCalls)
	s = simtesting.Start(t, opts)
	clock = useStepClock(s)
	key, secret = simtesting.NewAccount(t, s, "tenant", 0)
	return s, clock, key, secret
}

const limitText = "The given user has reached his/her account api limit, please retry after [%d] ms."

func wantLimited(t *testing.T, r simtesting.Response, name string, retryAfterMS int) {
	t.Helper()
	r.WantError(t, name, 429, 9999, fmt.Sprintf(limitText, retryAfterMS))
}

// TestThrottleCountsCallsInAWindowAndResetsAfterIt: api.throttling.max calls
// of an account pass in a window of api.throttling.interval seconds that
// starts at its first call; the next is 429 naming the milliseconds left;
// refused calls count too; a new window starts after the interval.
func TestThrottleCountsCallsInAWindowAndResetsAfterIt(t *testing.T) {
	s, clock, key, secret := throttled(t, simulator.Options{}, 3)
	listZones := map[string]string{"command": "listZones"}
	for i := 0; i < 3; i++ {
		if r := s.As(key, secret, listZones); r.Status != 200 {
			t.Fatalf("call %d within the limit: %s", i+1, r.Raw)
		}
		clock.advance(100 * time.Millisecond)
	}
	wantLimited(t, s.As(key, secret, listZones), "listzonesresponse", 700)
	clock.advance(699 * time.Millisecond)
	wantLimited(t, s.As(key, secret, listZones), "listzonesresponse", 1)
	// The real client sees the same answer.
	tenant := cloudstack.NewClient(s.API, key, secret, false)
	_, err := tenant.Zone.ListZones(tenant.Zone.NewListZonesParams())
	simtesting.WantAPIError(t, err, 429, "please retry after [1] ms.")
	clock.advance(2 * time.Millisecond) // the window has ended
	for i := 0; i < 3; i++ {
		if r := s.As(key, secret, listZones); r.Status != 200 {
			t.Fatalf("call %d of a new window: %s", i+1, r.Raw)
		}
	}
	wantLimited(t, s.As(key, secret, listZones), "listzonesresponse", 1000)
	// Async commands are counted as they are asked, under their own name.
	wantLimited(t, s.As(key, secret, map[string]string{"command": "deployVirtualMachine", "zoneid": "x"}),
		"deployvirtualmachineresponse", 1000)
}

// TestThrottleCountsEachAccountAndExemptsTheRootAdmin: another account has
// its own count, the root admin none; a command the role refuses is not
// counted (the role checker runs first).
func TestThrottleCountsEachAccountAndExemptsTheRootAdmin(t *testing.T) {
	s, _, key, secret := throttled(t, simulator.Options{}, 2)
	other, otherSecret := simtesting.NewAccount(t, s, "other", 0)
	listZones := map[string]string{"command": "listZones"}
	for i := 0; i < 5; i++ {
		s.As(key, secret, map[string]string{"command": "listHosts"}).
			WantError(t, "errorresponse", 432, 9999, "The API [listHosts] does not exist or is not available for the account tenant.")
	}
	for i := 0; i < 2; i++ {
		if r := s.As(key, secret, listZones); r.Status != 200 {
			t.Fatalf("tenant call %d: %s", i+1, r.Raw)
		}
	}
	wantLimited(t, s.As(key, secret, listZones), "listzonesresponse", 1000)
	if r := s.As(other, otherSecret, listZones); r.Status != 200 {
		t.Fatalf("another account is limited by the tenant's count: %s", r.Raw)
	}
	for i := 0; i < 10; i++ {
		if r := s.Call(listZones); r.Status != 200 {
			t.Fatalf("root admin call %d: %s", i+1, r.Raw)
		}
	}
}

// tenantAPIs is how many APIs listApis lists to a User-role account.
func tenantAPIs(t *testing.T) int {
	t.Helper()
	s := simtesting.Start(t, simulator.Options{})
	key, secret := simtesting.NewAccount(t, s, "tenant", 0)
	r := s.As(key, secret, map[string]string{"command": "listApis"})
	return int(simtesting.Num(r.Inner(t, "listapisresponse")["count"]))
}

// TestThrottleListApisCountsOncePerAllowedAPI: listApis costs its own count
// and one per API the caller's role allows (getApisAllowedToUser); past the
// limit it is refused as a PermissionDeniedException (531, 4545). With a
// name it costs two, and past the limit the name is "not found" (530).
func TestThrottleListApisCountsOncePerAllowedAPI(t *testing.T) {
	n := tenantAPIs(t)
	listApis := map[string]string{"command": "listApis"}

	s, _, key, secret := throttled(t, simulator.Options{}, n+1)
	if r := s.As(key, secret, listApis); r.Status != 200 {
		t.Fatalf("listApis with room for 1+%d counts: %s", n, r.Raw)
	}
	wantLimited(t, s.As(key, secret, map[string]string{"command": "listZones"}), "listzonesresponse", 1000)

	s, _, key, secret = throttled(t, simulator.Options{}, n)
	s.As(key, secret, listApis).WantError(t, "listapisresponse", 531, 4545,
		fmt.Sprintf(limitText, 1000))

	s, _, key, secret = throttled(t, simulator.Options{}, 1)
	s.As(key, secret, map[string]string{"command": "listApis", "name": "listZones"}).WantError(t, "listapisresponse",
		530, 9999, "Api Discovery plugin was unable to find an api by that name or process any apis")
	s, _, key, secret = throttled(t, simulator.Options{}, 2)
	if r := s.As(key, secret, map[string]string{"command": "listApis", "name": "listZones"}); r.Status != 200 {
		t.Fatalf("listApis name=listZones with room for 2 counts: %s", r.Raw)
	}
	// The root admin's listApis lists every API and counts nothing.
	for i := 0; i < 3; i++ {
		if r := s.Call(listApis); r.Status != 200 {
			t.Fatalf("root admin listApis: %s", r.Raw)
		}
	}
}

// capabilities is listCapabilities' answer to the caller whose keys are given.
func capabilities(t *testing.T, s *simtesting.Sim, key, secret string) map[string]any {
	t.Helper()
	c, _ := s.As(key, secret, map[string]string{"command": "listCapabilities"}).
		Inner(t, "listcapabilitiesresponse")["capability"].(map[string]any)
	return c
}

// TestListCapabilitiesShowsTheLimitOnlyWhileOn: apilimitinterval and
// apilimitmax are there, to every caller, only while throttling is enabled.
func TestListCapabilitiesShowsTheLimitOnlyWhileOn(t *testing.T) {
	off := simtesting.Start(t, simulator.Options{})
	if c := capabilities(t, off, simtesting.Key, simtesting.Secret); c["apilimitinterval"] != nil || c["apilimitmax"] != nil {
		t.Fatalf("limit fields while off: %v", c)
	}
	s, _, key, secret := throttled(t, simulator.Options{APIThrottling: simulator.APIThrottling{Interval: ptr(4)}}, 7)
	for _, who := range [][2]string{{simtesting.Key, simtesting.Secret}, {key, secret}} {
		c := capabilities(t, s, who[0], who[1])
		if simtesting.Num(c["apilimitinterval"]) != 4 || simtesting.Num(c["apilimitmax"]) != 7 {
			t.Fatalf("limit fields while on = %v/%v", c["apilimitinterval"], c["apilimitmax"])
		}
	}
	cs := s.Client()
	cp, err := cs.Configuration.ListCapabilities(cs.Configuration.NewListCapabilitiesParams())
	if err != nil || cp.Capabilities.Apilimitinterval != 4 || cp.Capabilities.Apilimitmax != 7 {
		t.Fatalf("cloudstack-go capabilities = %+v, %v", cp, err)
	}
}

// setting is updateConfiguration as the root admin.
func setting(t *testing.T, s *simtesting.Sim, name, value string) simtesting.Response {
	t.Helper()
	return s.Call(map[string]string{"command": "updateConfiguration", "name": name, "value": value})
}

// TestThrottleSettingsTakeEffectAfterARestart: updateConfiguration changes
// what listCapabilities reports at once, while the limit enforced is the one
// read at start until a simulator starts again on the saved state.
func TestThrottleSettingsTakeEffectAfterARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s1, _, key, secret := throttled(t, simulator.Options{StatePath: path}, 2)
	setting(t, s1, "api.throttling.enabled", "yes").WantError(t, "updateconfigurationresponse", 431, 4350,
		"Please enter either 'true' or 'false'.")
	if r := setting(t, s1, "api.throttling.max", "5"); r.Status != 200 {
		t.Fatal(r.Raw)
	}
	if c := capabilities(t, s1, simtesting.Key, simtesting.Secret); simtesting.Num(c["apilimitmax"]) != 5 {
		t.Fatalf("apilimitmax after updateConfiguration = %v", c["apilimitmax"])
	}
	listZones := map[string]string{"command": "listZones"}
	for i := 0; i < 2; i++ {
		if r := s1.As(key, secret, listZones); r.Status != 200 {
			t.Fatal(r.Raw)
		}
	}
	wantLimited(t, s1.As(key, secret, listZones), "listzonesresponse", 1000)
	s1.Stop()

	s2 := simtesting.Start(t, simulator.Options{StatePath: path})
	useStepClock(s2)
	for i := 0; i < 5; i++ {
		if r := s2.As(key, secret, listZones); r.Status != 200 {
			t.Fatalf("call %d under the limit saved before the restart: %s", i+1, r.Raw)
		}
	}
	wantLimited(t, s2.As(key, secret, listZones), "listzonesresponse", 1000)
	// Turning it off shows at once in listCapabilities, not in enforcement.
	if r := setting(t, s2, "api.throttling.enabled", "false"); r.Status != 200 {
		t.Fatal(r.Raw)
	}
	if c := capabilities(t, s2, simtesting.Key, simtesting.Secret); c["apilimitmax"] != nil {
		t.Fatalf("limit fields after turning it off: %v", c)
	}
	wantLimited(t, s2.As(key, secret, listZones), "listzonesresponse", 1000)
}

// TestThrottleCacheHoldsCachesizeAccounts: the limit cache holds
// api.throttling.cachesize accounts and evicts the least recently used, whose
// count starts again.
func TestThrottleCacheHoldsCachesizeAccounts(t *testing.T) {
	s, _, key, secret := throttled(t, simulator.Options{APIThrottling: simulator.APIThrottling{CacheSize: ptr(1)}}, 1)
	other, otherSecret := simtesting.NewAccount(t, s, "other", 0)
	listZones := map[string]string{"command": "listZones"}
	if r := s.As(key, secret, listZones); r.Status != 200 {
		t.Fatal(r.Raw)
	}
	wantLimited(t, s.As(key, secret, listZones), "listzonesresponse", 1000)
	if r := s.As(other, otherSecret, listZones); r.Status != 200 {
		t.Fatalf("the other account: %s", r.Raw)
	}
	if r := s.As(key, secret, listZones); r.Status != 200 {
		t.Fatalf("the tenant's count survived its eviction: %s", r.Raw)
	}
}

// TestThrottleCountsACallAtItsArrival: CloudStack checks the limit on the
// request's own servlet thread as it arrives; a call the simulator's lock
// holds back past its window's end still counts in the window it arrived
// in. Real time here: the step clock would stand in for the arrival.
func TestThrottleCountsACallAtItsArrival(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{APIThrottling: simulator.APIThrottling{Enabled: ptr(true), Max: ptr(1), Interval: ptr(1)}})
	key, secret := simtesting.NewAccount(t, s, "tenant", 0)
	listZones := map[string]string{"command": "listZones"}
	if r := s.As(key, secret, listZones); r.Status != 200 {
		t.Fatalf("the window's first call: %s", r.Raw)
	}
	s.Srv.Mu.Lock()
	held := make(chan simtesting.Response)
	go func() { held <- s.As(key, secret, listZones) }()
	time.Sleep(1200 * time.Millisecond) // past the first call's window
	s.Srv.Mu.Unlock()
	if r := <-held; r.Status != 429 {
		t.Errorf("a call that arrived within a full window was counted after it: %d %s", r.Status, r.Raw)
	}
}
