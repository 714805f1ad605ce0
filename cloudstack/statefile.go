package cloudstack

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

// The state the CPI processes of one host share lives in one small JSON
// file: the token bucket of each (endpoint, API key) and how long each
// command's jobs take. The director runs up to max_threads CPI processes
// per task at once, each living for one call, so nothing kept in a
// process's memory would outlive it or be seen by the others.
//
// Every access holds an flock on a lock file beside it (exclusive to
// change, shared to read), so a read-modify-write is one step for every
// process and the file is written in place: no reader sees a part of it,
// and a holder keeps the lock for a read and a write of a small file, not
// for a temporary file's creation and rename. The state only ever makes
// the CPI faster or gentler: a file that cannot be read, parsed, locked or
// written is logged and done without (reset, or the process's own pacing,
// bucket.go), never an error.

const (
	stateFileName = "cloudstack-cpi-state.json"
	lockFileName  = "cloudstack-cpi-state.lock"
	stateVersion  = 1
	// lockWait bounds the wait for the lock, which the kernel queues: a
	// burst of the director's processes (200 at once) queues behind holds
	// of a read and a write each, so a wait this long means a holder is
	// stuck (a stopped process, a hung filesystem), and the process goes on
	// pacing itself rather than hang.
	lockWait = 10 * time.Second
)

// sharedState is the file's content.
type sharedState struct {
	Version int `json:"version"`
	// Buckets are keyed by stateKey(endpoint, API key).
	Buckets map[string]*bucketState `json:"buckets,omitempty"`
	// Jobs are keyed by stateKey(endpoint) + " " + command.
	Jobs map[string]*jobTimes `json:"jobs,omitempty"`
}

// stateFile is one process's handle on the host's state file.
type stateFile struct {
	dir    string
	logger boshlog.Logger
	// after bounds the wait for the lock; tests make it count.
	after func(time.Duration) <-chan time.Time
	// off: the file failed this process once (logged then); it goes on
	// without it rather than log and wait on every request.
	off atomic.Bool
}

// openState is the state under dir, created if need be; nil (logged) when
// dir is empty or cannot be made: the call goes on without shared state.
func openState(dir string, logger boshlog.Logger) *stateFile {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		logger.Warn(logTag, "state directory %s cannot be made (%s): going on without the shared API rate "+
			"bucket and learned job times", dir, err)
		return nil
	}
	return &stateFile{dir: dir, logger: logger, after: time.After}
}

// stateKey names an entry by a hash of what identifies it: the API key
// never reaches the file, and entries of one endpoint and key meet.
func stateKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func (s *stateFile) path() string { return filepath.Join(s.dir, stateFileName) }

// view gives the state to look at under the shared lock; false (logged)
// when it could not be had. Readers do not wait for each other.
func (s *stateFile) view(look func(st *sharedState)) bool {
	if s.off.Load() {
		return false
	}
	f, err := s.lock(syscall.LOCK_SH)
	if err != nil {
		s.turnOff("locked", err)
		return false
	}
	defer unlock(f)
	st, _ := s.decode(os.ReadFile(s.path()))
	look(st)
	return true
}

// update runs change on the state under the lock and writes what it left.
// It reports false (logged) when the lock or the write failed; change ran
// only if the lock was had.
func (s *stateFile) update(change func(st *sharedState)) bool {
	if s.off.Load() {
		return false
	}
	lock, err := s.lock(syscall.LOCK_EX)
	if err != nil {
		s.turnOff("locked", err)
		return false
	}
	defer unlock(lock)
	f, err := os.OpenFile(s.path(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		s.turnOff("written", err)
		return false
	}
	defer f.Close()
	st, _ := s.decode(io.ReadAll(f))
	change(st)
	if err := write(f, st); err != nil {
		s.turnOff("written", err)
		return false
	}
	return true
}

// turnOff turns the file off for this process, logged once.
func (s *stateFile) turnOff(what string, err error) {
	if s.off.Swap(true) {
		return
	}
	s.logger.Warn(logTag, "state file %s cannot be %s (%s); this process goes on without it (the shared API "+
		"rate bucket and learned job times)", s.path(), what, err)
}

// decode is the state read from the file; a missing, empty or unreadable
// file is an empty state, reported by ok.
func (s *stateFile) decode(data []byte, err error) (st *sharedState, ok bool) {
	st = &sharedState{Version: stateVersion}
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(data) == 0) {
		return st, true
	}
	if err != nil {
		s.logger.Warn(logTag, "state file %s unreadable (%s): starting afresh", s.path(), err)
		return st, false
	}
	var got sharedState
	if err := json.Unmarshal(data, &got); err != nil || got.Version != stateVersion {
		s.logger.Warn(logTag, "state file %s is corrupt or of another version: starting afresh", s.path())
		return st, false
	}
	return &got, true
}

// lock takes the lock file's flock (how: LOCK_EX or LOCK_SH), waiting in
// the kernel's queue for at most lockWait. A wait that times out leaves
// its flock to a goroutine that lets go of the lock as soon as it has it.
func (s *stateFile) lock(how int) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(s.dir, lockFileName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	if err := syscall.Flock(fd, how|syscall.LOCK_NB); err == nil {
		return f, nil
	} else if !errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, err
	}
	got := make(chan error, 1)
	go func() { got <- flockRetrying(fd, how) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	case <-s.after(lockWait):
		go func() {
			if <-got == nil {
				unlock(f)
				return
			}
			f.Close()
		}()
		return nil, fmt.Errorf("its lock is held for over %s", lockWait)
	}
}

// flockRetrying is a blocking flock that a signal's EINTR does not end.
func flockRetrying(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func unlock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// write puts st in f in place, under the exclusive lock: the JSON from
// offset 0, then the file cut to its length. A process killed between the
// two leaves a file the next reader finds corrupt and resets.
func write(f *os.File, st *sharedState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(data)))
}
