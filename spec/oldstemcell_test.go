package spec

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// oldStemcellEnv is a simulator, a `serve` registry, and a CPI whose calls
// carry a stemcell api_version of 1, as for a stemcell older than 2.
func oldStemcellEnv(t *testing.T, simArgs ...string) (*env, string) {
	t.Helper()
	store := t.TempDir()
	base := startServe(t, registryConfig(store)).url("registry")
	e := newEnv(t, func(cfg map[string]any) {
		section(cfg, "registry")["endpoint"] = base
		section(cfg, "registry")["username"] = regUser
		section(cfg, "registry")["password"] = regPass
	}, simArgs...)
	e.stemcellAPIVersion, e.registryStore = 1, store
	return e, base
}

// TestOldStemcellVMUsesTheRegistry: user data carries only the registry
// envelope (no agent_id, so an old agent goes to the registry), the
// settings are in the registry under the VM's name, read back over HTTP
// with the credentials the envelope's URL carries, and delete_vm removes
// them.
func TestOldStemcellVMUsesTheRegistry(t *testing.T) {
	e, base := oldStemcellEnv(t)
	stemcell := e.stemcell()
	var cid string
	e.apiVersion = 1
	e.call("create_vm", "agent-old", stemcell, map[string]any{"compute_offering": "Small Instance"},
		map[string]any{"default": manualNet("10.1.1.80")}, []string{}, boshEnv).ok(t).decode(t, &cid)
	vm := e.vm(cid)

	raw := e.metadata(cid, "/latest/user-data")
	var envelope struct {
		AgentID  string `json:"agent_id"`
		Server   struct{ Name string }
		Registry struct{ Endpoint string }
		DNS      struct{ Nameserver []string }
	}
	if err := json.Unmarshal([]byte(raw), &envelope); err != nil {
		t.Fatalf("user data %q: %v", raw, err)
	}
	if envelope.AgentID != "" || envelope.Server.Name != vm.Name || !strings.Contains(envelope.Registry.Endpoint, regPass) ||
		len(envelope.DNS.Nameserver) == 0 {
		t.Fatalf("registry envelope %+v", envelope)
	}

	code, settings := registryGet(t, base, vm.Name)
	var s settingsDoc
	if code != 200 || json.Unmarshal([]byte(settings), &s) != nil || s.AgentID != "agent-old" ||
		s.Networks["default"].MAC != vm.Nic[0].Macaddress {
		t.Fatalf("registry settings %d %s", code, settings)
	}
	// An old agent resolves the endpoint it was given, credentials and all.
	resp, err := http.Get(envelope.Registry.Endpoint + "/instances/" + vm.Name + "/settings")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the agent's GET: %v %v", resp, err)
	}
	resp.Body.Close()

	e.call("delete_vm", cid).ok(t)
	if code, _ := registryGet(t, base, vm.Name); code != 404 {
		t.Fatalf("delete_vm left the registry settings (%d)", code)
	}
}

func TestOldStemcellWithoutARegistryIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	e.stemcellAPIVersion = 1
	e.call("create_vm", "agent-old", stemcell, map[string]any{"compute_offering": "Small Instance"},
		map[string]any{"default": manualNet("10.1.1.81")}, []string{}, boshEnv).failed(t, "VMCreationFailed", "registry.endpoint")
	if vms, vols, ips := e.live(); vms+vols+ips != 0 {
		t.Fatal("a refused create_vm left something")
	}
}

// TestOldStemcellDisksGoThroughTheRegistry: for an old stemcell, attach_disk
// and detach_disk rewrite disks.persistent in the registry, which the agent
// reads over HTTP.
func TestOldStemcellDisksGoThroughTheRegistry(t *testing.T) {
	e, base := oldStemcellEnv(t)
	stemcell := e.stemcell()
	e.apiVersion = 1
	var cid string
	e.call("create_vm", "agent-old", stemcell, map[string]any{"compute_offering": "Small Instance"},
		map[string]any{"default": manualNet("10.1.1.82")}, []string{}, boshEnv).ok(t).decode(t, &cid)
	name := e.vm(cid).Name
	var disk string
	e.call("create_disk", 2048, map[string]any{"disk_offering": "Custom"}, cid).ok(t).decode(t, &disk)

	r := e.call("attach_disk", cid, disk).ok(t)
	if string(r.Result) != "null" {
		t.Fatalf("API v1 attach_disk answered %s", r.Result)
	}
	persistent := func() map[string]map[string]any {
		code, raw := registryGet(t, base, name)
		var s struct {
			Disks struct {
				Persistent map[string]map[string]any `json:"persistent"`
			} `json:"disks"`
		}
		if code != 200 || json.Unmarshal([]byte(raw), &s) != nil {
			t.Fatalf("registry %d %s", code, raw)
		}
		return s.Disks.Persistent
	}
	hint := persistent()[disk]
	if hint == nil || hint["path"] != "/dev/xvdb" || hint["volume_id"] != "1" {
		t.Fatalf("registry disks after attach: %v", persistent())
	}
	e.call("detach_disk", cid, disk).ok(t)
	if p := persistent(); len(p) != 0 {
		t.Fatalf("registry disks after detach: %v", p)
	}
	e.call("delete_vm", cid).ok(t)
	if code, _ := registryGet(t, base, name); code != 404 {
		t.Fatal("delete_vm left the registry settings")
	}
	e.call("delete_disk", disk).ok(t)
}
