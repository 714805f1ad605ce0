// Package webdav serves stemcell images, read-only, to CloudStack's
// secondary storage VM, which downloads a template from the URL given to
// registerTemplate. Each image sits under an unguessable path; nothing can
// be listed, written or deleted.
package webdav

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	xwebdav "golang.org/x/net/webdav"
)

// Server is a WebDAV server for the images published on it.
type Server struct {
	listener net.Listener
	http     *http.Server
	base     *url.URL
	files    *catalog
	done     chan struct{}
}

// Listen binds listen — "HOST:PORT", or "HOST:LOW-HIGH" to take the first
// free port of a range so that concurrent CPI calls never clash — and
// serves at publicURL, the base URL the secondary storage VM reaches. A
// publicURL without a port gets the bound one; an empty publicURL means the
// bound address itself.
func Listen(listen, publicURL string) (*Server, error) {
	ln, err := bind(listen)
	if err != nil {
		return nil, err
	}
	base, err := publicBase(publicURL, ln.Addr().(*net.TCPAddr))
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := &Server{listener: ln, base: base, files: newCatalog(), done: make(chan struct{})}
	s.http = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 30 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

// Addr is the bound address.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Publish serves the file at path as …/<random>/<name> and returns that URL.
func (s *Server) Publish(path, name string) (string, error) {
	if name == "" || strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
		return "", fmt.Errorf("image name %q is not a plain file name", name)
	}
	token, err := randomToken()
	if err != nil {
		return "", err
	}
	s.files.add(token, name, path)
	u := *s.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + token + "/" + name
	return u.String(), nil
}

// Close lets downloads in flight finish for up to grace, then stops.
func (s *Server) Close(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.http.Close()
	}
	<-s.done
	return err
}

func (s *Server) handler() http.Handler {
	dav := &xwebdav.Handler{
		Prefix:     strings.TrimSuffix(s.base.Path, "/"),
		FileSystem: readOnlyFS{s.files},
		LockSystem: xwebdav.NewMemLS(),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions, "PROPFIND":
			dav.ServeHTTP(w, r)
		default:
			w.Header().Set("Allow", "GET, HEAD, OPTIONS, PROPFIND")
			http.Error(w, "read-only", http.StatusMethodNotAllowed)
		}
	})
}

func bind(listen string) (net.Listener, error) {
	host, ports, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("webdav.listen %q: %w", listen, err)
	}
	low, high, isRange := strings.Cut(ports, "-")
	if !isRange {
		high = low
	}
	from, err1 := strconv.Atoi(low)
	to, err2 := strconv.Atoi(high)
	if err1 != nil || err2 != nil || from < 0 || to > 65535 || from > to {
		return nil, fmt.Errorf("webdav.listen %q: want HOST:PORT or HOST:LOW-HIGH", listen)
	}
	var lastErr error
	for port := from; port <= to; port++ {
		ln, err := new(net.ListenConfig).Listen(context.Background(), "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil {
			return ln, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("webdav.listen %q: no free port: %w", listen, lastErr)
}

func publicBase(publicURL string, bound *net.TCPAddr) (*url.URL, error) {
	if publicURL == "" {
		if bound.IP.IsUnspecified() {
			return nil, fmt.Errorf("webdav.public_url is needed when webdav.listen binds every address")
		}
		publicURL = "http://" + bound.String()
	}
	u, err := url.Parse(publicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webdav.public_url %q must be an http(s) URL", publicURL)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(bound.Port))
	}
	return u, nil
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making an unguessable path: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// catalog maps /<token>/<name> to local files.
type catalog struct {
	mu    sync.RWMutex
	files map[string]string
}

func newCatalog() *catalog { return &catalog{files: map[string]string{}} }

func (c *catalog) add(token, name, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.files["/"+token+"/"+name] = path
}

func (c *catalog) lookup(p string) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	path, ok := c.files[p]
	return path, ok
}
