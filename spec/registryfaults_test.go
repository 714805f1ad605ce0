package spec

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
)

// flakyRegistry stands in front of a `serve` registry and fails the next
// failPuts PUTs with a 500, as a registry whose disk is full does.
type flakyRegistry struct {
	failPuts atomic.Int32
	url      string
}

func startFlakyRegistry(t *testing.T, target string) *flakyRegistry {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	f := &flakyRegistry{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && f.failPuts.Add(-1) >= 0 {
			http.Error(w, "injected: no space left on device", http.StatusInternalServerError)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// TestOldStemcellDiskRegistryFailures: when the registry cannot be written,
// attach_disk detaches the disk again and detach_disk attaches it again
// (after retrying the write), so CloudStack and the registry agree, and the
// error says which was done.
func TestOldStemcellDiskRegistryFailures(t *testing.T) {
	backend := startServe(t, registryConfig(t.TempDir())).url("registry")
	reg := startFlakyRegistry(t, backend)
	e := newEnv(t, func(cfg map[string]any) {
		section(cfg, "registry")["endpoint"] = reg.url
		section(cfg, "registry")["username"] = regUser
		section(cfg, "registry")["password"] = regPass
	})
	e.stemcellAPIVersion, e.apiVersion = 1, 1
	var cid string
	e.call("create_vm", "agent-old", e.stemcell(), map[string]any{"compute_offering": "Small Instance"},
		map[string]any{"default": manualNet("10.1.1.83")}, []string{}, boshEnv).ok(t).decode(t, &cid)
	name := e.vm(cid).Name
	disk := e.createDisk(2048, map[string]any{"disk_offering": "Custom"}, cid)
	inRegistry := func() bool {
		code, raw := registryGet(t, backend, name)
		var s struct {
			Disks struct {
				Persistent map[string]any `json:"persistent"`
			} `json:"disks"`
		}
		if code != 200 || json.Unmarshal([]byte(raw), &s) != nil {
			t.Fatalf("registry %d %s", code, raw)
		}
		return s.Disks.Persistent[disk] != nil
	}
	attached := func() bool { return e.volume(disk).Virtualmachineid == cid }

	reg.failPuts.Store(100)
	e.call("attach_disk", cid, disk).failed(t, "CloudError", "so the disk was detached again")
	if attached() || inRegistry() {
		t.Fatalf("after a failed attach: attached %v, in the registry %v", attached(), inRegistry())
	}

	// One failed write is retried: the attach succeeds.
	reg.failPuts.Store(1)
	e.call("attach_disk", cid, disk).ok(t)
	if !attached() || !inRegistry() || reg.failPuts.Load() >= 0 {
		t.Fatalf("after an attach with one failed write: attached %v, in the registry %v", attached(), inRegistry())
	}

	reg.failPuts.Store(100)
	e.call("detach_disk", cid, disk).failed(t, "CloudError", "so the disk was attached again")
	if !attached() || !inRegistry() {
		t.Fatalf("after a failed detach: attached %v, in the registry %v", attached(), inRegistry())
	}
	reg.failPuts.Store(1)
	e.call("detach_disk", cid, disk).ok(t)
	if attached() || inRegistry() {
		t.Fatalf("after a detach with one failed write: attached %v, in the registry %v", attached(), inRegistry())
	}
	e.call("delete_vm", cid).ok(t)
	e.call("delete_disk", disk).ok(t)
}
