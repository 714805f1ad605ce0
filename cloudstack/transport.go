package cloudstack

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

// retryTransport retries what CloudStack never saw or refused for load:
// connection failures and 5xx answers without a CloudStack error body (a
// proxy or a restarting management server), up to retries times. A
// CloudStack error body is an answer, never retried; neither are
// 401/431/432. The API throttle's refusals (throttle.go) are waited out
// apart from that budget, for as long as bound (request_timeout) allows.
type retryTransport struct {
	next    http.RoundTripper
	retries int
	bound   time.Duration
	logger  boshlog.Logger
	clock   Clock
	jitter  func(span time.Duration) time.Duration
	waited  atomic.Int64 // ns asleep on the throttle's (or the bucket's) behalf, every call's
	// bucket spaces this host's requests with one API key (bucket.go);
	// nil: none.
	bucket *bucket
	// polls holds when each job's latest poll was sent (job ID →
	// time.Time): a job a poll finds done ended before the poll was sent,
	// however long it then waited for the bucket, the throttle or the
	// answer (jobtimes.go learns from it).
	polls sync.Map
}

const (
	firstBackoff = 250 * time.Millisecond
	maxBackoff   = 4 * time.Second
)

// call is one request's way through the transport.
type call struct {
	req       *http.Request
	command   string
	readOnly  bool
	start     time.Time
	transient int // transient failures retried so far
	backoff   time.Duration
	throttle  throttleState
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := &call{req: req, command: commandOf(req), start: t.clock.Now(), backoff: firstBackoff}
	c.readOnly = isReadOnly(c.command)
	if !c.readOnly && req.Method == http.MethodGet {
		c.req = asPostForm(req)
	}
	for attempt := 1; ; attempt++ {
		r, err := rewind(c.req)
		if err != nil {
			return nil, err
		}
		if t.bucket != nil {
			waited, err := t.bucket.take(c.req.Context(), c.command)
			if err != nil {
				return nil, err
			}
			t.waited.Add(int64(waited))
		}
		sent := t.clock.Now()
		if c.command == "queryAsyncJobResult" {
			t.polls.Store(formValue(c.req, "jobid"), time.Now())
		}
		resp, err := t.next.RoundTrip(r)
		took := t.clock.Now().Sub(sent)
		t.logAttempt(c.command, resp, err, took, attempt)
		if hint, ok := throttled(resp); ok {
			drain(resp)
			if err := t.awaitThrottle(c, hint, took); err != nil {
				return nil, err
			}
			continue
		}
		t.logAdmitted(c)
		again, err := t.retryTransient(c, resp, err, attempt)
		if !again {
			return resp, err
		}
	}
}

