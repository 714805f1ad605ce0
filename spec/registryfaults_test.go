package spec

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/loopback"
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

// wrongRegPass is a registry password cpi.json has wrong.
const wrongRegPass = "wrong-registry-pw-77e2"

// TestOldStemcellCreateVMWithoutItsRegistryLeavesNothing (issue 24.2):
// create_vm of a stemcell older than api_version 2 whose registry refuses
// the settings (a wrong password) or is down removes the VM it deployed,
// with its volumes, though it never wrote settings to delete; its error
// names the registry and what it said, and no password; and once the
// registry answers, the director's next create_vm for the same agent
// succeeds.
func TestOldStemcellCreateVMWithoutItsRegistryLeavesNothing(t *testing.T) {
	for _, c := range []struct {
		name string
		// setup gives the CPI whose registry fails, the registry's URL,
		// what the error must say of it, and mend, which makes the
		// registry answer and gives the CPI that reaches it.
		setup func(t *testing.T) (broken *env, base string, says string, mend func() *env)
	}{
		{"wrong password", func(t *testing.T) (*env, string, string, func() *env) {
			e, base := oldStemcellEnv(t)
			bad := e.withConfig(func(cfg map[string]any) { section(cfg, "registry")["password"] = wrongRegPass })
			return bad, base, `401 Unauthorized {"status":"access_denied"}`, func() *env { return e }
		}},
		{"registry down", func(t *testing.T) (*env, string, string, func() *env) {
			addr, store := loopback.FreeAddr(t), t.TempDir()
			e := newEnv(t, func(cfg map[string]any) {
				r := section(cfg, "registry")
				r["endpoint"], r["username"], r["password"] = "http://"+addr, regUser, regPass
			})
			e.stemcellAPIVersion, e.registryStore = 1, store
			return e, "http://" + addr, "connection refused", func() *env {
				cfg := registryConfig(store)
				section(cfg, "registry")["listen"] = addr
				startServe(t, cfg)
				return e
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			broken, base, says, mend := c.setup(t)
			d := newDirector(broken)
			d.holds.Stemcells = []string{broken.stemcell()}
			args := []any{"agent-registry", d.holds.Stemcells[0], smallVM,
				map[string]any{"default": manualNet("10.1.1.84")}, []string{}, boshEnv}
			r := broken.call("create_vm", args...)
			r.failed(t, "VMCreationFailed", "registry at "+base)
			t.Logf("create_vm answered: %s", r.Error.Message)
			for _, want := range []string{says, "removed what this create_vm had made: VM"} {
				if !strings.Contains(r.Error.Message, want) {
					t.Errorf("the error does not say %q: %s", want, r.Error.Message)
				}
			}
			if strings.Contains(r.Stdout+r.Stderr, wrongRegPass) {
				t.Errorf("the registry password reached the CPI's output:\n%s\n%s", r.Stdout, r.Stderr)
			}
			d.check(c.name + ": the failed create_vm")

			good := mend()
			vm := cid(good.call("create_vm", args...).ok(t))
			d.holds.VMs = append(d.holds.VMs, vm)
			if code, _ := registryGet(t, base, good.vm(vm).Name); code != 200 {
				t.Errorf("the retried create_vm's settings are not in the registry (%d)", code)
			}
			d.check(c.name + ": the director's next create_vm for the agent")
			good.call("delete_vm", vm).ok(t)
			d.holds.VMs = drop(d.holds.VMs, vm)
			d.check(c.name + ": delete_vm")
		})
	}
}
