package spec

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/loopback"
)

// TestRegistryAndWebDAVOnOnePort: the Java CPI's shape, its registry and
// its WebDAV on one port. serve answers both on one listener; the CPI
// publishes a stemcell through the daemon there and writes an old
// stemcell's VM settings to the registry there, which an agent reads back
// with the endpoint it was given.
func TestRegistryAndWebDAVOnOnePort(t *testing.T) {
	addr := loopback.FreeAddr(t)
	store, dir := t.TempDir(), t.TempDir()
	cfg := registryConfig(store)
	section(cfg, "registry")["listen"] = addr
	section(cfg, "webdav")["listen"], section(cfg, "webdav")["dir"] = addr, dir
	daemon := startServe(t, cfg)
	base := "http://" + addr
	if daemon.url("registry") != base || daemon.url("webdav") != base || !strings.Contains(daemon.log(), "registry+webdav listening") {
		t.Fatalf("serve's listeners: %v\n%s", daemon.urls, daemon.log())
	}
	e := newEnv(t, func(cfg map[string]any) {
		section(cfg, "stemcell")["publish"] = "webdav"
		w := section(cfg, "webdav")
		w["daemon_url"], w["dir"] = base, dir
		r := section(cfg, "registry")
		r["endpoint"], r["username"], r["password"] = base, regUser, regPass
	})
	e.stemcellAPIVersion, e.registryStore = 1, store

	stemcell := e.stemcell()
	if tpls := e.ourTemplates(); len(tpls) != 1 || !strings.HasPrefix(tpls[0].Url, base+"/") {
		t.Fatalf("templates %+v, want one registered from %s", tpls, base)
	}
	var cid string
	e.apiVersion = 1
	e.call("create_vm", "agent-old", stemcell, map[string]any{"compute_offering": "Small Instance"},
		map[string]any{"default": manualNet("10.1.1.82")}, []string{}, boshEnv).ok(t).decode(t, &cid)
	var envelope struct{ Registry struct{ Endpoint string } }
	if err := json.Unmarshal([]byte(e.metadata(cid, "/latest/user-data")), &envelope); err != nil {
		t.Fatal(err)
	}
	name := e.vm(cid).Name
	resp, err := http.Get(envelope.Registry.Endpoint + "/instances/" + name + "/settings")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the agent's GET on the shared port: %v %v", resp, err)
	}
	resp.Body.Close()
	e.call("delete_vm", cid).ok(t)
	if code, _ := registryGet(t, base, name); code != 404 {
		t.Fatalf("delete_vm left the registry settings (%d)", code)
	}
	e.call("delete_stemcell", stemcell).ok(t)
	e.assertNoTemplatesLeft()
}
