package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// doctorResult is one row of `cloudstack-cpi doctor -json`.
type doctorResult struct {
	Check  string `json:"check"`
	OK     *bool  `json:"ok"`
	Result string `json:"result"`
	Fix    string `json:"fix"`
}

// doctorRun is what one doctor run printed and its exit code.
type doctorRun struct {
	results []doctorResult
	code    int
	stdout  string
	stderr  string
}

// runDoctor runs the built binary's doctor with args after -configPath.
func runDoctor(t *testing.T, config string, args ...string) doctorRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cpiBin, append([]string{"doctor", "-configPath", config}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	r := doctorRun{stdout: stdout.String(), stderr: stderr.String()}
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// doctorJSON runs doctor -json and reads its array, every row complete.
func (e *env) doctorJSON(args ...string) doctorRun {
	e.t.Helper()
	t := e.t.(*testing.T)
	r := runDoctor(t, e.config, append([]string{"-json"}, args...)...)
	if err := json.Unmarshal([]byte(r.stdout), &r.results); err != nil || len(r.results) == 0 {
		t.Fatalf("doctor -json printed %q (%v)\nstderr:\n%s", r.stdout, err, r.stderr)
	}
	for _, res := range r.results {
		if res.Check == "" || res.OK == nil || res.Result == "" || (!*res.OK && res.Fix == "") {
			t.Fatalf("incomplete row %+v in %s", res, r.stdout)
		}
	}
	return r
}

// failed is the rows of the check that failed; none fails the test.
func (r doctorRun) failed(t *testing.T, check string) []doctorResult {
	t.Helper()
	var rows []doctorResult
	for _, res := range r.results {
		if res.Check == check && !*res.OK {
			rows = append(rows, res)
		}
	}
	if len(rows) == 0 || r.code != 1 {
		t.Fatalf("want check %q to fail and exit 1; exit %d:\n%s\nstderr:\n%s", check, r.code, r.stdout, r.stderr)
	}
	return rows
}

// fixSays checks the failing check's fix says each of want.
func (r doctorRun) fixSays(t *testing.T, check string, want ...string) doctorResult {
	t.Helper()
	row := r.failed(t, check)[0]
	for _, w := range want {
		if !strings.Contains(row.Fix, w) && !strings.Contains(row.Result, w) {
			t.Fatalf("check %q: want %q in its result or fix, got %+v", check, w, row)
		}
	}
	return row
}

// allPass checks doctor exited 0 with every row ok.
func (r doctorRun) allPass(t *testing.T) {
	t.Helper()
	for _, res := range r.results {
		if !*res.OK {
			t.Errorf("check %q failed: %s (fix: %s)", res.Check, res.Result, res.Fix)
		}
	}
	if r.code != 0 {
		t.Fatalf("doctor exited %d with every check passing:\n%s", r.code, r.stdout)
	}
}

// readOnly checks the simulator was asked nothing but list commands.
func (e *env) readOnly() {
	e.t.Helper()
	for cmd := range e.calls() {
		if !strings.HasPrefix(cmd, "list") {
			e.t.Fatalf("doctor sent %s: it must only read", cmd)
		}
	}
}

// goodCloudConfig names the zone's guest network, offerings of both kinds
// and the key pair hack/zone deploys.
const goodCloudConfig = `
azs:
- name: z1
  cloud_properties: {zone: Sandbox-simulator}
networks:
- name: default
  type: manual
  subnets:
  - range: 10.1.1.0/24
    gateway: 10.1.1.1
    az: z1
    cloud_properties: {name: guest-network}
vm_types:
- name: small
  cloud_properties: {compute_offering: Small Instance, keypair: bosh}
- name: sized
  cloud_properties: {cpu: 2, ram: 2048, ephemeral_disk_size: 4096}
disk_types:
- name: fixed
  cloud_properties: {disk_offering: Small}
- name: sized
  disk_size: 3000
`

func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func withDefaults(cfg map[string]any) {
	cs := section(cfg, "cloudstack")
	cs["default_compute_offering"] = "Small Instance"
	cs["default_key_pair"] = "bosh"
}

// TestDoctorPassesAGoodEnvironment: every check passes, in order, and
// doctor asks CloudStack nothing but lookups; without -json it prints one
// line per check.
func TestDoctorPassesAGoodEnvironment(t *testing.T) {
	e := newEnv(t, withDefaults)
	e.resetCalls()
	r := e.doctorJSON("-cloud-config", writeFile(t, "cloud-config.yml", goodCloudConfig))
	r.allPass(t)
	var order []string
	for _, res := range r.results {
		if len(order) == 0 || order[len(order)-1] != res.Check {
			order = append(order, res.Check)
		}
	}
	want := []string{"endpoint", "keys", "version", "commands", "expunge", "zone", "offerings", "key pairs", "networks",
		"webdav", "uploads", "job polling"}
	if !slices.Equal(order, want) {
		t.Fatalf("checks ran in the order %q, want %q", order, want)
	}
	e.readOnly()
	for _, secret := range []string{apiKey, secretKey} {
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Fatal("doctor printed the keys")
		}
	}

	plain := runDoctor(t, e.config)
	lines := strings.Split(strings.TrimSpace(plain.stdout), "\n")
	if plain.code != 0 || len(lines) != len(want) || !strings.HasPrefix(lines[0], "endpoint\tok\t") {
		t.Fatalf("plain output (exit %d):\n%s", plain.code, plain.stdout)
	}
}

