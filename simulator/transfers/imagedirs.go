package transfers

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Image directories are the simulator's own plumbing (no CloudStack Java
// behind them). Each holds a lock file that its simulator keeps locked while
// it runs: a simulator killed with SIGKILL cannot remove its directory, so
// the next one to start removes every directory whose lock nobody holds.

const (
	// DirPattern begins the name of every image directory.
	DirPattern = "cloudstack-simulator-images-"
	// LockName is the lock file in an image directory.
	LockName = ".owner.lock"
	// A directory without a lock file may be one another simulator has just
	// made and not yet locked: only older ones are taken for dead.
	unlockedGrace = 10 * time.Minute
)

// makeImageDir creates and locks a fresh image directory under base; the
// returned file holds the lock until it is closed.
func makeImageDir(base string) (string, *os.File, error) {
	dir, err := os.MkdirTemp(base, DirPattern)
	if err != nil {
		return "", nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, LockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, lock, nil
}

// Sweep removes the image directories under base that belong to no
// running simulator and reports how many it removed.
func Sweep(base string) int {
	dirs, _ := filepath.Glob(filepath.Join(base, DirPattern+"*"))
	removed := 0
	for _, dir := range dirs {
		if abandoned(dir) && os.RemoveAll(dir) == nil {
			removed++
		}
	}
	return removed
}

// abandoned reports whether no live simulator holds dir's lock.
func abandoned(dir string) bool {
	lock, err := os.Open(filepath.Join(dir, LockName))
	if errors.Is(err, os.ErrNotExist) {
		info, statErr := os.Stat(dir)
		return statErr == nil && info.IsDir() && time.Since(info.ModTime()) > unlockedGrace
	}
	if err != nil {
		return false
	}
	defer lock.Close()
	if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false // its simulator is alive
	}
	_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	return true
}
