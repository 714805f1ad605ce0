package transfers

import (
	"os"
	"path/filepath"
	"testing"
)

// A running simulator's own directory is locked, so a second simulator
// starting beside it leaves it alone; closing removes it.
func TestImageDirIsLockedWhileInUse(t *testing.T) {
	base := t.TempDir()
	x := New(filepath.Join(base, "state.json"))
	p, err := x.ImagePath("t", "z")
	if err != nil {
		t.Fatal(err)
	}
	if n := Sweep(base); n != 0 {
		t.Fatalf("swept %d directories of a live simulator", n)
	}
	if _, err := os.Stat(filepath.Dir(p)); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if dirs, _ := filepath.Glob(filepath.Join(base, DirPattern+"*")); len(dirs) != 0 {
		t.Fatalf("left behind: %v", dirs)
	}
}