// TestDoctorReportsTheVersion: on CloudStack 4.20 every check passes and
// the version check names 4.20's version; a 4.22 that hides its version
// (expose.cloudstack.version.api.list.capabilities false) is not failed
// over it: doctor says it could not check.
func TestDoctorReportsTheVersion(t *testing.T) {
	e := newEnv(t, withDefaults, "-cloudstack-version", "4.20")
	r := e.doctorJSON("-cloud-config", writeFile(t, "cloud-config.yml", goodCloudConfig))
	r.allPass(t)
	if row := rowOf(t, r, "version"); row.Result != "CloudStack 4.20.1.0" {
		t.Fatalf("version row on 4.20: %+v", row)
	}

	e = newEnv(t, withDefaults)
	p := e.client().Configuration.NewUpdateConfigurationParams("expose.cloudstack.version.api.list.capabilities")
	p.SetValue("false")
	if _, err := e.client().Configuration.UpdateConfiguration(p); err != nil {
		t.Fatal(err)
	}
	r = e.doctorJSON()
	r.allPass(t)
	if row := rowOf(t, r, "version"); !strings.HasPrefix(row.Result, "could not check: CloudStack hides its version") ||
		!strings.Contains(row.Fix, "4.19 or later") {
		t.Fatalf("version row when hidden: %+v", row)
	}
}

func rowOf(t *testing.T, r doctorRun, check string) doctorResult {
	t.Helper()
	for _, res := range r.results {
		if res.Check == check {
			return res
		}
	}
	t.Fatalf("no %q row in %s", check, r.stdout)
	return doctorResult{}
}

