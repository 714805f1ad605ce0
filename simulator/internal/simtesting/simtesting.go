// Package simtesting is what the simulator's tests share, the root
// package's and each family's: a simulator started in this process through
// internal/simtest (the one starter), signed requests, CloudStack's answers
// and errors, and a VM environment with the seeded zone's ids.
package simtesting

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/simtest"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// The root admin's keys Start presets.
const (
	Key    = "test-api-key"
	Secret = "test-secret-key"
)

// Sim is a simulator served in this process.
type Sim struct {
	T     *testing.T
	Srv   *simulator.Server
	HTTP  *httptest.Server
	API   string // .../client/api
	Admin *simulator.AdminClient
}

// Start starts a simulator with the test keys preset unless opts names
// other keys.
func Start(t *testing.T, opts simulator.Options) *Sim {
	t.Helper()
	if opts.AdminAPIKey == "" && opts.AdminSecretKey == "" {
		opts.AdminAPIKey, opts.AdminSecretKey = Key, Secret
	}
	return Serve(t, opts)
}

// uploadMonitorInterval is how often the upload monitor of a test
// simulator polls unless the test sets Options.UploadMonitorInterval; a
// negative value there keeps the setting's own (60 s).
const uploadMonitorInterval = 20 * time.Millisecond

// Serve starts a simulator whose admin has only the keys opts names.
func Serve(t *testing.T, opts simulator.Options) *Sim {
	t.Helper()
	switch {
	case opts.UploadMonitorInterval == 0:
		opts.UploadMonitorInterval = uploadMonitorInterval
	case opts.UploadMonitorInterval < 0:
		opts.UploadMonitorInterval = 0
	}
	p := simtest.ServeInProcess(t, opts)
	return &Sim{T: t, Srv: p.Server, HTTP: p.HTTP, API: p.URL, Admin: p.Admin}
}

// Client is the real cloudstack-go client (it signs version 3).
func (s *Sim) Client() *cloudstack.CloudStackClient {
	return cloudstack.NewClient(s.API, Key, Secret, false)
}

// Stop closes the listener and the simulator before the test ends.
func (s *Sim) Stop() {
	s.HTTP.Close()
	if err := s.Srv.Close(); err != nil {
		s.T.Fatal(err)
	}
}

// Signed builds request parameters signed the way CloudStack clients sign:
// cloudstack-go's EncodeValues, lowercased, HMAC-SHA1, Base64.
func Signed(params map[string]string, key, secret string) url.Values {
	v := url.Values{}
	for k, val := range params {
		v.Set(k, val)
	}
	v.Set("apiKey", key)
	v.Set("response", "json")
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write([]byte(strings.ToLower(cloudstack.EncodeValues(v))))
	v.Set("signature", base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return v
}

// V3 adds version 3 signing parameters expiring after d (negative: expired).
func V3(params map[string]string, d time.Duration) map[string]string {
	out := map[string]string{"signatureversion": "3", "expires": time.Now().UTC().Add(d).Format(time.RFC3339)}
	for k, v := range params {
		out[k] = v
	}
	return out
}

// Response is a decoded API answer.
type Response struct {
	Status      int
	ContentType string
	Raw         string
	Cookies     []*http.Cookie
	Body        map[string]map[string]any
}

// Do sends req and decodes the answer.
func (s *Sim) Do(req *http.Request) Response {
	s.T.Helper()
	resp, err := s.HTTP.Client().Do(req)
	if err != nil {
		s.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := Response{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Raw: string(b),
		Cookies: resp.Cookies()}
	_ = json.Unmarshal(b, &r.Body)
	return r
}

// Get sends signed parameters as a query string, with the signature escaped
// as cloudstack-go does.
func (s *Sim) Get(v url.Values) Response {
	s.T.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.API+"?"+v.Encode(), nil)
	return s.Do(req)
}

// Post sends v as a form, with cookies.
func (s *Sim) Post(v url.Values, cookies ...*http.Cookie) Response {
	s.T.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.API, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return s.Do(req)
}

// Call signs params (version 3) with the test keys and GETs them.
func (s *Sim) Call(params map[string]string) Response {
	s.T.Helper()
	return s.As(Key, Secret, params)
}

// As sends a signed (version 3) request with an account's keys.
func (s *Sim) As(key, secret string, params map[string]string) Response {
	s.T.Helper()
	return s.Get(Signed(V3(params, 10*time.Minute), key, secret))
}

// Inner returns the object under the single top-level key.
func (r Response) Inner(t *testing.T, name string) map[string]any {
	t.Helper()
	v, ok := r.Body[name]
	if !ok {
		t.Fatalf("no %q in %d %s", name, r.Status, r.Raw)
	}
	return v
}

// WantError checks a CloudStack error answer.
func (r Response) WantError(t *testing.T, name string, code, csCode int, text string) {
	t.Helper()
	if r.Status != code {
		t.Fatalf("status %d, want %d: %s", r.Status, code, r.Raw)
	}
	e := r.Inner(t, name)
	if int(Num(e["errorcode"])) != code || int(Num(e["cserrorcode"])) != csCode {
		t.Fatalf("errorcode/cserrorcode = %v/%v, want %d/%d: %s", e["errorcode"], e["cserrorcode"], code, csCode, r.Raw)
	}
	if text != "" && e["errortext"] != text {
		t.Fatalf("errortext = %q, want %q", e["errortext"], text)
	}
	if l, ok := e["uuidList"].([]any); !ok || len(l) != 0 {
		t.Fatalf("uuidList = %v", e["uuidList"])
	}
	if r.ContentType != kernel.JSONContentType {
		t.Fatalf("content type %q", r.ContentType)
	}
}

// Num is a JSON number, 0 for anything else.
func Num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// Items returns the entity list of a list answer.
func Items(t *testing.T, body map[string]any, key string) []map[string]any {
	t.Helper()
	raw, _ := body[key].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, x := range raw {
		out = append(out, x.(map[string]any))
	}
	return out
}

// ModuleDir asks the go command where a module of the build list lives.
func ModuleDir(t *testing.T, module string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", module, err)
	}
	return strings.TrimSpace(string(out))
}
