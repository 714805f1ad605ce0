package simulator

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A simulator that starts removes the image directories of simulators that
// are gone (killed, so they could not clean up), and no other.
func TestStartRemovesImageDirsOfDeadSimulators(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, lockFile bool, age time.Duration) string {
		dir := filepath.Join(base, imageDirPattern+name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "image"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if lockFile {
			if err := os.WriteFile(filepath.Join(dir, imageLockName), nil, 0o600); err != nil {
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
	holder, err := os.Open(filepath.Join(live, imageLockName))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	srv, err := New(Options{StatePath: filepath.Join(base, "state.json")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for dir, want := range map[string]bool{dead: false, stale: false, live: true, fresh: true, other: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s: exists = %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
}

// A running simulator's own directory is locked, so a second simulator
// starting beside it leaves it alone; closing removes it.
func TestImageDirIsLockedWhileInUse(t *testing.T) {
	base := t.TempDir()
	x := newTransfers(filepath.Join(base, "state.json"))
	p, err := x.imagePath("t", "z")
	if err != nil {
		t.Fatal(err)
	}
	if n := sweepImageDirs(base); n != 0 {
		t.Fatalf("swept %d directories of a live simulator", n)
	}
	if _, err := os.Stat(filepath.Dir(p)); err != nil {
		t.Fatal(err)
	}
	x.close()
	if dirs, _ := filepath.Glob(filepath.Join(base, imageDirPattern+"*")); len(dirs) != 0 {
		t.Fatalf("left behind: %v", dirs)
	}
}
