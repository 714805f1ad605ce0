package simulator

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
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/launch"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

const (
	testKey    = "test-api-key"
	testSecret = "test-secret-key"
)

// testSim is a simulator served by httptest.
type testSim struct {
	t     *testing.T
	srv   *Server
	http  *httptest.Server
	api   string // .../client/api
	admin *AdminClient
}

// startSim starts a simulator with the test keys preset unless opts names
// other keys.
func startSim(t *testing.T, opts Options) *testSim {
	t.Helper()
	if opts.AdminAPIKey == "" && opts.AdminSecretKey == "" {
		opts.AdminAPIKey, opts.AdminSecretKey = testKey, testSecret
	}
	return startSimNoKeys(t, opts)
}

// testUploadMonitorInterval is how often the upload monitor of a test
// simulator polls unless the test sets Options.UploadMonitorInterval; a
// negative value there keeps the setting's own (60 s).
const testUploadMonitorInterval = 20 * time.Millisecond

// startSimNoKeys starts a simulator whose admin has only the keys opts names.
func startSimNoKeys(t *testing.T, opts Options) *testSim {
	t.Helper()
	switch {
	case opts.UploadMonitorInterval == 0:
		opts.UploadMonitorInterval = testUploadMonitorInterval
	case opts.UploadMonitorInterval < 0:
		opts.UploadMonitorInterval = 0
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := launch.Serve(t, "the simulator", srv.Handler(), srv.Close)
	return &testSim{t: t, srv: srv, http: hs, api: hs.URL + "/client/api",
		admin: &AdminClient{BaseURL: hs.URL, HTTP: hs.Client()}}
}

// client is the real cloudstack-go client (it signs version 3).
func (s *testSim) client() *cloudstack.CloudStackClient {
	return cloudstack.NewClient(s.api, testKey, testSecret, false)
}

// signed builds request parameters signed the way CloudStack clients sign:
// cloudstack-go's EncodeValues, lowercased, HMAC-SHA1, Base64.
func signed(params map[string]string, key, secret string) url.Values {
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

// v3 adds version 3 signing parameters expiring after d (negative: expired).
func v3(params map[string]string, d time.Duration) map[string]string {
	out := map[string]string{"signatureversion": "3", "expires": time.Now().UTC().Add(d).Format(time.RFC3339)}
	for k, v := range params {
		out[k] = v
	}
	return out
}

// response is a decoded API answer.
type response struct {
	status      int
	contentType string
	raw         string
	cookies     []*http.Cookie
	body        map[string]map[string]any
}

func (s *testSim) do(req *http.Request) response {
	s.t.Helper()
	resp, err := s.http.Client().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), raw: string(b),
		cookies: resp.Cookies()}
	_ = json.Unmarshal(b, &r.body)
	return r
}

// get sends signed parameters as a query string, with the signature escaped
// as cloudstack-go does.
func (s *testSim) get(v url.Values) response {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.api+"?"+v.Encode(), nil)
	return s.do(req)
}

func (s *testSim) post(v url.Values, cookies ...*http.Cookie) response {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.api, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return s.do(req)
}

// call signs params (version 3) with the test keys and GETs them.
func (s *testSim) call(params map[string]string) response {
	s.t.Helper()
	return s.get(signed(v3(params, 10*time.Minute), testKey, testSecret))
}

// inner returns the object under the single top-level key.
func (r response) inner(t *testing.T, name string) map[string]any {
	t.Helper()
	v, ok := r.body[name]
	if !ok {
		t.Fatalf("no %q in %d %s", name, r.status, r.raw)
	}
	return v
}

// wantError checks a CloudStack error answer.
func (r response) wantError(t *testing.T, name string, code, csCode int, text string) {
	t.Helper()
	if r.status != code {
		t.Fatalf("status %d, want %d: %s", r.status, code, r.raw)
	}
	e := r.inner(t, name)
	if int(num(e["errorcode"])) != code || int(num(e["cserrorcode"])) != csCode {
		t.Fatalf("errorcode/cserrorcode = %v/%v, want %d/%d: %s", e["errorcode"], e["cserrorcode"], code, csCode, r.raw)
	}
	if text != "" && e["errortext"] != text {
		t.Fatalf("errortext = %q, want %q", e["errortext"], text)
	}
	if l, ok := e["uuidList"].([]any); !ok || len(l) != 0 {
		t.Fatalf("uuidList = %v", e["uuidList"])
	}
	if r.contentType != kernel.JSONContentType {
		t.Fatalf("content type %q", r.contentType)
	}
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// items returns the entity list of a list answer.
func items(t *testing.T, body map[string]any, key string) []map[string]any {
	t.Helper()
	raw, _ := body[key].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, x := range raw {
		out = append(out, x.(map[string]any))
	}
	return out
}

// moduleDir asks the go command where a module of the build list lives.
func moduleDir(t *testing.T, module string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", module, err)
	}
	return strings.TrimSpace(string(out))
}
