package kernel

import (
	"fmt"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// Throttle is the api rate-limit plugin, ApiRateLimitServiceImpl
// (plugins/api/rate-limit/…/ratelimit/ApiRateLimitServiceImpl.java), with its
// EhcacheLimitStore of StoreEntryImpl counters, one per account. It is
// configured once, when the simulator starts, as configure() reads the
// api.throttling.* settings only while its store is null: updateConfiguration
// changes what listCapabilities reports at once and what is enforced only
// after a restart. Guarded by the engine's Mu.
type Throttle struct {
	enabled   bool
	interval  int // seconds: the window's timeToLive
	max       int // maxAllowed
	cacheSize int // the cache's maxElements; 0 holds any number
	entries   map[string]*throttleEntry
	tick      int64 // orders uses, for evicting the least recently used entry

	// Clock replaces the management server's clock, for tests that step
	// through a window (a test instrument, no Java behind it).
	Clock func() time.Time
}

// throttleEntry is StoreEntryImpl: a counter and when its window ends.
type throttleEntry struct {
	expiry  time.Time
	counter int
	used    int64
}

// NewThrottle is ApiRateLimitServiceImpl.configure over the settings in the
// state: api.throttling.enabled, .interval, .max and .cachesize as stored
// (each setting's own default when never set). A negative interval is
// refused: Ehcache cannot make a cache with it, so CloudStack would not
// start either.
func NewThrottle(st *model.State) (*Throttle, error) {
	t := &Throttle{enabled: strings.EqualFold(st.Setting(model.SettingAPILimitEnabled), "true"),
		interval: st.SettingInt(model.SettingAPILimitInterval), max: st.SettingInt(model.SettingAPILimitMax),
		cacheSize: st.SettingInt(model.SettingAPILimitCache), entries: map[string]*throttleEntry{}}
	if t.interval < 0 {
		return nil, fmt.Errorf("%s is %d: the API limit cache cannot be created with a negative time to live",
			model.SettingAPILimitInterval, t.interval)
	}
	return t, nil
}

// now is when a request is counted: its arrival (at), or the test's
// clock.
func (t *Throttle) now(at time.Time) time.Time {
	if t.Clock != nil {
		return t.Clock()
	}
	return at
}

// checkAccess is ApiRateLimitServiceImpl.checkAccess(User, String) and
// checkAccess(Account, String): nothing when disabled, root admins exempt
// (AccountService.isRootAdmin: the account's role is the Admin type),
// otherwise the call counts, at its arrival at, and past the limit the
// account is refused.
// ApiServer.commandAvailable answers the RequestLimitException as
// ServerApiException(API_LIMIT_EXCEED): 429 with cserrorcode 9999, under
// the command's response name (getSerializedApiError).
func (t *Throttle) checkAccess(a *model.Account, at time.Time) *APIError {
	if t == nil || !t.enabled || a == nil || a.Role() == model.RoleAdmin {
		return nil
	}
	if now := t.now(at); t.exceeded(a.ID, now) {
		return &APIError{Code: codeLimitExceeded, CSCode: CsServerAPIException, Text: t.limitText(a.ID, now)}
	}
	return nil
}

// apisAllowedToUser is ApiRateLimitServiceImpl.getApisAllowedToUser, which
// ApiDiscoveryServiceImpl.listApis asks for a caller that is not the root
// admin: one count per API the role checker let through, stopping at the
// first past the limit. Its RequestLimitException leaves listApis as a
// PermissionDeniedException, which ApiServer.handleRequest answers as
// ACCOUNT_ERROR (531) keeping the exception's cserrorcode (4545,
// CSExceptionErrorCode).
func (t *Throttle) apisAllowedToUser(a *model.Account, apis int, at time.Time) *APIError {
	if t == nil || !t.enabled || a == nil {
		return nil
	}
	now := t.now(at)
	for range apis {
		if t.exceeded(a.ID, now) {
			return &APIError{Code: CodeAccountError, CSCode: csRequestLimit, Text: t.limitText(a.ID, now)}
		}
	}
	return nil
}

// exceeded is hasApiRateLimitBeenExceeded: the account's entry (a new one
// when there is none or it expired), incremented; past maxAllowed is over
// the limit. The counter keeps counting refused calls.
func (t *Throttle) exceeded(accountID string, now time.Time) bool {
	e := t.get(accountID, now)
	if e == nil {
		e = t.create(accountID, now)
	}
	e.counter++
	return e.counter > t.max
}

// limitText is throwExceptionDueToApiRateLimitReached's message: the entry's
// getExpireDuration, the milliseconds left in its window (0 once past).
func (t *Throttle) limitText(accountID string, now time.Time) string {
	var left int64
	if e := t.entries[accountID]; e != nil {
		if !now.After(e.expiry) {
			left = e.expiry.Sub(now).Milliseconds()
		}
	}
	return fmt.Sprintf("The given user has reached his/her account api limit, please retry after [%d] ms.", left)
}

// get is EhcacheLimitStore.get: an entry past its time to live is gone
// (Ehcache expires an element whose timeToLive has passed; a timeToLive of
// 0 never expires it).
func (t *Throttle) get(accountID string, now time.Time) *throttleEntry {
	e := t.entries[accountID]
	if e == nil {
		return nil
	}
	if t.interval > 0 && now.After(e.expiry) {
		delete(t.entries, accountID)
		return nil
	}
	t.tick++
	e.used = t.tick
	return e
}

// create is EhcacheLimitStore.create: a StoreEntryImpl whose window ends
// interval seconds from now, put in a cache of at most cachesize elements
// that evicts the least recently used (Ehcache's default policy; 0 is no
// limit).
func (t *Throttle) create(accountID string, now time.Time) *throttleEntry {
	if t.cacheSize > 0 && len(t.entries) >= t.cacheSize {
		t.evict(now)
	}
	t.tick++
	e := &throttleEntry{expiry: now.Add(time.Duration(t.interval) * time.Second), used: t.tick}
	t.entries[accountID] = e
	return e
}

// evict drops expired entries, then the least recently used while the
// cache is still full.
func (t *Throttle) evict(now time.Time) {
	for id, e := range t.entries {
		if t.interval > 0 && now.After(e.expiry) {
			delete(t.entries, id)
		}
	}
	for len(t.entries) >= t.cacheSize {
		oldest := ""
		for id, e := range t.entries {
			if oldest == "" || e.used < t.entries[oldest].used {
				oldest = id
			}
		}
		delete(t.entries, oldest)
	}
}
