package manifests_test

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinCPIDoctorUsesTheJobsConfig renders the director's job and runs its
// bin/cpi doctor as an operator does on the director VM: doctor reads the
// job's cpi.json (its endpoint, moved to a loopback port nothing listens
// on, is the one the endpoint check reports), gets the operator's flags
// after it, and its exit code comes back through the script.
func TestBinCPIDoctorUsesTheJobsConfig(t *testing.T) {
	const endpoint = "127.0.0.1:1"
	manifest := withProperties(t, interpolate(t, []string{"cpi.yml"}, baseVars), map[string]any{
		"cloudstack.endpoint": "http://" + endpoint + "/client/api",
	})
	r := render(t, manifest, "director")
	r.install(t, filepath.Join(bins, "cloudstack-cpi"))

	cmd := exec.Command("/bin/bash", filepath.Join(r.dir(), "bin", "cpi"), "doctor", "-json")
	cmd.Env = []string{"BOSH_PACKAGES_DIR=" + r.packages, "BOSH_JOBS_DIR=" + r.jobsDir}
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("bin/cpi doctor against an endpoint that does not answer: %v, want exit 1\n%s", err, out)
	}
	var rows []struct {
		Check, Result, Fix string
		OK                 bool
	}
	if err := json.Unmarshal(out, &rows); err != nil || len(rows) == 0 {
		t.Fatalf("bin/cpi doctor -json printed no rows (%v):\n%s", err, out)
	}
	first := rows[0]
	if first.Check != "endpoint" || first.OK || !strings.Contains(first.Result, endpoint) ||
		!strings.Contains(first.Fix, "cloudstack.endpoint") {
		t.Fatalf("the endpoint check does not report the job's endpoint %s: %+v", endpoint, first)
	}
}
