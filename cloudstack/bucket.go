package cloudstack

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

// The host's CPI processes share one token bucket per (endpoint, API key)
// in the state file, so that together they stay under the account's API
// limit instead of each finding it by a 429: a process reserves the next
// free slot under the file's lock and sleeps until it outside the lock.
// The 429 wait (throttle.go) stays the guard against the account's other
// clients (directors on other hosts, scripts, the UI).
//
// The bucket holds one token: slots are 1/rate apart. CloudStack counts
// calls in a fixed window of apilimitinterval seconds from an account's
// first call (ApiRateLimitServiceImpl.hasApiRateLimitBeenExceeded), so
// any interval-long stretch of slots at 90 % of the limit holds at most
// 0.9 × apilimitmax + 1 calls, under the limit; a burst allowance would
// let two bursts meet in one window.

const (
	// limitShare is the part of CloudStack's limit the bucket takes: the
	// rest is left to the account's other clients.
	limitShare = 0.9
	// rateTTL is how long a rate read from listCapabilities is kept: the
	// limit changes only when an operator changes it and restarts the
	// management server, and asking on every call would spend the budget.
	rateTTL = 10 * time.Minute
	// probeClaim is how long other processes leave the asking to the one
	// that claimed it, using the previous rate meanwhile.
	probeClaim = 30 * time.Second
	// unknownRate is the rate while no answer was ever kept (the first
	// processes on a host, while one of them asks): 90 % of
	// api.throttling.max's default, 25 calls per 1 s (Config.ApiLimitMax,
	// ApiLimitInterval), so that a burst of processes starting together
	// does not meet the throttle before the answer is in.
	unknownRate = limitShare * 25
)

// bucketState is one bucket in the state file. Times are Unix nanoseconds
// of the wall clock, the only clock processes share; sleeps run on each
// process's monotonic clock.
type bucketState struct {
	Next    int64   `json:"next,omitempty"`    // the next free slot
	Rate    float64 `json:"rate,omitempty"`    // from listCapabilities; 0: no throttle or exempt
	Checked int64   `json:"checked,omitempty"` // when Rate was asked
	Probing int64   `json:"probing,omitempty"` // when a process claimed the asking
}

// limitProbe asks CloudStack the rate for the bucket (0 for none) and says
// why, for the log; it must not go through the bucket.
type limitProbe func() (rate float64, why string, err error)

// bucket is one process's use of one shared bucket.
type bucket struct {
	state  *stateFile
	key    string
	fixed  *float64 // cloudstack.api_rate_limit
	probe  limitProbe
	clock  Clock
	logger boshlog.Logger
	asked  atomic.Bool // this process asked CloudStack already
	// none: the bucket's rate is 0 (no throttle, a root admin): this
	// process's later requests leave the state file alone.
	none atomic.Bool
	// alone paces this process by itself when the state file fails it
	// (its lock held past lockWait, the file unwritable): from the end of
	// the queue it last saw, at the last rate it knew, rather than unpaced.
	mu    sync.Mutex
	alone bucketState
	known float64 // the last rate seen; 0 while none was
}

// take waits for the caller's slot and says how long; an error only when
// ctx ends first or the slot would come past it.
func (b *bucket) take(ctx context.Context, command string) (time.Duration, error) {
	if b.none.Load() {
		return 0, nil
	}
	now := b.clock.Now()
	limit := time.Duration(math.MaxInt64)
	if deadline, ok := ctx.Deadline(); ok {
		limit = time.Until(deadline)
	}
	wait, reserved, mustAsk := time.Duration(0), false, false
	if !b.state.update(func(st *sharedState) {
		e := bucketOf(st, b.key)
		rate, ask := b.rate(e, now)
		if ask {
			e.Probing, mustAsk = now.UnixNano(), true
			return
		}
		wait, reserved = reserve(e, now, rate, limit)
		b.saw(e, rate)
	}) {
		wait, reserved = b.byItself(now, limit)
	} else if mustAsk {
		wait, reserved = b.ask(limit)
	}
	// A slot past the request's bound fails now, typed as the throttle's
	// refusal (a job's polls go on within job_timeout), and is left to
	// others: http.Client would replace an error returned after its
	// deadline by a bare "timeout".
	if !reserved {
		return 0, &ThrottledError{Command: command, Slot: wait}
	}
	if wait <= 0 {
		return 0, nil
	}
	b.logger.Debug(logTag, "%s: waiting %s for this host's API rate bucket", command, wait.Round(time.Millisecond))
	if !b.clock.Sleep(ctx, wait) {
		return 0, &ThrottledError{Command: command, Slot: wait}
	}
	return wait, nil
}

