package simulator_test

import (
	"bytes"
	"errors"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// cloudstackCLI is Debian's CloudStack CLI (package cs), an independent
// client: Python, signatureVersion=3 with "+0000" expiry times, GET by
// default.
const cloudstackCLI = "/usr/bin/cloudstack"

// runCLI runs the CLI against the simulator with a private HOME and working
// directory so no cloudstack.ini can interfere.
func runCLI(t *testing.T, s *simtesting.Sim, secret string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runCLIAs(t, s, simtesting.Key, secret, args...)
}

// runCLIAs is runCLI with another user's keys.
func runCLIAs(t *testing.T, s *simtesting.Sim, key, secret string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	if _, statErr := os.Stat(cloudstackCLI); statErr != nil {
		t.Fatal("Debian's cloudstack CLI is missing: apt-get install cs")
	}
	home := t.TempDir()
	cmd := exec.Command(cloudstackCLI, args...)
	cmd.Dir = home
	cmd.Env = append(envWithout("CLOUDSTACK_", "HOME="), "HOME="+home, "CLOUDSTACK_ENDPOINT="+s.API,
		"CLOUDSTACK_KEY="+key, "CLOUDSTACK_SECRET="+secret)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

func envWithout(prefixes ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		keep := true
		for _, p := range prefixes {
			keep = keep && !strings.HasPrefix(kv, p)
		}
		if keep {
			env = append(env, kv)
		}
	}
	return env
}

func TestCLIListZones(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	out, errOut, err := runCLI(t, s, simtesting.Secret, "listZones")
	if err != nil || !strings.Contains(out, `"name": "Sandbox-simulator"`) {
		t.Fatalf("listZones: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	out, errOut, err = runCLI(t, s, simtesting.Secret, "--post", "listZones", "name=Sandbox-simulator")
	if err != nil || !strings.Contains(out, `"count": 1`) {
		t.Fatalf("--post listZones: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	reqs, _ := s.Admin.Requests()
	if len(reqs) != 2 || reqs[0].Method != http.MethodGet || reqs[1].Method != http.MethodPost {
		t.Fatalf("requests = %+v", reqs)
	}
}

func TestCLIWrongSecret(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	out, errOut, err := runCLI(t, s, "wrong-secret", "listZones")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("exit: %v", err)
	}
	if !strings.Contains(errOut, "HTTP 401 response from CloudStack") ||
		!strings.Contains(out, "unable to verify user credentials and/or request signature") {
		t.Fatalf("stdout: %s\nstderr: %s", out, errOut)
	}
}

// TestCLIAsyncJob: the CLI polls queryAsyncJobResult and reads jobstatus,
// jobresultcode and jobresult.
func TestCLIAsyncJob(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	host := firstHost(t, s)["id"].(string)
	out, errOut, err := runCLI(t, s, simtesting.Secret, "prepareHostForMaintenance", "id="+host)
	if err != nil || !strings.Contains(out, `"resourcestate": "Maintenance"`) {
		t.Fatalf("prepareHostForMaintenance: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	addFault(t, s, kernel.Fault{Command: "cancelHostMaintenance", ErrorCode: 530, ErrorText: "simulated failure"})
	out, errOut, err = runCLI(t, s, simtesting.Secret, "cancelHostMaintenance", "id="+host)
	if err == nil || !strings.Contains(errOut, "Job failure") || !strings.Contains(out, "simulated failure") {
		t.Fatalf("failed job: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}
