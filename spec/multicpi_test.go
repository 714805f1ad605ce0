package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

// region is a second CloudStack as a director's cpi-config names it: the
// CPI's cpi.json points at another one (e's), and the director merges the
// cpi-config's properties flat into every call's context, beside
// director_uuid, request_id and vm (bosh-director ExternalCpi#invoke_cpi_method).
type region struct {
	e     *env
	props map[string]any
}

func (r region) call(method string, args ...any) response {
	r.e.t.Helper()
	var req map[string]any
	if err := json.Unmarshal([]byte(r.e.request(method, args...)), &req); err != nil {
		r.e.t.Fatal(err)
	}
	ctx := req["context"].(map[string]any)
	for k, v := range r.props {
		ctx[k] = v
	}
	b, err := json.Marshal(req)
	if err != nil {
		r.e.t.Fatal(err)
	}
	resp := r.e.raw(string(b))
	for _, k := range []string{"api_key", "secret_access_key"} {
		if s, _ := r.props[k].(string); s != "" && strings.Contains(resp.Stdout+resp.Stderr, s) {
			r.e.t.Fatalf("the context's %s reached the CPI's output:\n%s\n%s", k, resp.Stdout, resp.Stderr)
		}
	}
	return resp
}

// region2Zone is the second CloudStack's zone: its name differs from the
// first's, so a call that did not take default_zone from the context fails.
const region2Zone = "Region2-zone"

func (e *env) renameZone(name string) {
	e.t.Helper()
	c := e.client()
	zone, _, err := c.Zone.GetZoneByName(zoneName)
	if err != nil {
		e.t.Fatal(err)
	}
	p := c.Zone.NewUpdateZoneParams(zone.Id)
	p.SetName(name)
	if _, err := c.Zone.UpdateZone(p); err != nil {
		e.t.Fatal(err)
	}
}

// noCallsTo fails the test if the CPI sent anything to e's CloudStack since
// its last resetCalls.
func (e *env) noCallsTo(after string) {
	e.t.Helper()
	if calls := e.calls(); total(calls) != 0 {
		e.t.Fatalf("after %s, the CloudStack of cpi.json got calls: %v", after, calls)
	}
}

// TestCPIConfigPropertiesSendCallsToTheirCloudStack: with cpi.json pointing
// at the first CloudStack, and a second's endpoint and an account's keys
// there in the context, create_stemcell (the director uploads a stemcell
// per CPI), create_vm, create_disk, delete_disk, delete_vm and
// delete_stemcell all land in the second, as that account and in the
// context's default_zone, and the first gets no call at all.
func TestCPIConfigPropertiesSendCallsToTheirCloudStack(t *testing.T) {
	first, second := newEnv(t, nil), newEnv(t, nil)
	_, key, secret := second.asAccount("region2", 2, "DomainAdmin")
	net := second.ownNetwork(key, secret, "region2-net")
	second.renameZone(region2Zone)
	r := region{e: first, props: map[string]any{"endpoint": second.sim.URL, "api_key": key,
		"secret_access_key": secret, "default_zone": region2Zone, "job_timeout": "5m"}}
	first.resetCalls()

	var stemcell, vm, disk string
	r.call("create_stemcell", writeImage(t, bzippedVHD(t)), stemcellMF("cloudstack", "xen", "vhdx")).ok(t).decode(t, &stemcell)
	var result []json.RawMessage
	r.call("create_vm", "agent-region2", stemcell, smallVM, map[string]any{"default": net}, []string{}, boshEnv).
		ok(t).decode(t, &result)
	if len(result) != 2 || json.Unmarshal(result[0], &vm) != nil {
		t.Fatalf("create_vm answered %v", result)
	}
	r.call("create_disk", 3000, map[string]any{"disk_offering": "Custom"}, vm).ok(t).decode(t, &disk)
	first.noCallsTo("create_stemcell, create_vm and create_disk")

	if v := second.vm(vm); v.Account != "region2" || v.Templateid != stemcell || v.Zonename != region2Zone {
		t.Fatalf("the VM in the second CloudStack: account %q template %q zone %q", v.Account, v.Templateid, v.Zonename)
	}
	if d := second.volume(disk); d == nil || d.Account != "region2" {
		t.Fatalf("the disk in the second CloudStack: %+v", d)
	}
	first.resetCalls()
	var has bool
	r.call("has_disk", disk).ok(t).decode(t, &has)
	if !has {
		t.Fatal("has_disk with the context does not find the disk in the second CloudStack")
	}
	r.call("delete_disk", disk).ok(t)
	r.call("delete_vm", vm).ok(t)
	r.call("delete_stemcell", stemcell).ok(t)
	first.noCallsTo("has_disk, delete_disk, delete_vm and delete_stemcell")

	if second.volume(disk) != nil {
		t.Error("delete_disk left the disk in the second CloudStack")
	}
	if s := second.vmState(vm); s != "" && s != "Expunging" {
		t.Errorf("delete_vm left the VM %s in the second CloudStack", s)
	}
	if len(first.vms()) != 0 || len(first.ourTemplates()) != 0 {
		t.Errorf("the first CloudStack has VMs %d, templates %d", len(first.vms()), len(first.ourTemplates()))
	}
	// A call without the properties goes to cpi.json's CloudStack.
	first.resetCalls()
	first.call("has_vm", vm).ok(t).decode(t, &has)
	if has || first.calls()["listVirtualMachines"] == 0 {
		t.Errorf("has_vm without the properties: %v, calls to cpi.json's CloudStack %v", has, first.calls())
	}
}

// TestBadCPIConfigPropertyIsRefusedButInfoAnswers: a property cpi.json's
// cloudstack section has no key for fails the call before CloudStack hears
// of it, naming the property; info still answers, as a director falls back
// to CPI API v1 without a word when info fails.
func TestBadCPIConfigPropertyIsRefusedButInfoAnswers(t *testing.T) {
	e := newEnv(t, nil)
	bad := region{e: e, props: map[string]any{"endpoint": e.sim.URL, "api_key": apiKey, "secret_key": secretKey}}
	e.resetCalls()
	bad.call("create_vm", "agent-bad", "any-stemcell", smallVM, map[string]any{"default": manualNet("10.1.1.30")},
		[]string{}, boshEnv).failed(t, "CpiError", "unknown key secret_key")
	nested := region{e: e, props: map[string]any{"cloudstack": map[string]any{"endpoint": e.sim.URL}}}
	nested.call("create_disk", 1024, map[string]any{}, nil).failed(t, "CpiError", "not nested under cloudstack")
	e.noCallsTo("calls with bad properties")

	var info struct {
		APIVersion int      `json:"api_version"`
		Formats    []string `json:"stemcell_formats"`
	}
	r := bad.call("info").ok(t)
	r.decode(t, &info)
	if info.APIVersion != 2 || len(info.Formats) == 0 {
		t.Fatalf("info with a bad property answered %s", r.Result)
	}
	if !strings.Contains(r.Stderr, "unknown key secret_key") {
		t.Errorf("info does not log why it left the properties out:\n%s", r.Stderr)
	}
}
