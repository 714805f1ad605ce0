package registry_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/registry"
)

const (
	user = "registry-admin"
	pass = "registry-secret-7f3e"
)

func newServer(t *testing.T, dir string, openGet bool) *httptest.Server {
	t.Helper()
	store, err := registry.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := registry.NewServer(store, registry.ServerOptions{Username: user, Password: pass, OpenGet: openGet,
		Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) envelope(t *testing.T) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		t.Fatalf("body %q is not the registry's JSON envelope: %v", a.body, err)
	}
	return m
}

func send(t *testing.T, method, url string, body []byte, auth bool) answer {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if auth {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

const settings = `{"agent_id":"agent-1","disks":{"system":"/dev/xvda","persistent":{}},"env":{"bosh":{"password":"x<y&z"}}}`

func TestEnvelopeAndStatusCodes(t *testing.T) {
	srv := newServer(t, t.TempDir(), false)
	url := srv.URL + "/instances/vm-1/settings"

	a := send(t, "GET", url, nil, true)
	if a.status != 404 || a.envelope(t)["status"] != "not_found" {
		t.Fatalf("GET before PUT: %d %s", a.status, a.body)
	}
	a = send(t, "PUT", url, []byte(settings), true)
	if a.status != 201 || a.envelope(t)["status"] != "ok" || a.header.Get("Content-Type") != "application/json" {
		t.Fatalf("first PUT: %d %s", a.status, a.body)
	}
	a = send(t, "GET", url, nil, true)
	env := a.envelope(t)
	if a.status != 200 || env["status"] != "ok" || env["settings"] != settings || len(env) != 2 {
		t.Fatalf("GET: %d %s", a.status, a.body)
	}
	updated := strings.Replace(settings, `"persistent":{}`, `"persistent":{"vol-1":"/dev/xvdc"}`, 1)
	if a = send(t, "PUT", url, []byte(updated), true); a.status != 200 || a.envelope(t)["status"] != "ok" {
		t.Fatalf("second PUT: %d %s", a.status, a.body)
	}
	if got := send(t, "GET", url, nil, true).envelope(t)["settings"]; got != updated {
		t.Fatalf("GET after update: %s", got)
	}
	if a = send(t, "DELETE", url, nil, true); a.status != 200 || a.envelope(t)["status"] != "ok" {
		t.Fatalf("DELETE: %d %s", a.status, a.body)
	}
	if a = send(t, "GET", url, nil, true); a.status != 404 || a.envelope(t)["status"] != "not_found" {
		t.Fatalf("GET after DELETE: %d %s", a.status, a.body)
	}
	if a = send(t, "DELETE", url, nil, true); a.status != 200 {
		t.Fatalf("DELETE of an absent instance: %d %s", a.status, a.body)
	}
	if a = send(t, "POST", url, []byte(settings), true); a.status != 405 || a.header.Get("Allow") == "" {
		t.Fatalf("POST: %d", a.status)
	}
	if a = send(t, "GET", srv.URL+"/instances/vm-1", nil, true); a.status != 404 {
		t.Fatalf("GET outside the API: %d", a.status)
	}
}

func TestTheClientRoundTrips(t *testing.T) {
	srv := newServer(t, t.TempDir(), false)
	c, err := registry.NewClient(srv.URL, user, pass, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get("vm-2"); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("Get of an absent instance: %v", err)
	}
	if err := c.Put("vm-2", []byte(settings)); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get("vm-2"); err != nil || string(got) != settings {
		t.Fatalf("Get: %q %v", got, err)
	}
	if err := c.Delete("vm-2"); err != nil {
		t.Fatal(err)
	}
	// Credentials in the URL, as agents get them.
	agent, _ := registry.NewClient(strings.Replace(srv.URL, "http://", "http://"+user+":"+pass+"@", 1), "", "", nil)
	if err := agent.Put("vm-3", []byte(settings)); err != nil {
		t.Fatal(err)
	}
}

func TestAuthentication(t *testing.T) {
	srv := newServer(t, t.TempDir(), false)
	url := srv.URL + "/instances/vm-1/settings"
	send(t, "PUT", url, []byte(settings), true)
	wrong := func(method string, body []byte, setAuth func(*http.Request)) answer {
		req, _ := http.NewRequest(method, url, bytes.NewReader(body))
		setAuth(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, resp.Header, string(b)}
	}
	for name, setAuth := range map[string]func(*http.Request){
		"none":           func(*http.Request) {},
		"wrong password": func(r *http.Request) { r.SetBasicAuth(user, "nope") },
		"wrong user":     func(r *http.Request) { r.SetBasicAuth("admin", pass) },
		"password only":  func(r *http.Request) { r.SetBasicAuth("", pass) },
		"not basic":      func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+pass) },
	} {
		for _, method := range []string{"GET", "PUT", "DELETE"} {
			a := wrong(method, []byte(`{"evil":true}`), setAuth)
			if a.status != 401 || a.header.Get("WWW-Authenticate") != `Basic realm="Bosh Registry"` ||
				a.body != `{"status":"access_denied"}` {
				t.Errorf("%s %s: %d %q %q", name, method, a.status, a.header.Get("WWW-Authenticate"), a.body)
			}
		}
	}
	if got := send(t, "GET", url, nil, true).envelope(t)["settings"]; got != settings {
		t.Fatalf("an unauthenticated PUT or DELETE changed the settings: %s", got)
	}
	// A bad id without credentials is still just 401.
	if a := send(t, "PUT", srv.URL+"/instances/..%2Fetc/settings", []byte(settings), false); a.status != 401 {
		t.Fatalf("unauthenticated PUT with a bad id: %d", a.status)
	}
}

