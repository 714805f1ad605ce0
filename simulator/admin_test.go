package simulator_test

import (
	"bytes"
	"log"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// TestRequestLogRedactsSecrets drives every kind of secret through the API
// and checks none reaches GET /sim/requests or the simulator's log.
func TestRequestLogRedactsSecrets(t *testing.T) {
	var logBuf syncBuffer
	s := simtesting.Start(t, simulator.Options{Logger: log.New(&logBuf, "", 0)})
	login, _ := login(s, map[string]string{"username": "admin", "password": "password"})
	lr := login.Inner(t, "loginresponse")
	sessionKey := lr["sessionkey"].(string)
	s.Post(url.Values{"command": {"listZones"}, "sessionkey": {sessionKey}, "response": {"json"}},
		cookie(login.Cookies, "JSESSIONID"))
	signedReq := simtesting.Signed(simtesting.V3(map[string]string{"command": "listZones", "userdata": "c2VjcmV0LXVzZXJkYXRh"}, time.Minute), simtesting.Key, simtesting.Secret)
	s.Get(signedReq)
	keys := s.Call(map[string]string{"command": "registerUserKeys", "id": lr["userid"].(string)}).
		Inner(t, "registeruserkeysresponse")["userkeys"].(map[string]any)

	raw := simtesting.AdminGet(t, s, "/sim/requests")
	secrets := []string{simtesting.Key, simtesting.Secret, `"password":"password"`, sessionKey, signedReq.Get("signature"),
		"c2VjcmV0LXVzZXJkYXRh", keys["apikey"].(string), keys["secretkey"].(string)}
	for _, secret := range secrets {
		if strings.Contains(raw, secret) {
			t.Errorf("request log contains %q", secret)
		}
		if strings.Contains(logBuf.String(), secret) {
			t.Errorf("simulator log contains %q", secret)
		}
	}
	reqs, err := s.Admin.Requests()
	if err != nil || len(reqs) != 4 {
		t.Fatalf("requests = %d, %v", len(reqs), err)
	}
	if reqs[0].Command != "login" || reqs[0].Params["password"] != kernel.Redacted || reqs[2].Params["apiKey"] != kernel.Redacted ||
		reqs[2].Params["signature"] != kernel.Redacted || reqs[2].Params["userdata"] != kernel.Redacted || reqs[2].Params["command"] != "listZones" {
		t.Fatalf("logged = %+v", reqs[:3])
	}
}

func TestRequestLogFields(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	s.Call(map[string]string{"command": "listZones"})
	s.Call(map[string]string{"command": "listzones"})
	job := s.Call(map[string]string{"command": "prepareHostForMaintenance", "id": simtesting.FirstHost(t, s)["id"].(string)}).
		Inner(t, "preparehostformaintenanceresponse")["jobid"].(string)
	simtesting.QueryJob(t, s, job)
	simtesting.QueryJob(t, s, job)
	reqs, err := s.Admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	if reqs[0].Command != "listZones" || reqs[0].Status != 200 || reqs[0].Method != http.MethodGet ||
		reqs[0].LatencyMS < 0 || reqs[0].Time.IsZero() || reqs[1].Status != 401 {
		t.Fatalf("logged = %+v", reqs[:2])
	}
	if reqs[3].Command != "prepareHostForMaintenance" || reqs[3].JobID != job {
		t.Fatalf("async request logged as %+v", reqs[3])
	}
	if n, _ := s.Admin.CountRequests("queryasyncjobresult"); n != 2 {
		t.Fatalf("queryAsyncJobResult count = %d", n)
	}
	if err := s.Admin.ClearRequests(); err != nil {
		t.Fatal(err)
	}
	if reqs, _ := s.Admin.Requests(); len(reqs) != 0 {
		t.Fatalf("log not cleared: %d", len(reqs))
	}
}

func TestAdminEndpointsNeedBasicAuth(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	for _, path := range []string{"/sim/health", "/sim/requests", "/sim/faults"} {
		resp, err := http.Get(s.HTTP.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without auth: %d", path, resp.StatusCode)
		}
	}
	if err := s.Admin.Health(); err != nil {
		t.Fatal(err)
	}
	api := &simulator.AdminClient{BaseURL: s.API}
	if err := api.Health(); err != nil {
		t.Fatalf("BaseURL ending in /client/api: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
