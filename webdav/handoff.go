package webdav

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/trust"
)

// Handoff is the CPI's side of the WebDAV daemon: it gives the daemon an
// image — into the daemon's directory when that is on this host, by an
// authenticated PUT otherwise — and takes it back.
type Handoff struct {
	daemon   *url.URL
	public   *url.URL
	dir      string
	username string
	password string
	client   *http.Client
}

// HandoffOptions say where the daemon is.
type HandoffOptions struct {
	// DaemonURL is where the CPI reaches the daemon.
	DaemonURL string
	// PublicURL is where the secondary storage VM reaches it; empty means
	// DaemonURL. Used exactly as written.
	PublicURL string
	// Dir is the daemon's directory; when it exists here, images are
	// linked or copied into it instead of uploaded.
	Dir                string
	Username, Password string
	// RootCAs are PEM bundles trusted, beside the system roots, for an
	// https daemon; one without a certificate is an error naming its setting.
	RootCAs []trust.PEM
}

// NewHandoff checks the options; it makes no connection.
func NewHandoff(o HandoffOptions) (*Handoff, error) {
	daemon, err := baseURL("webdav.daemon_url", o.DaemonURL)
	if err != nil {
		return nil, err
	}
	public := daemon
	if o.PublicURL != "" {
		if public, err = baseURL("webdav.public_url", o.PublicURL); err != nil {
			return nil, err
		}
	}
	tlsConfig, err := trust.Config(o.RootCAs...)
	if err != nil {
		return nil, err
	}
	// The daemon is a neighbour of the CPI: no proxy. No overall timeout
	// either: an upload takes as long as the image needs; the caller's
	// context bounds it.
	transport := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 10 * time.Minute, // the daemon syncs the whole image before it answers
		IdleConnTimeout:       30 * time.Second,
	}
	return &Handoff{daemon: daemon, public: public, dir: o.Dir, username: o.Username, password: o.Password,
		client: &http.Client{Transport: transport}}, nil
}

func baseURL(key, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s must be an http(s) URL", key)
	}
	u.User = nil
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// DaemonImage is one image on the daemon.
type DaemonImage struct {
	// URL is where the secondary storage VM downloads the image.
	URL   string
	Local bool // placed through the shared directory
	token string
	name  string
	h     *Handoff
}

// local says whether the daemon's directory is on this host.
func (h *Handoff) local() bool {
	if h.dir == "" {
		return false
	}
	info, err := os.Stat(filepath.Join(h.dir, incomingDir))
	return err == nil && info.IsDir()
}

// Publish gives the file at path to the daemon as <new token>/<name>.
func (h *Handoff) Publish(ctx context.Context, path, name string) (*DaemonImage, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("image name %q is not a plain file name", name)
	}
	token, err := NewToken()
	if err != nil {
		return nil, err
	}
	image := &DaemonImage{token: token, name: name, h: h, URL: h.at(h.public, token, name)}
	if h.local() {
		image.Local = true
		err = h.place(ctx, path, token, name)
	} else {
		err = h.upload(ctx, path, token, name)
	}
	if err != nil {
		return nil, err
	}
	return image, nil
}

func (h *Handoff) at(base *url.URL, token, name string) string {
	u := *base
	u.Path = base.Path + "/" + token
	if name != "" {
		u.Path += "/" + name
	}
	return u.String()
}

// place links (or, across file systems, copies) the image into the
// daemon's directory, renames it into place, and asks the daemon for it:
// a directory that is not the daemon's fails here, not in CloudStack.
func (h *Handoff) place(ctx context.Context, path, token, name string) error {
	incoming := filepath.Join(h.dir, incomingDir)
	tmp := filepath.Join(incoming, token+"-"+name)
	if err := os.Link(path, tmp); err != nil {
		if err := copyFile(path, tmp); err != nil {
			return fmt.Errorf("copying the image into webdav.dir: %w", err)
		}
	}
	tokenDir := filepath.Join(h.dir, token)
	err := os.Mkdir(tokenDir, 0o755)
	if err == nil {
		err = os.Rename(tmp, filepath.Join(tokenDir, name))
	}
	if err != nil {
		_ = os.Remove(tmp)
		_ = os.RemoveAll(tokenDir)
		return fmt.Errorf("placing the image in webdav.dir: %w", err)
	}
	if err := h.check(ctx, token, name, path); err != nil {
		_ = os.RemoveAll(tokenDir)
		return err
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(dst)
	}
	return err
}

func (h *Handoff) check(ctx context.Context, token, name, path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, h.at(h.daemon, token, name), nil)
	if err != nil {
		return err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return h.unreachable(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != info.Size() {
		return fmt.Errorf("the WebDAV daemon at %s does not serve the image placed in webdav.dir %s "+
			"(HEAD answered %d): is webdav.dir the daemon's directory?", h.daemon.Redacted(), h.dir, resp.StatusCode)
	}
	return nil
}

// upload PUTs the image, streamed from disk with its length known.
func (h *Handoff) upload(ctx context.Context, path, token, name string) error {
	if h.username == "" || h.password == "" {
		return fmt.Errorf("webdav.dir %q is not on this host, and uploading to the WebDAV daemon needs "+
			"webdav.username and webdav.password", h.dir)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, h.at(h.daemon, token, name), f)
	if err != nil {
		return err
	}
	req.ContentLength = info.Size()
	req.GetBody = nil
	if info.Size() == 0 {
		req.Body = http.NoBody
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	return h.send(req, "uploading the image to", http.StatusCreated, http.StatusNoContent, http.StatusOK)
}

// Remove takes the image back; gone already is success.
func (p *DaemonImage) Remove(ctx context.Context) error {
	h := p.h
	if p.Local {
		err := os.RemoveAll(filepath.Join(h.dir, p.token))
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("removing the image from webdav.dir: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.at(h.daemon, p.token, ""), nil)
	if err != nil {
		return err
	}
	return h.send(req, "removing the image from", http.StatusNoContent, http.StatusOK, http.StatusNotFound)
}

// send makes a writing request to the daemon with webdav.username and
// webdav.password; an answer other than the ok ones is an error saying
// what was being done (doing) and what the daemon answered.
func (h *Handoff) send(req *http.Request, doing string, ok ...int) error {
	req.SetBasicAuth(h.username, h.password)
	resp, err := h.client.Do(req)
	if err != nil {
		return h.unreachable(err)
	}
	defer resp.Body.Close()
	switch {
	case slices.Contains(ok, resp.StatusCode):
		return nil
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("the WebDAV daemon at %s refused webdav.username and webdav.password", h.daemon.Redacted())
	}
	return fmt.Errorf("%s the WebDAV daemon at %s: %s%s", doing, h.daemon.Redacted(), resp.Status, snippet(resp.Body))
}

func (h *Handoff) unreachable(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is named below, without credentials
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("the WebDAV daemon at %s is not running (connection refused): start `cloudstack-cpi serve`", h.daemon.Redacted())
	}
	return fmt.Errorf("the WebDAV daemon at %s: %w", h.daemon.Redacted(), err)
}

func snippet(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 200))
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	return ": " + s
}