func TestOpenGet(t *testing.T) {
	srv := newServer(t, t.TempDir(), true)
	url := srv.URL + "/instances/vm-1/settings"
	send(t, "PUT", url, []byte(settings), true)
	if a := send(t, "GET", url, nil, false); a.status != 200 || a.envelope(t)["settings"] != settings {
		t.Fatalf("open GET: %d %s", a.status, a.body)
	}
	if a := send(t, "PUT", url, []byte(settings), false); a.status != 401 {
		t.Fatalf("open_get opened PUT: %d", a.status)
	}
	if a := send(t, "DELETE", url, nil, false); a.status != 401 {
		t.Fatalf("open_get opened DELETE: %d", a.status)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(filepath.Dir(dir), "outside")
	srv := newServer(t, dir, false)
	url := srv.URL + "/instances/vm-1/settings"
	for name, body := range map[string]string{"not JSON": `{"agent_id":`, "empty": ``, "text": `hello`} {
		if a := send(t, "PUT", url, []byte(body), true); a.status != 400 || a.envelope(t)["status"] != "error" {
			t.Errorf("%s: %d %s", name, a.status, a.body)
		}
	}
	// Issue 24.7: JSON that no agent reads as its settings.
	for body, want := range map[string]string{`null`: "settings must be a JSON object, not null",
		`"settings"`: "settings must be a JSON object, not a string", `[{}]`: "settings must be a JSON object, not an array"} {
		if a := send(t, "PUT", url, []byte(body), true); a.status != 400 || a.envelope(t)["error"] != want {
			t.Errorf("%s: %d %s, want 400 %q", body, a.status, a.body, want)
		}
	}
	big := []byte(`{"x":"` + strings.Repeat("a", registry.MaxSettingsSize) + `"}`)
	if a := send(t, "PUT", url, big, true); a.status != 413 {
		t.Errorf("oversized body: %d", a.status)
	}
	// Without a Content-Length the limit still holds.
	req, _ := http.NewRequest(http.MethodPut, url, io.MultiReader(bytes.NewReader(big)))
	req.ContentLength = -1
	req.SetBasicAuth(user, pass)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked oversized body: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	for _, id := range []string{"..", "..%2Foutside", "a%2Fb", "%2E%2E", ".hidden", "a%00b", "a%0Ab",
		"a%5Cb", strings.Repeat("x", registry.MaxIDLength+1), "a..b", "%FF"} {
		u := srv.URL + "/instances/" + id + "/settings"
		if a := send(t, "PUT", u, []byte(settings), true); a.status != 400 {
			t.Errorf("PUT id %q: %d %s", id, a.status, a.body)
		}
		if a := send(t, "GET", u, nil, true); a.status != 400 {
			t.Errorf("GET id %q: %d %s", id, a.status, a.body)
		}
	}
	if a := send(t, "GET", srv.URL+"/instances/a/../../outside/settings", nil, true); a.status < 400 {
		t.Errorf("dot segments: %d", a.status)
	}
	if _, err := os.Stat(outside + ".json"); err == nil {
		t.Fatal("a PUT escaped the store directory")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("bad input left files: %v", entries)
	}
	if a := send(t, "PUT", srv.URL+"/instances/"+strings.Repeat("x", registry.MaxIDLength)+"/settings",
		[]byte(settings), true); a.status != 201 {
		t.Errorf("an id of the maximum length: %d", a.status)
	}
}

func TestConcurrentWritersAndRestart(t *testing.T) {
	dir := t.TempDir()
	srv := newServer(t, dir, false)
	const writers, rounds = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				// Every writer also writes one shared id.
				for _, id := range []string{fmt.Sprintf("vm-%d", w), "shared"} {
					body := fmt.Sprintf(`{"writer":%d,"round":%d}`, w, i)
					a := send(t, "PUT", srv.URL+"/instances/"+id+"/settings", []byte(body), true)
					if a.status != 200 && a.status != 201 {
						t.Errorf("PUT %s: %d", id, a.status)
					}
				}
			}
		}(w)
	}
	wg.Wait()
	srv.Close()
	// A new server on the same directory reads everything back.
	again := newServer(t, dir, false)
	for w := 0; w < writers; w++ {
		got := send(t, "GET", again.URL+fmt.Sprintf("/instances/vm-%d/settings", w), nil, true).envelope(t)["settings"]
		if want := fmt.Sprintf(`{"writer":%d,"round":%d}`, w, rounds-1); got != want {
			t.Errorf("vm-%d after restart: %s, want %s", w, got, want)
		}
	}
	if got := send(t, "GET", again.URL+"/instances/shared/settings", nil, true).envelope(t)["settings"]; !json.Valid([]byte(got)) {
		t.Errorf("shared: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != writers+1 {
		t.Errorf("%d files in the store, want %d", len(entries), writers+1)
	}
}

func TestStaleTemporaryFilesAreRemoved(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".tmp-deadbeef"), []byte(`{"half`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.OpenStore(dir); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}
