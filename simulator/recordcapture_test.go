package simulator_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// answerCapture is an http.RoundTripper that keeps every answer a simulator
// gives, by command, in the form cloudstack-go recorded real answers: a
// synchronous command's object (the value under the answer's one key) and
// an asynchronous command's finished job (queryAsyncJobResult's object).
type answerCapture struct {
	next    http.RoundTripper
	mu      sync.Mutex
	jobs    map[string]string // job id -> the command that queued it
	answers map[string][]map[string]any
}

func newAnswerCapture(next http.RoundTripper) *answerCapture {
	return &answerCapture{next: next, jobs: map[string]string{}, answers: map[string][]map[string]any{}}
}

func (a *answerCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	params, err := requestParams(req)
	if err != nil {
		return nil, err
	}
	resp, err := a.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	a.keep(params, body)
	return resp, nil
}

// requestParams reads a request's parameters, query and form alike, and
// leaves its body to be sent.
func requestParams(req *http.Request) (url.Values, error) {
	params := req.URL.Query()
	if req.Body == nil {
		return params, nil
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	form, _ := url.ParseQuery(string(b)) // what parses of a body that is not a form is nothing
	for k, v := range form {
		params[k] = v
	}
	return params, nil
}

func (a *answerCapture) keep(params url.Values, body []byte) {
	var top map[string]map[string]any
	if json.Unmarshal(body, &top) != nil || len(top) != 1 {
		return
	}
	var inner map[string]any
	for _, v := range top {
		inner = v
	}
	if _, failed := inner["errorcode"]; failed {
		return
	}
	command := params.Get("command")
	a.mu.Lock()
	defer a.mu.Unlock()
	if command == "queryAsyncJobResult" {
		if inner["jobstatus"] == 1.0 {
			if queued := a.jobs[params.Get("jobid")]; queued != "" {
				a.answers[queued] = append(a.answers[queued], inner)
			}
		}
		return
	}
	if api, ok := schema.Lookup(command); ok && api.IsAsync {
		if id, _ := inner["jobid"].(string); id != "" {
			a.jobs[id] = command
		}
		return
	}
	a.answers[command] = append(a.answers[command], inner)
}

// captured is what a simulator answered a scenario, and the clients that
// talked to it through the capture.
type captured struct {
	*answerCapture
	t    *testing.T
	s    *simtesting.Sim
	HTTP *http.Client
	CS   *cloudstack.CloudStackClient // waits for jobs
}

func captureOn(t *testing.T, s *simtesting.Sim, into *answerCapture) *captured {
	hc := &http.Client{Transport: into, Timeout: time.Minute}
	return &captured{answerCapture: into, t: t, s: s, HTTP: hc,
		CS: cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false, cloudstack.WithHTTPClient(hc))}
}

// call sends a signed command through the capture and returns the object
// under the answer's key, waiting for an asynchronous command's job.
func (c *captured) Call(params map[string]string) map[string]any {
	c.t.Helper()
	inner := c.Get(params)
	if api, ok := schema.Lookup(params["command"]); ok && api.IsAsync {
		id, _ := inner["jobid"].(string)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			job := c.Get(map[string]string{"command": "queryAsyncJobResult", "jobid": id})
			if job["jobstatus"] != 0.0 {
				if job["jobstatus"] != 1.0 {
					c.t.Fatalf("%s failed: %v", params["command"], job["jobresult"])
				}
				return job
			}
			time.Sleep(5 * time.Millisecond)
		}
		c.t.Fatalf("%s: job %s still pending", params["command"], id)
	}
	return inner
}

func (c *captured) Get(params map[string]string) map[string]any {
	c.t.Helper()
	resp, err := c.HTTP.Get(c.s.API + "?" + simtesting.Signed(simtesting.V3(params, 10*time.Minute), simtesting.Key, simtesting.Secret).Encode())
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var top map[string]map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&top); err != nil || len(top) != 1 {
		c.t.Fatalf("%s: answer %v, %v", params["command"], top, err)
	}
	for key, inner := range top {
		if _, failed := inner["errorcode"]; failed || !strings.HasSuffix(key, "response") {
			c.t.Fatalf("%s: %v", params["command"], inner)
		}
		return inner
	}
	return nil
}

// login and logout are posted without a signature, as a browser does.
func (c *captured) loginLogout() {
	c.t.Helper()
	resp, err := c.HTTP.PostForm(c.s.API, url.Values{"command": {"login"}, "response": {"json"},
		"username": {"admin"}, "password": {"password"}})
	if err != nil {
		c.t.Fatal(err)
	}
	var login struct {
		R struct {
			SessionKey string `json:"sessionkey"`
		} `json:"loginresponse"`
	}
	err = json.NewDecoder(resp.Body).Decode(&login)
	resp.Body.Close()
	if err != nil || login.R.SessionKey == "" {
		c.t.Fatalf("login: %+v, %v", login, err)
	}
	req, _ := http.NewRequest(http.MethodPost, c.s.API, strings.NewReader(url.Values{"command": {"logout"},
		"response": {"json"}, "sessionkey": {login.R.SessionKey}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, ck := range resp.Cookies() {
		req.AddCookie(ck)
	}
	out, err := c.HTTP.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	out.Body.Close()
}
