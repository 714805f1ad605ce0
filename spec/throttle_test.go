package spec

import (
	"strconv"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// throttle makes the simulator refuse command's next n requests as
// CloudStack's API throttle does, before the command runs: ApiServer's
// ServerApiException(API_LIMIT_EXCEED), HTTP 429, cserrorcode 9999, with
// ApiRateLimitServiceImpl's text.
func (e *env) throttle(command string, n, hintMS int) {
	e.t.Helper()
	err := e.sim.Admin.AddFault(simulator.Fault{Command: command, Times: n, Stage: simulator.StageRequest,
		ErrorCode: 429, CSErrorCode: 9999, ErrorText: "The given user has reached his/her account api limit, " +
			"please retry after [" + strconv.Itoa(hintMS) + "] ms."})
	if err != nil {
		e.t.Fatal(err)
	}
}

// TestThrottledCreateDiskWaitsAndCreatesOneDisk: create_disk's createVolume
// and its job's polls, refused by the throttle, are waited out with no
// transient retry to spare (max_retries 0), the waits logged, and one disk
// made.
func TestThrottledCreateDiskWaitsAndCreatesOneDisk(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) { section(cfg, "cloudstack")["max_retries"] = 0 })
	e.throttle("createVolume", 2, 40)
	e.throttle("queryAsyncJobResult", 2, 40)
	r := e.call("create_disk", 1024, map[string]any{"disk_offering": "Custom"}, nil).ok(t)
	if n := e.calls()["createVolume"]; n != 3 {
		t.Errorf("%d createVolume requests, want 2 refused and 1 taken", n)
	}
	if disks := e.dataDisks(); len(disks) != 1 {
		t.Errorf("%d data disks, want 1", len(disks))
	}
	for _, line := range []string{
		"createVolume: refused by CloudStack's API throttle (refusal 1; it asks to retry after 40ms); waiting",
		"createVolume: taken by CloudStack after 2 refusals of its API throttle; waited",
		"queryAsyncJobResult: refused by CloudStack's API throttle (refusal 2; it asks to retry after 40ms)",
	} {
		if !strings.Contains(r.Stderr, line) {
			t.Errorf("the log lacks %q:\n%s", line, r.Stderr)
		}
	}
}

// TestDoctorOnAThrottledCloud: listApis refused every time (a role allowing
// more commands than api.throttling.max) and listZones refused twice:
// doctor waits out what it can, checks the keys with listZones, says the
// commands could not be listed and why, and passes the rest.
func TestDoctorOnAThrottledCloud(t *testing.T) {
	e := newEnv(t, withDefaults)
	e.throttle("listApis", 100, 40)
	e.throttle("listZones", 2, 40)
	r := e.doctorJSON("-cloud-config", writeFile(t, "cloud-config.yml", goodCloudConfig))
	r.allPass(t)
	for _, res := range r.results {
		if res.Check == "commands" && (!strings.Contains(res.Result, "could not check: CloudStack's API throttle") ||
			!strings.Contains(res.Fix, "root admin")) {
			t.Errorf("commands %+v", res)
		}
	}
	if n := e.calls()["listApis"]; n != 2 {
		t.Errorf("listApis sent %d times: it waits once, as each try counts once per allowed command", n)
	}
	if !strings.Contains(r.stderr, "listZones: taken by CloudStack after 2 refusals of its API throttle") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	e.readOnly()
}
