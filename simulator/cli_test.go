package simulator_test

import (
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

func TestCLIListZones(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	out, errOut, err := simtesting.RunCLI(t, s, simtesting.Secret, "listZones")
	if err != nil || !strings.Contains(out, `"name": "Sandbox-simulator"`) {
		t.Fatalf("listZones: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	out, errOut, err = simtesting.RunCLI(t, s, simtesting.Secret, "--post", "listZones", "name=Sandbox-simulator")
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
	out, errOut, err := simtesting.RunCLI(t, s, "wrong-secret", "listZones")
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
	host := simtesting.FirstHost(t, s)["id"].(string)
	out, errOut, err := simtesting.RunCLI(t, s, simtesting.Secret, "prepareHostForMaintenance", "id="+host)
	if err != nil || !strings.Contains(out, `"resourcestate": "Maintenance"`) {
		t.Fatalf("prepareHostForMaintenance: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	simtesting.AddFault(t, s, kernel.Fault{Command: "cancelHostMaintenance", ErrorCode: 530, ErrorText: "simulated failure"})
	out, errOut, err = simtesting.RunCLI(t, s, simtesting.Secret, "cancelHostMaintenance", "id="+host)
	if err == nil || !strings.Contains(errOut, "Job failure") || !strings.Contains(out, "simulated failure") {
		t.Fatalf("failed job: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}
