package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

var listening = regexp.MustCompile(`^cloudstack-simulator listening on (http://127\.0\.0\.1:\d+/client/api)$`)

func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cloudstack-simulator")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// start runs the binary and returns the API URL it announces.
func start(t *testing.T, bin string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
	}()
	select {
	case line := <-lines:
		m := listening.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("first line %q", line)
		}
		return cmd, m[1]
	case <-time.After(30 * time.Second):
		t.Fatal("no listening line")
	}
	return nil, ""
}

func TestBinaryServesAndSavesStateOnSIGTERM(t *testing.T) {
	bin := build(t)
	state := filepath.Join(t.TempDir(), "state.json")
	cmd, url := start(t, bin, "-listen", "127.0.0.1:0", "-admin-keys", "key:secret", "-state", state,
		"-hypervisor", "kvm", "-job-latency", "10ms", "-quiet")
	cs := cloudstack.NewClient(url, "key", "secret", false)
	zones, err := cs.Zone.ListZones(cs.Zone.NewListZonesParams())
	if err != nil || zones.Count != 1 || zones.Zones[0].Name != "Sandbox-simulator" {
		t.Fatalf("listZones = %+v, %v", zones, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	b, err := os.ReadFile(state)
	if err != nil || !strings.Contains(string(b), zones.Zones[0].Id) || !strings.Contains(string(b), `"KVM"`) {
		t.Fatalf("state file: %v", err)
	}

	// The zone and its hypervisor survive the restart.
	_, url = start(t, bin, "-listen", "127.0.0.1:0", "-admin-keys", "key:secret", "-state", state, "-quiet")
	cs = cloudstack.NewClient(url, "key", "secret", false)
	again, err := cs.Zone.ListZones(&cloudstack.ListZonesParams{})
	if err != nil || again.Zones[0].Id != zones.Zones[0].Id {
		t.Fatalf("after restart: %+v, %v", again, err)
	}
	hv, err := cs.Hypervisor.ListHypervisors(&cloudstack.ListHypervisorsParams{})
	if err != nil || hv.Hypervisors[0].Name != "KVM" {
		t.Fatalf("hypervisor after restart: %+v, %v", hv, err)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-hypervisor", "Hyper-V"}, {"-admin-keys", "nocolon"}, {"-listen", "256.0.0.1:1"},
		{"-job-latency-for", "deployvirtualmachine=1s"}, {"-job-latency-for", "deployVirtualMachine"},
		{"-job-latency-for", "deployVirtualMachine=soon"}, {"-api-throttling-interval", "-1"},
		{"-cloudstack-version", "4.21"}, {"-cloudstack-version", "4.20", "-job-latency-for", "listExtensions=1s"}} {
		if err := run(append(args, "-quiet")); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestExtraZoneFlags(t *testing.T) {
	bin := build(t)
	_, url := start(t, bin, "-listen", "127.0.0.1:0", "-admin-keys", "key:secret", "-quiet",
		"-extra-zone", "Sandbox-simulator-2", "-extra-zone", "Sandbox-simulator-3", "-template-latency", "0s")
	cs := cloudstack.NewClient(url, "key", "secret", false)
	zones, err := cs.Zone.ListZones(cs.Zone.NewListZonesParams())
	if err != nil || zones.Count != 3 || zones.Zones[2].Name != "Sandbox-simulator-3" {
		t.Fatalf("listZones = %+v, %v", zones, err)
	}
	templates, err := cs.Template.ListTemplates(cs.Template.NewListTemplatesParams("featured"))
	if err != nil || templates.Count != 3 {
		t.Fatalf("builtin template rows = %+v, %v", templates, err)
	}
	if err := run([]string{"-extra-zone", " ", "-quiet"}); err == nil {
		t.Error("an empty -extra-zone was accepted")
	}
}

// TestEmptyFlag: -empty starts with the admin (keys from -admin-keys) and
// no zone; a state saved later keeps whatever was deployed.
func TestEmptyFlag(t *testing.T) {
	bin := build(t)
	_, url := start(t, bin, "-listen", "127.0.0.1:0", "-admin-keys", "key:secret", "-empty", "-quiet")
	cs := cloudstack.NewClient(url, "key", "secret", false)
	zones, err := cs.Zone.ListZones(cs.Zone.NewListZonesParams())
	if err != nil || zones.Count != 0 {
		t.Fatalf("listZones = %+v, %v", zones, err)
	}
	offerings, err := cs.ServiceOffering.ListServiceOfferings(cs.ServiceOffering.NewListServiceOfferingsParams())
	if err != nil || offerings.Count != 0 {
		t.Fatalf("listServiceOfferings = %+v, %v", offerings, err)
	}
}

// TestThrottlingAndJobLatencyFlags: the -api-throttling-* flags set the
// settings listCapabilities reports; -job-latency-for gives a command's jobs
// their own latency.
func TestThrottlingAndJobLatencyFlags(t *testing.T) {
	bin := build(t)
	_, url := start(t, bin, "-listen", "127.0.0.1:0", "-admin-keys", "key:secret", "-quiet", "-job-latency", "0s",
		"-api-throttling-enabled", "-api-throttling-interval", "9", "-api-throttling-max", "7",
		"-job-latency-for", "prepareHostForMaintenance=1h,createTags=0s")
	cs := cloudstack.NewClient(url, "key", "secret", false)
	c, err := cs.Configuration.ListCapabilities(cs.Configuration.NewListCapabilitiesParams())
	if err != nil || c.Capabilities.Apilimitinterval != 9 || c.Capabilities.Apilimitmax != 7 {
		t.Fatalf("listCapabilities = %+v, %v", c, err)
	}
	hosts, err := cs.Host.ListHosts(cs.Host.NewListHostsParams())
	if err != nil {
		t.Fatal(err)
	}
	r, err := cs.Host.PrepareHostForMaintenance(cs.Host.NewPrepareHostForMaintenanceParams(hosts.Hosts[0].Id))
	if err != nil {
		t.Fatal(err)
	}
	job, err := cs.Asyncjob.QueryAsyncJobResult(cs.Asyncjob.NewQueryAsyncJobResultParams(r.JobID))
	if err != nil || job.Jobstatus != 0 {
		t.Fatalf("maintenance job with an hour's latency = %+v, %v", job, err)
	}
}

// TestCloudStackVersionFlag: -cloudstack-version 4.20 serves 4.20's API,
// which listCapabilities names (the default is 4.22: the other tests).
func TestCloudStackVersionFlag(t *testing.T) {
	bin := build(t)
	_, url := start(t, bin, "-listen", "127.0.0.1:0", "-admin-keys", "key:secret", "-quiet", "-cloudstack-version", "4.20")
	cs := cloudstack.NewClient(url, "key", "secret", false)
	c, err := cs.Configuration.ListCapabilities(cs.Configuration.NewListCapabilitiesParams())
	if err != nil || c.Capabilities.Cloudstackversion != "4.20.1.0" {
		t.Fatalf("listCapabilities = %+v, %v", c, err)
	}
}
