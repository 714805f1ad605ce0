package simtesting

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// RunCLI runs the CLI against the simulator with a private HOME and working
// directory so no cloudstack.ini can interfere.
func RunCLI(t *testing.T, s *Sim, secret string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return RunCLIAs(t, s, Key, secret, args...)
}

// RunCLIAs is runCLI with another user's keys.
func RunCLIAs(t *testing.T, s *Sim, key, secret string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	if _, statErr := os.Stat(CloudstackCLI); statErr != nil {
		t.Fatal("Debian's cloudstack CLI is missing: apt-get install cs")
	}
	home := t.TempDir()
	cmd := exec.Command(CloudstackCLI, args...)
	cmd.Dir = home
	cmd.Env = append(EnvWithout("CLOUDSTACK_", "HOME="), "HOME="+home, "CLOUDSTACK_ENDPOINT="+s.API,
		"CLOUDSTACK_KEY="+key, "CLOUDSTACK_SECRET="+secret)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// EnvWithout is this process's environment less the variables with the
// given prefixes.
func EnvWithout(prefixes ...string) []string {
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

// CloudstackCLI is Debian's CloudStack CLI (package cs), an independent
// client: Python, signatureVersion=3 with "+0000" expiry times, GET by
// default.
const CloudstackCLI = "/usr/bin/cloudstack"