// TestDoctorFailsEachCheckWithItsFix breaks one thing per case.
func TestDoctorFailsEachCheckWithItsFix(t *testing.T) {
	t.Run("wrong zone", func(t *testing.T) {
		e := newEnv(t, func(cfg map[string]any) { section(cfg, "cloudstack")["default_zone"] = "Sandbox-nowhere" })
		r := e.doctorJSON("-cloud-config", writeFile(t, "cloud-config.yml", goodCloudConfig))
		r.fixSays(t, "zone", "cloudstack.default_zone", `"Sandbox-simulator"`)
		r.fixSays(t, "networks", "not checked") // networks need the default zone
	})
	t.Run("missing offering", func(t *testing.T) {
		e := newEnv(t, func(cfg map[string]any) { section(cfg, "cloudstack")["default_compute_offering"] = "Huge Instance" })
		e.doctorJSON().fixSays(t, "offerings", "cloudstack.default_compute_offering", `"Huge Instance"`)
	})
	t.Run("refused keys", func(t *testing.T) {
		e := newEnv(t, func(cfg map[string]any) { section(cfg, "cloudstack")["secret_access_key"] = "not-the-secret" })
		r := e.doctorJSON()
		r.fixSays(t, "keys", "cloudstack.secret_access_key")
		for _, check := range []string{"version", "commands", "zone", "job polling"} {
			r.fixSays(t, check, "not checked")
		}
	})
	t.Run("no expunge permission", func(t *testing.T) {
		u, _, _ := newEnv(t, nil).asAccount("boshuser", 0, "User")
		r := u.doctorJSON()
		r.fixSays(t, "expunge", "allow.user.expunge.recover.vm", "cloudstack.expunge_vm")
		if row := rowOf(t, r, "commands"); !*row.OK {
			t.Fatalf("a User's role may call every command the CPI sends: %+v", row)
		}
	})
	t.Run("key pair of another account", func(t *testing.T) {
		e := newEnv(t, nil)
		u, key, secret := e.asAccount("boshkeys", 0, "User")
		u.config = writeJSON(t, map[string]any{"cloudstack": map[string]any{"endpoint": e.sim.URL, "api_key": key,
			"secret_access_key": secret, "default_zone": zoneName, "default_key_pair": "bosh", "expunge_vm": false}})
		u.doctorJSON().fixSays(t, "key pairs", `"bosh"`, "registerSSHKeyPair")
	})
	t.Run("TLS untrusted", func(t *testing.T) {
		e := newEnv(t, nil)
		endpoint, ca := tlsFront(t, e)
		cs := map[string]any{"endpoint": endpoint, "api_key": apiKey, "secret_access_key": secretKey,
			"default_zone": zoneName}
		e.config = writeJSON(t, map[string]any{"cloudstack": cs})
		r := e.doctorJSON()
		r.fixSays(t, "endpoint", "cloudstack.ca_cert")
		if total(e.calls()) != 0 {
			t.Fatal("a request got through an untrusted TLS connection")
		}
		cs["ca_cert"] = ca
		e.config = writeJSON(t, map[string]any{"cloudstack": cs})
		r = e.doctorJSON()
		r.allPass(t)
		if !strings.Contains(r.results[0].Result, "TLS verified") {
			t.Fatalf("endpoint: %+v", r.results[0])
		}
	})
	t.Run("slow API", func(t *testing.T) {
		e := newEnv(t, nil) // polls after 50ms, at most every 200ms
		if err := e.sim.Admin.AddFault(simulator.Fault{Command: "listZones", Times: 100, Delay: 300 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		e.doctorJSON().fixSays(t, "job polling", "cloudstack.job_poll_max_interval")
	})
	t.Run("network not in the zone", testDoctorNetworkNotInZone)
	t.Run("network without user data", testDoctorNetworkWithoutUserData)
	t.Run("webdav URL not allowed", testDoctorWebDAVNotAllowed)
	t.Run("disabled zone", func(t *testing.T) {
		e := newEnv(t, nil)
		c := e.client()
		z, _, err := c.Zone.GetZoneByName(zoneName)
		if err != nil {
			t.Fatal(err)
		}
		p := c.Zone.NewUpdateZoneParams(z.Id)
		p.SetAllocationstate("Disabled")
		if _, err := c.Zone.UpdateZone(p); err != nil {
			t.Fatal(err)
		}
		e.doctorJSON().fixSays(t, "zone", "Disabled", "allocationstate=Enabled")
	})
}

// testDoctorNetworkNotInZone: a cloud-config network named in the default
// zone's AZ but living in another zone fails; in its own zone's AZ it
// passes.
func testDoctorNetworkNotInZone(t *testing.T) {
	e := newEnv(t, nil, "-extra-zone", "Sandbox-simulator-2")
	c := e.client()
	zone, _, err := c.Zone.GetZoneByName("Sandbox-simulator-2")
	if err != nil {
		t.Fatal(err)
	}
	offering, _, err := c.NetworkOffering.GetNetworkOfferingByName("DefaultIsolatedNetworkOfferingWithSourceNatService")
	if err != nil {
		t.Fatal(err)
	}
	p := c.Network.NewCreateNetworkParams("zone2-net", offering.Id, zone.Id)
	p.SetDisplaytext("zone2-net")
	if _, err := c.Network.CreateNetwork(p); err != nil {
		t.Fatal(err)
	}
	cloudConfig := func(az string) string {
		return writeFile(t, "cloud-config.yml", `
azs:
- {name: z1, cloud_properties: {zone: Sandbox-simulator}}
- {name: z2, cloud_properties: {zone: Sandbox-simulator-2}}
networks:
- name: other
  type: manual
  subnets:
  - {range: 10.1.1.0/24, gateway: 10.1.1.1, az: `+az+`, cloud_properties: {name: zone2-net}}
`)
	}
	e.resetCalls()
	e.doctorJSON("-cloud-config", cloudConfig("z1")).fixSays(t, "networks", `"zone2-net"`, `zone "Sandbox-simulator"`)
	e.doctorJSON("-cloud-config", cloudConfig("z2")).allPass(t)
	e.readOnly()
}

// testDoctorWebDAVNotAllowed: a private webdav.public_url host passes only
// once secstorage.allowed.internal.sites covers it; an account that may
// not read the setting is told it could not be checked.
func testDoctorWebDAVNotAllowed(t *testing.T) {
	webdav := func(cfg map[string]any) {
		section(cfg, "stemcell")["publish"] = "webdav"
		section(cfg, "webdav")["listen"] = "0.0.0.0:8443"
		section(cfg, "webdav")["public_url"] = "http://10.20.30.40:8443"
	}
	e := newEnv(t, webdav)
	e.doctorJSON().fixSays(t, "webdav", "10.20.30.40", "secstorage.allowed.internal.sites")

	c := e.client()
	p := c.Configuration.NewUpdateConfigurationParams("secstorage.allowed.internal.sites")
	p.SetValue("10.20.30.0/24")
	if _, err := c.Configuration.UpdateConfiguration(p); err != nil {
		t.Fatal(err)
	}
	e.doctorJSON().allPass(t)

	u, key, secret := e.asAccount("boshwebdav", 0, "User")
	cfg := map[string]any{"cloudstack": map[string]any{"endpoint": e.sim.URL, "api_key": key,
		"secret_access_key": secret, "default_zone": zoneName, "expunge_vm": false}}
	webdav(cfg)
	u.config = writeJSON(t, cfg)
	r := u.doctorJSON()
	r.allPass(t)
	for _, res := range r.results {
		if res.Check == "webdav" && (!strings.Contains(res.Result, "could not check") || res.Fix == "") {
			t.Fatalf("a User cannot read the setting: %+v", res)
		}
	}
}

// TestTheCPISendsOnlyTheCommandsDoctorChecks: after a lifecycle, every
// command in the simulator's request log is on cloudstack.Commands, the
// list doctor checks the role against.
func TestTheCPISendsOnlyTheCommandsDoctorChecks(t *testing.T) {
	e, key, secret := newEnv(t, nil).asAccount("boshcmds", 2, "DomainAdmin")
	_, stemcell := e.lifecycle(key, secret)
	e.call("delete_stemcell", stemcell).ok(t)
	calls := e.calls()
	for cmd := range calls {
		// "upload" is the simulator's log of the POST to the secondary
		// storage VM, not an API command.
		if cmd != "upload" && !slices.Contains(slices.Concat(cloudstack.Commands, cloudstack.OptionalCommands), cmd) {
			t.Errorf("the CPI sent %s, which cloudstack.Commands does not list", cmd)
		}
	}
	if len(calls) < 20 {
		t.Fatalf("the lifecycle sent only %v", calls)
	}
}

// testDoctorNetworkWithoutUserData: a network whose offering has no
// UserData service fails on a XenServer zone, whose stemcells' agents read
// their settings from the metadata service.
func testDoctorNetworkWithoutUserData(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client()
	zone, _, err := c.Zone.GetZoneByName(zoneName)
	if err != nil {
		t.Fatal(err)
	}
	op := c.NetworkOffering.NewCreateNetworkOfferingParams("No user data", "Isolated", "NoUserData", "Guest")
	op.SetSupportedservices([]string{"Dhcp", "Dns", "SourceNat"})
	op.SetServiceproviderlist(map[string]string{"Dhcp": "VirtualRouter", "Dns": "VirtualRouter", "SourceNat": "VirtualRouter"})
	offering, err := c.NetworkOffering.CreateNetworkOffering(op)
	if err != nil {
		t.Fatal(err)
	}
	up := c.NetworkOffering.NewUpdateNetworkOfferingParams()
	up.SetId(offering.Id)
	up.SetState("Enabled")
	if _, err := c.NetworkOffering.UpdateNetworkOffering(up); err != nil {
		t.Fatal(err)
	}
	np := c.Network.NewCreateNetworkParams("no-userdata", offering.Id, zone.Id)
	np.SetDisplaytext("no-userdata")
	np.SetGateway("10.1.2.1")
	np.SetNetmask("255.255.255.0")
	if _, err := c.Network.CreateNetwork(np); err != nil {
		t.Fatal(err)
	}
	cc := writeFile(t, "cloud-config.yml", `
networks:
- name: default
  type: manual
  subnets:
  - {range: 10.1.2.0/24, gateway: 10.1.2.1, cloud_properties: {name: no-userdata}}
`)
	e.doctorJSON("-cloud-config", cc).fixSays(t, "networks", "no UserData service", "UserData")
}
