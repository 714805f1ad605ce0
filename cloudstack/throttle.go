package cloudstack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CloudStack's API throttle (the rate-limit plugin, api.throttling.*)
// answers a request over the account's limit before the command runs:
// ApiServlet.processRequestInContext calls ApiServer.verifyRequest before
// ApiServer.handleRequest, and verifyRequest's commandAvailable →
// checkCommandAvailable asks every APIChecker, among them
// ApiRateLimitServiceImpl.checkAccess, whose RequestLimitException
// commandAvailable turns into ServerApiException(API_LIMIT_EXCEED): HTTP
// 429, errorcode 429, cserrorcode 9999. Nothing was queued or dispatched, so
// even a command that creates something (deployVirtualMachine) is safe to
// send again after a 429. The one command the throttle refuses from inside
// is listApis (ApiDiscoveryServiceImpl.listApis → getApisAllowedToUser,
// which counts once per API the role allows): it only reads.

// throttleText is the text ApiRateLimitServiceImpl.throwExceptionDueToApiRateLimitReached
// puts in the refusal; N is the ms until the account's window ends.
var throttleText = regexp.MustCompile(`reached his/her account api limit, please retry after \[(\d+)\] ms`)

const (
	// throttleFirstWait is the wait when the answer names no delay: one
	// api.throttling.interval at its default (1 s), doubling to throttleMaxWait.
	throttleFirstWait = time.Second
	throttleMaxWait   = 8 * time.Second
	// jitterSpan is the spread added to each wait, widening with each
	// refusal of the same call up to jitterMaxSpan: processes refused in one
	// window are told the same delay, and retrying all at its end would
	// only refuse most of them again.
	jitterSpan    = time.Second
	jitterMaxSpan = 8 * time.Second
)

// Clock is the transport's time: Now, and Sleep, which returns false when
// ctx ends first. Tests pass a fake one and assert on the waits asked of it.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// randomJitter is a uniform draw in [0, span).
func randomJitter(span time.Duration) time.Duration {
	if span <= 0 {
		return 0
	}
	return rand.N(span)
}

// Option changes how a Client waits; the defaults are the wall clock and
// random jitter.
type Option func(*retryTransport)

// WithClock makes the client read the time and sleep through clock.
func WithClock(clock Clock) Option { return func(t *retryTransport) { t.clock = clock } }

// WithJitter makes the client draw the spread added to a throttled call's
// wait from jitter, given the span it may draw from.
func WithJitter(jitter func(span time.Duration) time.Duration) Option {
	return func(t *retryTransport) { t.jitter = jitter }
}

// ThrottledError means CloudStack's API throttle refused a call until its
// bound (cloudstack.request_timeout) was spent.
type ThrottledError struct {
	Command  string
	Elapsed  time.Duration // since the call began
	Waited   time.Duration // of it, asleep on the throttle's behalf
	Refusals int
	// Slot is set when this host's rate bucket (bucket.go), not
	// CloudStack, held the call: its slot was this far off, past the bound.
	Slot time.Duration
}

// ThrottledText begins the text of every ThrottledError of CloudStack's
// refusals.
const ThrottledText = "CloudStack's API throttle (api.throttling.max) refused"

func (e *ThrottledError) Error() string {
	if e.Slot > 0 {
		return fmt.Sprintf("this host's API rate bucket had no slot for %s within cloudstack.request_timeout (the "+
			"next was %s away): more CPI calls at once than its rate serves (cloudstack.api_rate_limit, or 90 %% of "+
			"CloudStack's api.throttling.max): run fewer CPI calls at once (director.max_threads), or raise "+
			"cloudstack.request_timeout", e.Command, e.Slot.Round(time.Millisecond))
	}
	return fmt.Sprintf(ThrottledText+" %s for %s (%d refusals, %s of waiting); "+
		"the account's limit is shared by every client of it (other CPI processes, directors, scripts, the UI): "+
		"run fewer CPI calls at once (director.max_threads), raise cloudstack.request_timeout, or ask the "+
		"cloud's operator to raise api.throttling.max", e.Command, e.Elapsed.Round(time.Millisecond), e.Refusals,
		e.Waited.Round(time.Millisecond))
}

// IsThrottled says CloudStack's API throttle refused the call past its bound.
func IsThrottled(err error) bool {
	var throttled *ThrottledError
	return errors.As(err, &throttled)
}

// throttleState is one call's record of the throttle's refusals.
type throttleState struct {
	refusals int
	waited   time.Duration
	reported bool // the admission is logged
}

// throttled reads a response as the throttle's refusal and the delay it
// names (0 when none). The body is put back for cloudstack-go.
func throttled(resp *http.Response) (hint time.Duration, ok bool) {
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500) {
		return 0, false
	}
	body := peekBody(resp)
	m := throttleText.FindSubmatch(body)
	if resp.StatusCode != http.StatusTooManyRequests && m == nil {
		return 0, false
	}
	if m != nil {
		if ms, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil && ms >= 0 {
			// "[0] ms" (the window just ended) is a hint still: 0 is "none".
			return time.Duration(max(ms, 1)) * time.Millisecond, true
		}
	}
	return 0, true
}

// throttleWait is how long to wait after the state's latest refusal:
// CloudStack's hint (or a doubling backoff without one) plus jitter.
func (t *retryTransport) throttleWait(s *throttleState, hint time.Duration) time.Duration {
	span := min(jitterSpan<<min(s.refusals-1, 4), jitterMaxSpan)
	if hint == 0 {
		hint = min(throttleFirstWait<<min(s.refusals-1, 4), throttleMaxWait)
	}
	return hint + t.jitter(span)
}

// maxThrottleWaits bounds the waits of a command besides its time bound:
// listApis counts once per API the role allows (getApisAllowedToUser), so
// each try can spend the account's whole window, and a role allowing more
// APIs than api.throttling.max is refused every time. It waits once.
func maxThrottleWaits(command string) int {
	if strings.EqualFold(command, "listApis") {
		return 1
	}
	return int(^uint(0) >> 1)
}

func peekBody(resp *http.Response) []byte {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return body
}

// isCloudStackBody says body is CloudStack's error envelope.
func isCloudStackBody(body []byte) bool {
	var envelope map[string]struct {
		ErrorCode *int `json:"errorcode"`
	}
	if json.Unmarshal(body, &envelope) != nil {
		return false
	}
	for _, v := range envelope {
		if v.ErrorCode != nil {
			return true
		}
	}
	return false
}
