package ccm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// providerPackage is the provider's package; its tests run from the module
// cache with this module's versions.
const providerPackage = "github.com/apache/cloudstack-kubernetes-provider"

// acceptanceTests are the provider's tests configured by CS_API_URL,
// CS_API_KEY, CS_SECRET_KEY and CS_PROJECT_ID (cloudstack_test.go's
// configFromEnv), which skip without them.
var acceptanceTests = []string{"TestNewCSCloud", "TestLoadBalancer"}

// testEvent is the part of a go test -json event read here.
type testEvent struct {
	Action string
	Test   string
	Output string
}

// runAcceptance runs every test of the provider's package against apiURL
// with the root admin's keys (and projectID, if any) and fails on any test
// that failed or skipped: a skipped acceptance test tested nothing.
func runAcceptance(t *testing.T, apiURL, projectID string) {
	cmd := exec.Command("go", "test", "-json", "-count=1", providerPackage)
	cmd.Env = append(withoutCS(os.Environ()), "CS_API_URL="+apiURL, "CS_API_KEY="+apiKey,
		"CS_SECRET_KEY="+secretKey, "CS_PROJECT_ID="+projectID)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	results, output := readEvents(t, out)
	for _, name := range sortedKeys(results) {
		if a := results[name]; a != "pass" {
			t.Errorf("the provider's %s: %s\n%s", name, a, output[name])
		}
	}
	for _, name := range acceptanceTests {
		if results[name] == "" {
			t.Errorf("the provider's %s did not run", name)
		}
	}
	if runErr != nil && !t.Failed() {
		t.Fatalf("go test %s: %v\n%s%s", providerPackage, runErr, out, stderr.Bytes())
	}
	top := 0
	for name := range results {
		if !strings.Contains(name, "/") {
			top++
		}
	}
	t.Logf("the provider's tests (CS_PROJECT_ID=%q): %d ran (%d top-level, the rest subtests), %d passed",
		projectID, len(results), top, count(results, "pass"))
}

// readEvents returns each test's last action (pass, fail or skip) and its
// output, from go test -json's events.
func readEvents(t *testing.T, out []byte) (results, output map[string]string) {
	results, output = map[string]string{}, map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e testEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("go test -json wrote %q: %v", sc.Text(), err)
		}
		if e.Test == "" {
			continue
		}
		switch e.Action {
		case "pass", "fail", "skip":
			results[e.Test] = e.Action
		case "output":
			output[e.Test] += e.Output
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading go test -json: %v", err)
	}
	return results, output
}

// withoutCS is env without the CS_ variables a developer's shell may hold.
func withoutCS(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CS_") {
			out = append(out, kv)
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func count(m map[string]string, v string) int {
	n := 0
	for _, x := range m {
		if x == v {
			n++
		}
	}
	return n
}
