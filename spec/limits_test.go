package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// unreachableConfig is a cpi.json whose CloudStack is never asked: the
// calls here are answered before.
func unreachableConfig(t *testing.T) string {
	return writeJSON(t, map[string]any{"cloudstack": map[string]any{"endpoint": "http://127.0.0.1:9/client/api",
		"api_key": apiKey, "secret_access_key": secretKey, "default_zone": zoneName, "max_retries": 0}})
}

// endless is a request's beginning, then padding without end.
type endless struct{ head []byte }

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.head)
	e.head = e.head[n:]
	for i := n; i < len(p); i++ {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestAnEndlessRequestIsAnsweredAtTheLimit (issue 24.6): the CPI binary
// answers a request that never ends once it has read past 2 MiB, naming
// the limit: what follows is never needed. A CPI that read to the end
// would never answer (the call's context kills it after two minutes, and
// stdout is then empty).
func TestAnEndlessRequestIsAnsweredAtTheLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cpiBin, "-configPath", unreachableConfig(t))
	cmd.Stdin = &endless{head: []byte(`{"method":"info","arguments":[],"context":{"request_id":"cpi-1","x":"`)}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run() // writing the rest of stdin fails once the CPI has exited, as the director's does
	var r response
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || r.Error == nil || r.Error.Type != "Bosh::Clouds::CpiError" ||
		!strings.Contains(r.Error.Message, "over the CloudStack CPI's limit of 2 MiB (2097152 bytes)") {
		t.Fatalf("want a CpiError naming the limit, got %q (%v)\nstderr:\n%s", stdout.String(), err, clip(stderr.String(), 2000))
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("exit %v: bosh create-env reads no answer of a CPI that exits non-zero", cmd.ProcessState)
	}
}

// TestALongRequestIDIsCutInStderr (issue 24.6): a request_id of a MiB
// starts every log line cut to 64 characters and "…".
func TestALongRequestIDIsCutInStderr(t *testing.T) {
	id := "cpi-" + strings.Repeat("7", 1<<20)
	r := runCPI(t, unreachableConfig(t), `{"method":"has_vm","arguments":["vm-1"],"context":{"request_id":"`+id+`"}}`)
	prefix := "[" + id[:64] + "…] "
	lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("stderr:\n%s", clip(r.Stderr, 2000))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, prefix) || len(l) > len(prefix)+2000 {
			t.Fatalf("a line does not start with the request_id cut: %s", clip(l, 300))
		}
	}
}