// saw keeps what the shared bucket said for pacing alone later, and notes
// a rate of 0 as no bucket.
func (b *bucket) saw(e *bucketState, rate float64) {
	if rate <= 0 {
		b.none.Store(true)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.known, b.alone.Next = rate, e.Next
}

// byItself reserves a slot of this process's own bucket: at the last rate
// it knew, else the configured one, else CloudStack's default's share.
func (b *bucket) byItself(now time.Time, limit time.Duration) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rate := b.known
	switch {
	case rate > 0:
	case b.fixed != nil:
		rate = *b.fixed
	default:
		rate = unknownRate
	}
	return reserve(&b.alone, now, rate, limit)
}

// rate is the bucket's rate (0: none) or, with ask, that this process is
// to ask CloudStack for it.
func (b *bucket) rate(e *bucketState, now time.Time) (rate float64, ask bool) {
	if b.fixed != nil {
		return *b.fixed, false
	}
	if age := now.Sub(time.Unix(0, e.Checked)); e.Checked != 0 && age >= 0 && age < rateTTL {
		return e.Rate, false
	}
	// A claim from the future is a wall clock stepped back: void.
	claim := now.Sub(time.Unix(0, e.Probing))
	if b.asked.Load() || (e.Probing != 0 && claim >= 0 && claim < probeClaim) {
		if e.Checked == 0 {
			return unknownRate, false
		}
		return e.Rate, false
	}
	return 0, true
}

// ask asks CloudStack for the rate, keeps it in the state and reserves
// this call's slot at it, within limit.
func (b *bucket) ask(limit time.Duration) (wait time.Duration, reserved bool) {
	b.asked.Store(true)
	rate, why, err := b.probe()
	if err != nil {
		b.logger.Warn(logTag, "asking CloudStack for its API limit failed (%s): the previous rate (22.5/s if "+
			"none) stays for now; cloudstack.api_rate_limit sets it", err)
	} else {
		b.logger.Info(logTag, "API rate bucket of this host's CPI processes (%s): %s", b.state.path(), why)
	}
	if !b.state.update(func(st *sharedState) {
		e := bucketOf(st, b.key)
		now := b.clock.Now()
		if err == nil {
			e.Rate, e.Checked, e.Probing = rate, now.UnixNano(), 0
		}
		r := e.Rate
		if e.Checked == 0 {
			r = unknownRate
		}
		wait, reserved = reserve(e, now, r, limit)
		b.saw(e, r)
	}) {
		if err == nil {
			b.mu.Lock()
			b.known = rate
			b.mu.Unlock()
		}
		if err == nil && rate <= 0 {
			b.none.Store(true)
			return 0, true
		}
		return b.byItself(b.clock.Now(), limit)
	}
	return wait, reserved
}

// reserve takes the next free slot at rate and says how long until it; a
// slot limit or more away is left free for others (reserved false).
func reserve(e *bucketState, now time.Time, rate float64, limit time.Duration) (wait time.Duration, reserved bool) {
	if rate <= 0 {
		return 0, true
	}
	interval := time.Duration(float64(time.Second) / rate)
	next := time.Unix(0, e.Next)
	// A slot further ahead than any queue of CPI processes could make is
	// the wall clock stepped back (or a broken file): start again now
	// rather than sleep through the step.
	if e.Next == 0 || next.Sub(now) > max(1024*interval, 10*time.Second) {
		next = now
	}
	slot := next
	if slot.Before(now) {
		slot = now
	}
	if wait = slot.Sub(now); wait >= limit {
		return wait, false
	}
	e.Next = slot.Add(interval).UnixNano()
	return wait, true
}
func bucketOf(st *sharedState, key string) *bucketState {
	if st.Buckets == nil {
		st.Buckets = map[string]*bucketState{}
	}
	e := st.Buckets[key]
	if e == nil {
		e = &bucketState{}
		st.Buckets[key] = e
	}
	return e
}
