package cloudstack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

// retryTransport retries what CloudStack never saw or refused for load:
// connection failures, 429, and 5xx answers without a CloudStack error body
// (a proxy or a restarting management server). A CloudStack error body is an
// answer, never retried; neither are 401/431/432.
type retryTransport struct {
	next    http.RoundTripper
	retries int
	logger  boshlog.Logger
}

const (
	firstBackoff = 250 * time.Millisecond
	maxBackoff   = 4 * time.Second
)

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	command := commandOf(req)
	readOnly := isReadOnly(command)
	if !readOnly && req.Method == http.MethodGet {
		req = asPostForm(req)
	}
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		r, err := rewind(req)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		resp, err := t.next.RoundTrip(r)
		t.logAttempt(command, resp, err, time.Since(start), attempt)
		retry, reason := t.shouldRetry(resp, err, readOnly)
		if !retry || attempt > t.retries {
			return resp, annotate(err, attempt)
		}
		if resp != nil {
			drain(resp)
		}
		t.logger.Warn(logTag, "%s: %s; retrying in %s (retry %d of %d)", command, reason, backoff, attempt, t.retries)
		if !sleepCtx(req, backoff) {
			// The request timeout ran out while waiting: the last failure
			// says more than "deadline exceeded".
			if err == nil {
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
			return nil, annotate(err, attempt)
		}
		backoff = min(backoff*2, maxBackoff)
	}
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
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return true, "API request limit reached (429)"
	case resp.StatusCode >= 500 && !hasCloudStackBody(resp):
		if readOnly || resp.StatusCode == http.StatusServiceUnavailable {
			return true, fmt.Sprintf("HTTP %d without a CloudStack error body", resp.StatusCode)
		}
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
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
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

// commandOf reads the CloudStack command from the query or the form body.
func commandOf(req *http.Request) string {
	if c := req.URL.Query().Get("command"); c != "" {
		return c
	}
	if req.GetBody == nil {
		return "unknown"
	}
	body, err := req.GetBody()
	if err != nil {
		return "unknown"
	}
	defer body.Close()
	data, _ := io.ReadAll(io.LimitReader(body, 4<<20))
	form, _ := url.ParseQuery(string(data))
	if c := form.Get("command"); c != "" {
		return c
	}
	return "unknown"
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

func sleepCtx(req *http.Request, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-req.Context().Done():
		return false
	}
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}