// retryTransient decides on an answer that is not the throttle's: false
// with what to return, or true after the backoff.
func (t *retryTransport) retryTransient(c *call, resp *http.Response, err error, attempt int) (bool, error) {
	retry, reason := t.shouldRetry(resp, err, c.readOnly)
	if !retry || c.transient >= t.retries {
		return false, annotate(err, attempt)
	}
	c.transient++
	if resp != nil {
		drain(resp)
	}
	t.logger.Warn(logTag, "%s: %s; retrying in %s (retry %d of %d)", c.command, reason, c.backoff, c.transient, t.retries)
	if !t.clock.Sleep(c.req.Context(), c.backoff) {
		// The request timeout ran out while waiting: the last failure
		// says more than "deadline exceeded".
		if err == nil {
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return false, annotate(err, attempt)
	}
	c.backoff = min(c.backoff*2, maxBackoff)
	return true, nil
}

// awaitThrottle waits out a refusal of the throttle, or says why not: the
// wait and another attempt (as long as the refused one took) no longer fit
// in the call's bound, or the command may wait no more (maxThrottleWaits).
// Giving up before the bound keeps the error typed: http.Client replaces
// an error returned after its own deadline by a bare "timeout" text.
func (t *retryTransport) awaitThrottle(c *call, hint, took time.Duration) error {
	c.throttle.refusals++
	wait := t.throttleWait(&c.throttle, hint)
	elapsed := t.clock.Now().Sub(c.start)
	left := t.bound - elapsed
	if deadline, ok := c.req.Context().Deadline(); ok {
		left = min(left, time.Until(deadline))
	}
	if c.throttle.refusals > maxThrottleWaits(c.command) || wait+took >= left {
		return &ThrottledError{Command: c.command, Elapsed: elapsed, Waited: c.throttle.waited, Refusals: c.throttle.refusals}
	}
	asked := "names no delay"
	if hint > 0 {
		asked = "asks to retry after " + hint.String()
	}
	t.logger.Warn(logTag, "%s: refused by CloudStack's API throttle (refusal %d; it %s); waiting %s",
		c.command, c.throttle.refusals, asked, wait.Round(time.Millisecond))
	if !t.clock.Sleep(c.req.Context(), wait) {
		return &ThrottledError{Command: c.command, Elapsed: t.clock.Now().Sub(c.start), Waited: c.throttle.waited,
			Refusals: c.throttle.refusals}
	}
	c.throttle.waited += wait
	t.waited.Add(int64(wait))
	return nil
}

// logAdmitted says, once, how long a call the throttle refused waited in
// all before CloudStack took it.
func (t *retryTransport) logAdmitted(c *call) {
	if c.throttle.refusals == 0 || c.throttle.reported {
		return
	}
	c.throttle.reported = true
	t.logger.Warn(logTag, "%s: taken by CloudStack after %d refusals of its API throttle; waited %s in all",
		c.command, c.throttle.refusals, c.throttle.waited.Round(time.Millisecond))
}

func annotate(err error, attempts int) error {
	if err == nil || attempts == 1 {
		return err
	}
	return fmt.Errorf("%w (after %d attempts)", err, attempts)
}

func (t *retryTransport) shouldRetry(resp *http.Response, err error, readOnly bool) (bool, string) {
	if err != nil {
		if isTLSError(err) {
			return false, ""
		}
		// A refused or failed dial never reached CloudStack, so even a
		// mutating command is safe to send again.
		if isDialError(err) || readOnly {
			return true, "connection failed: " + err.Error()
		}
		return false, ""
	}
	if resp.StatusCode >= 500 && !hasCloudStackBody(resp) &&
		(readOnly || resp.StatusCode == http.StatusServiceUnavailable) {
		return true, fmt.Sprintf("HTTP %d without a CloudStack error body", resp.StatusCode)
	}
	return false, ""
}

func (t *retryTransport) logAttempt(command string, resp *http.Response, err error, d time.Duration, attempt int) {
	status := "error"
	if err == nil {
		status = fmt.Sprint(resp.StatusCode)
	}
	t.logger.Debug(logTag, "%s -> %s in %s (attempt %d)", command, status, d.Round(time.Millisecond), attempt)
}

// hasCloudStackBody peeks at a 5xx body and puts it back for cloudstack-go.
func hasCloudStackBody(resp *http.Response) bool {
	return isCloudStackBody(peekBody(resp))
}

// commandOf reads the CloudStack command from the query or the form body.
func commandOf(req *http.Request) string {
	if c := formValue(req, "command"); c != "" {
		return c
	}
	return "unknown"
}

// formValue reads a parameter from the query or the form body.
func formValue(req *http.Request, name string) string {
	if v := req.URL.Query().Get(name); v != "" {
		return v
	}
	if req.GetBody == nil {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	data, _ := io.ReadAll(io.LimitReader(body, 4<<20))
	form, _ := url.ParseQuery(string(data))
	return form.Get(name)
}

// isReadOnly: only lists and job queries are safe to send twice;
// getUploadParamsForTemplate, for one, creates a template.
func isReadOnly(command string) bool {
	c := strings.ToLower(command)
	return strings.HasPrefix(c, "list") || c == "queryasyncjobresult"
}

// asPostForm moves a GET's query into a POST form body. net/http's
// Transport silently sends a GET again on a fresh connection when a reused
// one dies after the request was written (Transport.roundTrip's retry of
// replayable requests), beneath our rule; it never does that with a POST
// whose body was written. cloudstack-go sends getUploadParamsForTemplate,
// which creates a template, by GET. CloudStack takes every command by POST
// as well: ApiServlet.processRequestInContext, behind doGet and doPost
// alike, reads req.getParameterMap() (the query and a form body) and
// ApiServer.verifyRequest signs over those parameters, not the method, so
// the signed query goes unchanged into the body.
func asPostForm(req *http.Request) *http.Request {
	form := req.URL.RawQuery
	r := req.Clone(req.Context())
	r.Method = http.MethodPost
	u := *req.URL
	u.RawQuery = ""
	r.URL = &u
	// The query's escapes are of UTF-8 bytes; ApiServlet.utf8Fixup decodes
	// only a query string as UTF-8, so the body says its charset.
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
	r.ContentLength = int64(len(form))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(form)), nil }
	r.Body, _ = r.GetBody()
	return r
}

func rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.GetBody == nil {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = body
	return r, nil
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}
