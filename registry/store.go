package registry

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// MaxIDLength bounds an instance id: with ".json" it stays well inside a
// file name's 255 bytes.
const MaxIDLength = 200

// Store keeps one file per instance, <dir>/<id>.json, holding the settings
// exactly as they were PUT. A write goes to a temporary file that is
// fsync'd, renamed over the old one, and the directory fsync'd before Put
// returns: an acknowledged write survives a crash, and a crash at any
// moment leaves either the old file or the new one, never a torn one.
type Store struct {
	dir   string
	locks [64]sync.Mutex // striped by id: one writer per id, ids in parallel
}

// tmpPrefix starts every temporary file; ids cannot start with a dot, so
// no instance's file is ever mistaken for one.
const tmpPrefix = ".tmp-"

// OpenStore creates dir if needed and removes temporary files a crash left.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("registry store: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("registry store: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return nil, fmt.Errorf("registry store: removing a stale temporary file: %w", err)
			}
		}
	}
	return &Store{dir: dir}, syncDir(dir)
}

// ErrBadID is an instance id that cannot name a file safely.
var ErrBadID = errors.New("invalid instance id")

// ValidID refuses ids that could leave the store directory or confuse it:
// empty, too long, not UTF-8, control characters (NUL included), slashes,
// "..", or a leading dot.
func ValidID(id string) error {
	switch {
	case id == "", len(id) > MaxIDLength, !utf8.ValidString(id),
		strings.ContainsAny(id, `/\`), strings.Contains(id, ".."), strings.HasPrefix(id, "."):
		return ErrBadID
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return ErrBadID
		}
	}
	return nil
}

func (s *Store) path(id string) string { return filepath.Join(s.dir, id+".json") }

func (s *Store) lock(id string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return &s.locks[h.Sum32()%uint32(len(s.locks))]
}

// Get returns the settings stored for id, or ErrNotFound.
func (s *Store) Get(id string) ([]byte, error) {
	if err := ValidID(id); err != nil {
		return nil, err
	}
	// A rename replaces the file atomically, so a read needs no lock: it
	// sees the old settings or the new ones.
	b, err := os.ReadFile(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return b, err
}

// Put stores settings for id durably; created says there were none.
func (s *Store) Put(id string, settings []byte) (created bool, err error) {
	if err := ValidID(id); err != nil {
		return false, err
	}
	l := s.lock(id)
	l.Lock()
	defer l.Unlock()
	target := s.path(id)
	_, statErr := os.Lstat(target)
	created = errors.Is(statErr, fs.ErrNotExist)
	tmp, err := s.writeTemp(settings)
	if err != nil {
		return false, err
	}
	if err := os.Rename(tmp, target); err != nil {
		_ = os.Remove(tmp)
		return false, fmt.Errorf("registry store: %w", err)
	}
	return created, syncDir(s.dir)
}

func (s *Store) writeTemp(data []byte) (string, error) {
	suffix := make([]byte, 8)
	if _, err := rand.Read(suffix); err != nil {
		return "", err
	}
	tmp := filepath.Join(s.dir, tmpPrefix+hex.EncodeToString(suffix))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("registry store: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("registry store: %w", err)
	}
	return tmp, nil
}

// Delete removes id's settings durably; existed says there were some.
func (s *Store) Delete(id string) (existed bool, err error) {
	if err := ValidID(id); err != nil {
		return false, err
	}
	l := s.lock(id)
	l.Lock()
	defer l.Unlock()
	err = os.Remove(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("registry store: %w", err)
	}
	return true, syncDir(s.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("registry store: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("registry store: syncing the directory: %w", err)
	}
	return nil
}
