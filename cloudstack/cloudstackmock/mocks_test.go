package cloudstackmock_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMocksAreCurrent runs generate.go's own go:generate line into a
// temporary directory and compares: the committed mocks must be what
// mockgen makes of cloudstack/api.go today.
func TestMocksAreCurrent(t *testing.T) {
	args := generateArgs(t)
	fresh := filepath.Join(t.TempDir(), "mocks.go")
	replaced := false
	for i, a := range args {
		if strings.HasPrefix(a, "-destination=") {
			args[i], replaced = "-destination="+fresh, true
		}
	}
	if !replaced {
		t.Fatalf("generate.go's go:generate line names no -destination: %q", args)
	}
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("running %q: %v\n%s", args, err, out)
	}
	want, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("mocks.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("cloudstack/cloudstackmock/mocks.go is stale: run make generate and commit the result")
	}
}

func generateArgs(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("generate.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(src), "\n") {
		if cmd, ok := strings.CutPrefix(line, "//go:generate "); ok {
			return strings.Fields(cmd)
		}
	}
	t.Fatal("generate.go has no go:generate line")
	return nil
}
