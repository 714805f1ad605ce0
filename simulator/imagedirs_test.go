package simulator_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/transfers"
)

// A simulator that starts removes the image directories of simulators that
// are gone (killed, so they could not clean up), and no other.
func TestStartRemovesImageDirsOfDeadSimulators(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, lockFile bool, age time.Duration) string {
		dir := filepath.Join(base, transfers.DirPattern+name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "image"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if lockFile {
			if err := os.WriteFile(filepath.Join(dir, transfers.LockName), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(dir, old, old); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dead := mk("dead", true, 0)
	live := mk("live", true, 0)
	fresh := mk("fresh", false, time.Minute)
	stale := mk("stale", false, time.Hour)
	other := filepath.Join(base, "not-ours")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	holder, err := os.Open(filepath.Join(live, transfers.LockName))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	srv, err := simulator.New(simulator.Options{StatePath: filepath.Join(base, "state.json")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	}()
	for dir, want := range map[string]bool{dead: false, stale: false, live: true, fresh: true, other: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s: exists = %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
}
