// Package testconfig is the cpi.json the root package's and dispatch's tests
// run calls with, written where each test's files go.
package testconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// Good is a valid cpi.json whose endpoint, a closed loopback port, answers
// nothing and is tried once: a call that reaches CloudStack fails at once,
// and one that does not (info, a refused request) never knows.
const Good = `{"cloudstack":{"endpoint":"http://127.0.0.1:9/client/api","api_key":"k",
  "secret_access_key":"s","default_zone":"z","max_retries":0}}`

// Write writes body as a cpi.json in the test's temporary directory and
// returns its path.
func Write(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cpi.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
