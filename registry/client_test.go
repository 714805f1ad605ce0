package registry_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/registry"
)

// fakeRegistry records what the client sends and answers like the Ruby
// registry.
type fakeRegistry struct {
	mu       sync.Mutex
	settings map[string]string
	auths    []string
	paths    []string
}

func (f *fakeRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	user, pass, _ := r.BasicAuth()
	f.auths = append(f.auths, user+":"+pass)
	f.paths = append(f.paths, r.URL.EscapedPath())
	id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/instances/"), "/settings")
	switch r.Method {
	case http.MethodPut:
		body, _ := io.ReadAll(r.Body)
		_, existed := f.settings[id]
		f.settings[id] = string(body)
		if existed {
			w.WriteHeader(http.StatusOK)
		} else {
			w.WriteHeader(http.StatusCreated)
		}
		io.WriteString(w, `{"status":"ok"}`)
	case http.MethodGet:
		s, ok := f.settings[id]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"status":"not_found"}`)
			return
		}
		b, _ := jsonString(s)
		io.WriteString(w, `{"status":"ok","settings":`+b+`}`)
	case http.MethodDelete:
		if _, ok := f.settings[id]; !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		delete(f.settings, id)
		io.WriteString(w, `{"status":"ok"}`)
	}
}

func jsonString(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String(), nil
}

func TestPutGetDelete(t *testing.T) {
	f := &fakeRegistry{settings: map[string]string{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	// Credentials in the endpoint URL become a header, never part of a path.
	c, err := registry.NewClient(strings.Replace(srv.URL, "http://", "http://admin:s3cret@", 1), "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Put("vm-1", []byte(`{"agent_id":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.Put("vm-1", []byte(`{"agent_id":"b"}`)); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get("vm-1")
	if err != nil || string(got) != `{"agent_id":"b"}` {
		t.Fatalf("%s %v", got, err)
	}
	if err := c.Delete("vm-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("vm-1"); err != nil {
		t.Fatalf("deleting absent settings must succeed: %v", err)
	}
	if _, err := c.Get("vm-1"); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("got %v", err)
	}
	for i, a := range f.auths {
		if a != "admin:s3cret" || strings.Contains(f.paths[i], "s3cret") {
			t.Fatalf("request %d: auth %q path %q", i, a, f.paths[i])
		}
	}
}

func TestBadIDsAndEndpoints(t *testing.T) {
	c, err := registry.NewClient("http://127.0.0.1:1", "u", "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "..", "a/b", `a\b`} {
		if err := c.Put(id, []byte("{}")); err == nil || !strings.Contains(err.Error(), "not a plain name") {
			t.Errorf("id %q: %v", id, err)
		}
	}
	if err := c.Put("vm", []byte("{}")); err == nil || strings.Contains(err.Error(), "p@") {
		t.Errorf("unreachable registry: %v", err)
	}
	if _, err := registry.NewClient("ftp://x", "", "", nil); err == nil {
		t.Error("an ftp endpoint must be refused")
	}
}

// TestFailuresSayWhetherTheRegistryChanged: a refusal names the registry,
// the status and what the registry said (never the password), and left
// the registry as it was, as did a request that never went out; a request
// that went out and got no answer may have been carried out.
func TestFailuresSayWhetherTheRegistryChanged(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/instances/denied/settings":
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, "{\"status\":\n\"access_denied\"}")
		case "/instances/full/settings":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, strings.Repeat("x", 300))
		default: // read the request, then drop the connection
			_, _ = io.ReadAll(r.Body)
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}
	}))
	defer srv.Close()
	c, err := registry.NewClient(srv.URL, "admin", "s3cret", nil)
	if err != nil {
		t.Fatal(err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	down, err := registry.NewClient(closed.URL, "admin", "s3cret", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		client    *registry.Client
		id        string
		unchanged bool
		says      string
	}{
		{c, "denied", true, `answered PUT of denied's settings with 401 Unauthorized {"status": "access_denied"}: it refused ` +
			"the username and password the CPI sent (registry.username, registry.password)"},
		{c, "full", true, "with 500 Internal Server Error " + strings.Repeat("x", 200) + "…"},
		{c, "dropped", false, "did not answer PUT of dropped's settings"},
		{down, "vm", true, "did not answer PUT of vm's settings"},
	} {
		err := tc.client.Put(tc.id, []byte("{}"))
		if err == nil || registry.Unchanged(err) != tc.unchanged || !strings.Contains(err.Error(), tc.says) ||
			!strings.Contains(err.Error(), "the registry at http://127.0.0.1:") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("PUT %s: %v (unchanged %v, want %v)", tc.id, err, registry.Unchanged(err), tc.unchanged)
		}
	}
	if registry.Unchanged(errors.New("other")) {
		t.Error("an error of another kind says the registry is unchanged")
	}
}

// Settings another registry holds that no agent could read are refused on
// the way in, naming what they are (issue 24.7): attach_disk rewrites them.
func TestGetRefusesSettingsThatAreNoObject(t *testing.T) {
	reg := &fakeRegistry{settings: map[string]string{"vm-null": "null", "vm-list": "[]", "vm-ok": "{}"}}
	srv := httptest.NewServer(reg)
	defer srv.Close()
	c, err := registry.NewClient(srv.URL, "u", "p", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"vm-null": "registry GET vm-null: settings must be a JSON object, not null",
		"vm-list": "registry GET vm-list: settings must be a JSON object, not an array", "vm-ok": ""} {
		_, err := c.Get(id)
		if (want == "") != (err == nil) || err != nil && err.Error() != want {
			t.Errorf("%s: %v, want %q", id, err, want)
		}
	}
}
