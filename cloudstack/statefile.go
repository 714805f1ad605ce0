package cloudstack

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
// Writers hold an flock on a lock file beside it, so a read-modify-write
// is one step for every process; the file is replaced by rename, so a
// reader without the lock sees the old or the new file, never a part. The
// state only ever makes the CPI faster or gentler: a file that cannot be
// read, parsed, locked or written is logged and done without (reset, or
// the bucket skipped for the call), never an error.

const (
	stateFileName = "cloudstack-cpi-state.json"
	lockFileName  = "cloudstack-cpi-state.lock"
	stateVersion  = 1
	// lockWait bounds the wait for the lock: each holder keeps it for a
	// read and a write of a small file, so a longer wait means a holder
	// is stuck (a stopped process, a hung filesystem) and the call goes on
	// without the bucket rather than hang.
	lockWait     = 2 * time.Second
	lockPollStep = 2 * time.Millisecond
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
	// sleep waits between lock attempts; tests make it count.
	sleep func(time.Duration)
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
	return &stateFile{dir: dir, logger: logger, sleep: time.Sleep}
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

// read loads the state without the lock (the file is replaced whole); a
// missing or unreadable file is an empty state, reported by ok.
func (s *stateFile) read() (st *sharedState, ok bool) {
	st = &sharedState{Version: stateVersion}
	data, err := os.ReadFile(s.path())
	if errors.Is(err, os.ErrNotExist) {
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

// update runs change on the state under the lock and writes what it left.
// It reports false (logged) when the lock or the write failed; change ran
// only if the lock was had.
func (s *stateFile) update(change func(st *sharedState)) bool {
	if s.off.Load() {
		return false
	}
	unlock, err := s.lock()
	if err != nil {
		s.off.Store(true)
		s.logger.Warn(logTag, "state file %s: %s; this call goes on without the shared API rate bucket and "+
			"learned job times", s.path(), err)
		return false
	}
	defer unlock()
	st, _ := s.read()
	change(st)
	if err := s.write(st); err != nil {
		s.off.Store(true)
		s.logger.Warn(logTag, "state file %s cannot be written (%s); this call goes on without the shared API "+
			"rate bucket and learned job times", s.path(), err)
		return false
	}
	return true
}

// lock takes the lock file's flock, polling so that the wait is bounded.
func (s *stateFile) lock() (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(s.dir, lockFileName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for waited := time.Duration(0); ; waited += lockPollStep {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || waited >= lockWait {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("its lock is held for over %s", lockWait)
			}
			return nil, fmt.Errorf("locking: %w", err)
		}
		s.sleep(lockPollStep)
	}
}

// write replaces the file by rename, so that no reader sees half of it.
func (s *stateFile) write(st *sharedState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, stateFileName+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path())
}
