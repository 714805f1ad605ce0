package serve_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/loopback"
)

func do(t *testing.T, method, url, user, password, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	return send(t, http.DefaultClient, req)
}

// TestOneListenerServesBoth: the registry and the WebDAV daemon on the same
// address (the Java CPI's one port) share one listener, each with its own
// paths and its own credentials.
func TestOneListenerServesBoth(t *testing.T) {
	dir, addr := t.TempDir(), loopback.FreeAddr(t)
	cfg := parse(t, `{"registry":{"listen":"`+addr+`","store_dir":"`+filepath.Join(dir, "reg")+`","username":"r","password":"registry-pw"},
	  "webdav":{"listen":"`+addr+`","dir":"`+filepath.Join(dir, "dav")+`","username":"w","password":"dav-pw"}}`)
	if !cfg.SharedListener() {
		t.Fatal("SharedListener is false for equal addresses")
	}
	s, _, _, _ := run(t, cfg)
	if len(s.Services) != 1 || s.Services[0].Name != "registry+webdav" {
		t.Fatalf("services %+v, want one registry+webdav", s.Services)
	}
	base := "http://" + addr
	if code, body := get(t, http.DefaultClient, base+"/healthz"); code != 200 || body != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	settings := base + "/instances/vm-1/settings"
	if code, _ := do(t, "PUT", settings, "r", "registry-pw", `{"agent_id":"a"}`); code != 201 {
		t.Errorf("registry PUT: %d", code)
	}
	if code, body := do(t, "GET", settings, "r", "registry-pw", ""); code != 200 || !strings.Contains(body, `agent_id`) {
		t.Errorf("registry GET: %d %s", code, body)
	}
	image := base + "/0123456789abcdef0123456789abcdef/image.vhd.bz2"
	if code, _ := do(t, "PUT", image, "r", "registry-pw", "bytes"); code != 401 {
		t.Errorf("WebDAV PUT with the registry's credentials: %d, want 401", code)
	}
	if code, _ := do(t, "PUT", image, "w", "dav-pw", "bytes"); code/100 != 2 {
		t.Errorf("WebDAV PUT: %d", code)
	}
	if code, body := get(t, http.DefaultClient, image); code != 200 || body != "bytes" {
		t.Errorf("WebDAV GET: %d %q", code, body)
	}
	if code, _ := do(t, "GET", settings, "w", "dav-pw", ""); code != 401 {
		t.Errorf("registry GET with the WebDAV credentials: %d, want 401", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "reg", "vm-1.json")); err != nil {
		t.Errorf("the registry's store: %v", err)
	}
}

func TestSharedListenerRefusals(t *testing.T) {
	cert, key := selfSigned(t)
	addr := loopback.FreeAddr(t)
	registry := `"registry":{"listen":"` + addr + `","store_dir":"/x","username":"r","password":"p"}`
	cases := map[string]struct{ json, want string }{
		"one listener, TLS for one": {`{` + registry + `,"webdav":{"listen":"` + addr + `","dir":"/y","tls_cert":` + quote(cert) +
			`,"tls_key":` + quote(key) + `}}`, "must be the same"},
		"registry where create_stemcell serves": {`{` + registry + `,"stemcell":{"publish":"webdav"},"webdav":{"listen":"` + addr + `"}}`,
			"set webdav.dir"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := config.ParseServe([]byte(c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	// Port 0 is a free port each: two listeners, as before.
	cfg := parse(t, `{"registry":{"listen":"127.0.0.1:0","store_dir":"`+t.TempDir()+`","username":"r","password":"p"},
	  "webdav":{"listen":"127.0.0.1:0","dir":"`+t.TempDir()+`"}}`)
	if cfg.SharedListener() {
		t.Error("port 0 shares a listener")
	}
}
