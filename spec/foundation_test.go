package spec

import (
	"encoding/pem"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/loopback"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

func TestInfoAnswersExactly(t *testing.T) {
	e := newEnv(t, nil)
	r := e.raw(`{"method":"info","arguments":[],"context":{"director_uuid":"d"}}`).ok(t)
	want := `{"result":{"api_version":2,"stemcell_formats":["cloudstack-vhdx","openstack-qcow2","openstack-raw","vsphere-ova","vsphere-ovf"]},"error":null,"log":""}`
	if r.Stdout != want {
		t.Fatalf("stdout\n%s\nwant\n%s", r.Stdout, want)
	}
	if n := total(e.calls()); n != 0 {
		t.Fatalf("info made %d CloudStack calls", n)
	}
}

func TestHasVMForAbsentVMsIsOneLookup(t *testing.T) {
	e := newEnv(t, nil)
	for _, cid := range []string{"0b8bd2a8-2c54-4f53-a84b-5a8bb2fc2d1c", "cpivm-0b8bd2a8-2c54-4f53-a84b-5a8bb2fc2d1c"} {
		e.resetCalls()
		var has bool
		e.call("has_vm", cid).ok(t).decode(t, &has)
		if has {
			t.Fatalf("has_vm(%s) = true for an empty zone", cid)
		}
		if calls := e.calls(); total(calls) != 1 || calls["listVirtualMachines"] != 1 {
			t.Fatalf("has_vm(%s) made %v", cid, calls)
		}
	}
}

func TestEveryLogLineCarriesTheRequestID(t *testing.T) {
	e := newEnv(t, nil)
	r := e.call("has_vm", "cpivm-x").ok(t)
	for _, line := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
		if !strings.HasPrefix(line, "[cpi-123456] ") {
			t.Fatalf("log line without the request id: %q", line)
		}
	}
}

func TestWrongCredentialsAreNamedAndNotRetried(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) { section(cfg, "cloudstack")["secret_access_key"] = "wrong-secret" })
	e.call("has_vm", "cpivm-x").failed(t, "CloudError", "refused the credentials")
	if calls := e.calls(); total(calls) != 1 {
		t.Fatalf("a 401 must not be retried: %v", calls)
	}
}

func TestTransientFailuresAreRetried(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.sim.Admin.AddFault(simulator.Fault{Command: "listVirtualMachines", Times: 2, Raw: true, ErrorCode: 503}); err != nil {
		t.Fatal(err)
	}
	e.call("has_vm", "cpivm-x").ok(t)
	if n := e.calls()["listVirtualMachines"]; n != 3 {
		t.Fatalf("%d listVirtualMachines calls; want 2 refused + 1 answered", n)
	}
}

func TestCloudStackErrorsComeBackWithTheirText(t *testing.T) {
	e := newEnv(t, nil)
	err := e.sim.Admin.AddFault(simulator.Fault{Command: "listVirtualMachines", ErrorCode: 530, CSErrorCode: 4250,
		ErrorText: "database is on fire"})
	if err != nil {
		t.Fatal(err)
	}
	e.call("has_vm", "cpivm-x").failed(t, "CloudError", "database is on fire")
	if n := e.calls()["listVirtualMachines"]; n != 1 {
		t.Fatalf("a CloudStack error body must not be retried: %d calls", n)
	}
}

func TestUnreachableEndpointIsNamedWithinTheTimeout(t *testing.T) {
	endpoint := "http://" + loopback.FreeAddr(t) + "/client/api"
	config := writeJSON(t, map[string]any{"cloudstack": map[string]any{"endpoint": endpoint, "api_key": apiKey,
		"secret_access_key": secretKey, "default_zone": zoneName, "request_timeout": "2s"}})
	start := time.Now()
	r := runCPI(t, config, `{"method":"has_vm","arguments":["cpivm-x"]}`)
	r.failed(t, "CloudError", endpoint)
	if !strings.Contains(r.Error.Message, "could not be reached") {
		t.Fatalf("message %q", r.Error.Message)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Fatalf("took %s with a 2s request_timeout", took)
	}
}

// A TLS front for the simulator: its certificate is trusted only when
// cloudstack.ca_cert says so.
func tlsFront(t *testing.T, e *env) (string, string) {
	t.Helper()
	target, _ := url.Parse(e.sim.Base)
	srv := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(srv.Close)
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	return srv.URL + "/client/api", ca
}

func TestUntrustedCertificateIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	endpoint, ca := tlsFront(t, e)
	cfg := map[string]any{"endpoint": endpoint, "api_key": apiKey, "secret_access_key": secretKey, "default_zone": zoneName}
	r := runCPI(t, writeJSON(t, map[string]any{"cloudstack": cfg}), `{"method":"has_vm","arguments":["cpivm-x"]}`)
	r.failed(t, "CloudError", "certificate")
	if total(e.calls()) != 0 {
		t.Fatal("a request got through an untrusted TLS connection")
	}
	cfg["ca_cert"] = ca
	runCPI(t, writeJSON(t, map[string]any{"cloudstack": cfg}), `{"method":"has_vm","arguments":["cpivm-x"]}`).ok(t)
}

func TestBadInputWritesNothingToCloudStack(t *testing.T) {
	e := newEnv(t, nil)
	cases := []struct{ name, stdin, typ, want string }{
		{"empty stdin", "", "CpiError", "valid JSON"},
		{"not JSON", "{{{", "CpiError", "valid JSON"},
		{"wrong shape", `{"method":["info"],"arguments":{}}`, "CpiError", "valid JSON"},
		{"unknown method", `{"method":"launch_rocket","arguments":[]}`, "NotImplemented", "launch_rocket"},
		{"too few arguments", `{"method":"delete_stemcell","arguments":[]}`, "CloudError", "argument"},
		{"wrong argument type", `{"method":"has_vm","arguments":[{"a":1}]}`, "CloudError", ""},
		{"empty cid", `{"method":"has_vm","arguments":[""]}`, "CloudError", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { e.raw(c.stdin).failed(t, c.typ, c.want) })
	}
	if calls := e.calls(); total(calls) != 0 {
		t.Fatalf("bad input reached CloudStack: %v", calls)
	}
}

func TestBadConfigIsACpiErrorNamingTheProblem(t *testing.T) {
	e := newEnv(t, nil)
	cases := map[string]struct{ config, want string }{
		"missing file": {"/nonexistent/cpi.json", "/nonexistent/cpi.json"},
		"unknown key": {writeJSON(t, map[string]any{"cloudstack": map[string]any{"endpoint": e.sim.URL, "api_key": apiKey,
			"secret_access_key": secretKey, "default_zone": zoneName, "verify_ssl": true}}), "unknown key cloudstack.verify_ssl"},
		"bad endpoint": {writeJSON(t, map[string]any{"cloudstack": map[string]any{"endpoint": "cloudstack:8080", "api_key": apiKey,
			"secret_access_key": secretKey, "default_zone": zoneName}}), "cloudstack.endpoint"},
		"missing zone": {writeJSON(t, map[string]any{"cloudstack": map[string]any{"endpoint": e.sim.URL, "api_key": apiKey,
			"secret_access_key": secretKey}}), "cloudstack.default_zone is required"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			runCPI(t, c.config, `{"method":"has_vm","arguments":["cpivm-x"]}`).failed(t, "CpiError", c.want)
		})
	}
	if calls := e.calls(); total(calls) != 0 {
		t.Fatalf("a bad config reached CloudStack: %v", calls)
	}
}
