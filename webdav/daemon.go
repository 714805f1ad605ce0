package webdav

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	xwebdav "golang.org/x/net/webdav"
)

// The daemon's directory holds <token>/<name> for each image it serves and
// incoming/ for uploads not yet complete. A file moves into place with one
// rename, so a reader never sees half an image.
const incomingDir = ".incoming"

var (
	tokenPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)
	namePattern  = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$`)
)

// NewToken is an unguessable directory name for one image.
func NewToken() (string, error) { return randomToken() }

// ValidToken says whether s is a token NewToken could have made.
func ValidToken(s string) bool { return tokenPattern.MatchString(s) }

// ValidName says whether s is a safe image file name: letters, digits,
// '.', '_' and '-', no leading dot, no "..".
func ValidName(s string) bool { return namePattern.MatchString(s) && !strings.Contains(s, "..") }

// imagePath splits /<token>/<name>; anything else is not an image.
func imagePath(p string) (token, name string, ok bool) {
	rest, found := strings.CutPrefix(p, "/")
	if !found {
		return "", "", false
	}
	token, name, found = strings.Cut(rest, "/")
	if !found || !ValidToken(token) || !ValidName(name) {
		return "", "", false
	}
	return token, name, true
}

// Daemon is the long-lived WebDAV server of `serve`: it serves the images
// in its directory read-only to anyone who knows their path, and takes PUT
// and DELETE of /<token>/<name> from the CPI with basic auth. Nothing can
// be listed.
type Daemon struct {
	dir      string
	writable bool
	userHash [32]byte
	passHash [32]byte
	maxAge   time.Duration
	logf     func(format string, args ...any)
	dav      *xwebdav.Handler
}

// DaemonOptions configure a Daemon. Without Username and Password it takes
// no uploads: only a CPI on the same host can hand it images, through Dir.
type DaemonOptions struct {
	Dir                string
	Username, Password string
	// MaxAge is how long an image stays when nobody removes it.
	MaxAge time.Duration
	Logf   func(format string, args ...any)
}

// NewDaemon prepares dir and removes uploads a crash left half done.
func NewDaemon(o DaemonOptions) (*Daemon, error) {
	if o.Dir == "" {
		return nil, errors.New("webdav.dir is required")
	}
	if o.MaxAge <= 0 {
		return nil, errors.New("webdav.max_age must be positive")
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, incomingDir), 0o755); err != nil {
		return nil, fmt.Errorf("webdav.dir: %w", err)
	}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	d := &Daemon{dir: o.Dir, writable: o.Username != "" && o.Password != "", maxAge: o.MaxAge, logf: logf,
		userHash: sha256.Sum256([]byte(o.Username)), passHash: sha256.Sum256([]byte(o.Password))}
	d.dav = &xwebdav.Handler{FileSystem: dirFS{dir: o.Dir}, LockSystem: xwebdav.NewMemLS()}
	if err := removeAllIn(filepath.Join(o.Dir, incomingDir)); err != nil {
		return nil, fmt.Errorf("webdav.dir: clearing half-done uploads: %w", err)
	}
	return d, nil
}

func (d *Daemon) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, "PROPFIND":
		d.dav.ServeHTTP(w, r)
	case http.MethodPut, http.MethodDelete:
		if !d.writable {
			w.Header().Set("Allow", "GET, HEAD, OPTIONS, PROPFIND")
			http.Error(w, "this daemon takes no uploads", http.StatusMethodNotAllowed)
			return
		}
		if !d.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="cloudstack-cpi webdav"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPut {
			d.put(w, r)
		} else {
			d.delete(w, r)
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, OPTIONS, PROPFIND, PUT, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (d *Daemon) authorized(r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	u, p := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(pass))
	return subtle.ConstantTimeCompare(u[:], d.userHash[:])&subtle.ConstantTimeCompare(p[:], d.passHash[:]) == 1
}

// put takes /<token>/<name> with a known Content-Length into incoming/,
// syncs it and renames it into place.
func (d *Daemon) put(w http.ResponseWriter, r *http.Request) {
	token, name, ok := imagePath(r.URL.Path)
	if !ok {
		http.Error(w, "want PUT /<token>/<name>", http.StatusBadRequest)
		return
	}
	if r.ContentLength < 0 {
		http.Error(w, "Content-Length is required", http.StatusLengthRequired)
		return
	}
	if free, err := freeSpace(d.dir); err == nil && r.ContentLength > free {
		http.Error(w, "the image is larger than the daemon's free space", http.StatusRequestEntityTooLarge)
		d.logf("webdav PUT /%s/%s: refused %d bytes, %d free", short(token), name, r.ContentLength, free)
		return
	}
	tmp, err := tempIn(filepath.Join(d.dir, incomingDir))
	if err != nil {
		d.fail(w, "PUT", err)
		return
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // after the rename, nothing to remove
	n, err := io.Copy(tmp, idleLimited(w, r.Body))
	if err == nil && n != r.ContentLength {
		err = fmt.Errorf("got %d of %d bytes", n, r.ContentLength)
	}
	if err != nil {
		tmp.Close()
		http.Error(w, "the upload did not complete", http.StatusBadRequest)
		d.logf("webdav PUT /%s/%s: incomplete upload: %s", short(token), name, err)
		return
	}
	err = tmp.Sync()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmpName, 0o644)
	}
	existed := false
	if err == nil {
		existed, err = d.place(tmpName, token, name)
	}
	if err != nil {
		d.fail(w, "PUT", err)
		return
	}
	d.logf("webdav: stored %d bytes as /%s/%s", n, short(token), name)
	if existed {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

// uploadIdle is how long an upload may send nothing before it is dropped:
// a stalled client must not hold a goroutine and disk space forever.
const uploadIdle = 2 * time.Minute

// idleLimited extends the request's read deadline as bytes arrive.
func idleLimited(w http.ResponseWriter, body io.Reader) io.Reader {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(uploadIdle))
	return &deadlineReader{r: body, rc: rc}
}

type deadlineReader struct {
	r  io.Reader
	rc *http.ResponseController
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if n > 0 {
		_ = d.rc.SetReadDeadline(time.Now().Add(uploadIdle))
	}
	return n, err
}

func (d *Daemon) place(tmp, token, name string) (existed bool, err error) {
	tokenDir := filepath.Join(d.dir, token)
	if err := os.Mkdir(tokenDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return false, err
	}
	target := filepath.Join(tokenDir, name)
	_, statErr := os.Lstat(target)
	if err := os.Rename(tmp, target); err != nil {
		return false, err
	}
	return statErr == nil, syncDir(tokenDir)
}

// delete removes /<token>/<name>, or /<token> with whatever it holds.
func (d *Daemon) delete(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimSuffix(r.URL.Path, "/")
	token, name, ok := imagePath(p)
	if !ok {
		token = strings.TrimPrefix(p, "/")
		if !ValidToken(token) {
			http.Error(w, "want DELETE /<token>[/<name>]", http.StatusBadRequest)
			return
		}
	}
	tokenDir := filepath.Join(d.dir, token)
	target := tokenDir
	if name != "" {
		target = filepath.Join(tokenDir, name)
	}
	if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	err := os.RemoveAll(target)
	if err == nil && name != "" {
		// The token directory goes with its last image.
		if rmErr := os.Remove(tokenDir); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) && !isNotEmpty(rmErr) {
			err = rmErr
		}
	}
	if err != nil {
		d.fail(w, "DELETE", err)
		return
	}
	d.logf("webdav: removed /%s/%s", short(token), name)
	w.WriteHeader(http.StatusNoContent)
}

func (d *Daemon) fail(w http.ResponseWriter, method string, err error) {
	d.logf("webdav %s failed: %s", method, err)
	http.Error(w, "internal error", http.StatusInternalServerError)
}

type dirFS struct{ dir string }

func (fs dirFS) Mkdir(context.Context, string, os.FileMode) error { return os.ErrPermission }
func (fs dirFS) RemoveAll(context.Context, string) error          { return os.ErrPermission }
func (fs dirFS) Rename(context.Context, string, string) error     { return os.ErrPermission }

func (fs dirFS) local(name string) (string, os.FileInfo, error) {
	token, file, ok := imagePath(path.Clean("/" + name))
	if !ok {
		return "", nil, os.ErrNotExist
	}
	local := filepath.Join(fs.dir, token, file)
	info, err := os.Lstat(local)
	if err != nil {
		return "", nil, os.ErrNotExist
	}
	if !info.Mode().IsRegular() {
		return "", nil, os.ErrNotExist
	}
	return local, info, nil
}

func (fs dirFS) OpenFile(_ context.Context, name string, flag int, _ os.FileMode) (xwebdav.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, os.ErrPermission
	}
	local, _, err := fs.local(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(local)
	if err != nil {
		return nil, os.ErrNotExist
	}
	return readOnlyFile{f}, nil
}

func (fs dirFS) Stat(_ context.Context, name string) (os.FileInfo, error) {
	_, info, err := fs.local(name)
	return info, err
}

func tempIn(dir string) (*os.File, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, hex.EncodeToString(b)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

func removeAllIn(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func freeSpace(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil //nolint:unconvert // Bsize is int64 on linux/amd64 only: int32 on 386 and arm, uint32 on darwin
}

// short is enough of a token to tell images apart in a log, never enough
// to fetch one: the token is all that protects an image.
func short(token string) string {
	if len(token) <= 6 {
		return token
	}
	return token[:6] + "…"
}

func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}
