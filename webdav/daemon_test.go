package webdav_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/trust"
	"github.com/bosh-cloudstack/cloudstack-cpi/webdav"
)

const (
	davUser = "cpi"
	davPass = "dav-secret-91b2"
)

type daemonLogs struct {
	mu    sync.Mutex
	lines []string
}

func (l *daemonLogs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, format)
}

func startDaemon(t *testing.T, dir string, writable bool, maxAge time.Duration) (*webdav.Daemon, *httptest.Server) {
	t.Helper()
	o := webdav.DaemonOptions{Dir: dir, MaxAge: maxAge, Logf: (&daemonLogs{}).logf}
	if writable {
		o.Username, o.Password = davUser, davPass
	}
	d, err := webdav.NewDaemon(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return d, srv
}

func handoff(t *testing.T, srv *httptest.Server, dir string) *webdav.Handoff {
	t.Helper()
	h, err := webdav.NewHandoff(webdav.HandoffOptions{DaemonURL: srv.URL, PublicURL: "http://ssvm-sees.example:8080/",
		Dir: dir, Username: davUser, Password: davPass})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// daemonURL turns a public URL back into the daemon's.
func daemonURL(srv *httptest.Server, public string) string {
	return strings.Replace(public, "http://ssvm-sees.example:8080", srv.URL, 1)
}

func authed(t *testing.T, method, url string, body io.Reader) (answer, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	req.SetBasicAuth(davUser, davPass)
	return send(t, req)
}

func TestHandoffByUploadThenRemove(t *testing.T) {
	dir := t.TempDir()
	_, srv := startDaemon(t, dir, true, time.Hour)
	h := handoff(t, srv, filepath.Join(t.TempDir(), "not-here")) // the daemon's dir is elsewhere
	img, err := h.Publish(context.Background(), image(t, "0123456789"), "bosh-stemcell-1.42.vhd.bz2")
	if err != nil {
		t.Fatal(err)
	}
	if img.Local || !strings.HasPrefix(img.URL, "http://ssvm-sees.example:8080/") || !strings.HasSuffix(img.URL, "/bosh-stemcell-1.42.vhd.bz2") {
		t.Fatalf("handed %+v", img)
	}
	url := daemonURL(srv, img.URL)
	resp, body := do(t, "GET", url, map[string]string{"Range": "bytes=3-6"})
	if resp.StatusCode != http.StatusPartialContent || body != "3456" {
		t.Fatalf("ranged GET: %d %q", resp.StatusCode, body)
	}
	if resp, _ := do(t, "HEAD", url, nil); resp.StatusCode != http.StatusOK || resp.ContentLength != 10 {
		t.Fatalf("HEAD: %d %d", resp.StatusCode, resp.ContentLength)
	}
	if err := img.Remove(context.Background()); err != nil {
		t.Fatal(err)
	}
	if resp, _ := do(t, "GET", url, nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("after Remove: %d", resp.StatusCode)
	}
	if err := img.Remove(context.Background()); err != nil {
		t.Fatalf("a second Remove: %v", err)
	}
	if entries := dirEntries(t, dir); len(entries) != 1 || entries[0] != ".incoming" {
		t.Fatalf("left in the daemon's directory: %v", entries)
	}
}

func TestHandoffThroughTheSharedDirectory(t *testing.T) {
	dir := t.TempDir()
	_, srv := startDaemon(t, dir, false, time.Hour) // takes no uploads at all
	h, err := webdav.NewHandoff(webdav.HandoffOptions{DaemonURL: srv.URL, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	src := image(t, "local image")
	img, err := h.Publish(context.Background(), src, "i.qcow2")
	if err != nil {
		t.Fatal(err)
	}
	if !img.Local || !strings.HasPrefix(img.URL, srv.URL+"/") {
		t.Fatalf("handed %+v", img)
	}
	if resp, body := do(t, "GET", img.URL, nil); resp.StatusCode != http.StatusOK || body != "local image" {
		t.Fatalf("GET: %d %q", resp.StatusCode, body)
	}
	if err := img.Remove(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("removing the handed image removed the CPI's own file: %v", err)
	}
	if entries := dirEntries(t, dir); len(entries) != 1 {
		t.Fatalf("left: %v", entries)
	}
	// A directory that is not the daemon's is found out before CloudStack.
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, ".incoming"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, _ = webdav.NewHandoff(webdav.HandoffOptions{DaemonURL: srv.URL, Dir: other})
	if _, err := h.Publish(context.Background(), src, "i.qcow2"); err == nil || !strings.Contains(err.Error(), "daemon's directory") {
		t.Fatalf("wrong directory: %v", err)
	}
	if entries := dirEntries(t, other); len(entries) != 1 {
		t.Fatalf("a failed handoff left %v", entries)
	}
}

func TestHandoffErrorsSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	_, srv := startDaemon(t, dir, true, time.Hour)
	src := image(t, "x")
	bad, _ := webdav.NewHandoff(webdav.HandoffOptions{DaemonURL: srv.URL, Username: davUser, Password: "wrong"})
	if _, err := bad.Publish(context.Background(), src, "i.ova"); err == nil || !strings.Contains(err.Error(), "refused webdav.username") ||
		strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong password: %v", err)
	}
	none, _ := webdav.NewHandoff(webdav.HandoffOptions{DaemonURL: srv.URL})
	if _, err := none.Publish(context.Background(), src, "i.ova"); err == nil || !strings.Contains(err.Error(), "webdav.username") {
		t.Fatalf("no credentials: %v", err)
	}
	srv.Close()
	down, _ := webdav.NewHandoff(webdav.HandoffOptions{DaemonURL: srv.URL, Username: davUser, Password: davPass})
	if _, err := down.Publish(context.Background(), src, "i.ova"); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("daemon down: %v", err)
	}
	if _, err := webdav.NewHandoff(webdav.HandoffOptions{DaemonURL: "ftp://x"}); err == nil {
		t.Fatal("ftp daemon_url accepted")
	}
}

func TestDaemonRefusals(t *testing.T) {
	dir := t.TempDir()
	_, srv := startDaemon(t, dir, true, time.Hour)
	h := handoff(t, srv, "")
	img, err := h.Publish(context.Background(), image(t, "secret bytes"), "i.vhd")
	if err != nil {
		t.Fatal(err)
	}
	url := daemonURL(srv, img.URL)
	token := strings.Split(strings.TrimPrefix(url, srv.URL+"/"), "/")[0]
	other := strings.Repeat("ab", 16)
	anonymous := []struct{ method, path string }{
		{"PUT", "/" + other + "/x.vhd"}, {"DELETE", "/" + token}, {"DELETE", "/" + token + "/i.vhd"},
		{"MKCOL", "/" + other}, {"MOVE", "/" + token + "/i.vhd"}, {"COPY", "/" + token + "/i.vhd"},
		{"PROPPATCH", "/" + token + "/i.vhd"}, {"LOCK", "/" + token + "/i.vhd"},
		{"PROPFIND", "/"}, {"PROPFIND", "/" + token}, {"GET", "/"}, {"GET", "/" + token}, {"GET", "/" + token + "/"},
		{"GET", "/.incoming"}, {"GET", "/" + other + "/i.vhd"}, {"GET", "/" + token + "/../../etc/passwd"},
		{"GET", "/" + token + "/%2e%2e/%2e%2e/etc/passwd"},
	}
	for _, c := range anonymous {
		resp, body := do(t, c.method, srv.URL+c.path, nil)
		if resp.StatusCode < 400 || strings.Contains(body, token) || strings.Contains(body, "secret") {
			t.Errorf("%s %s: %d %q", c.method, c.path, resp.StatusCode, body)
		}
		if c.method == "PUT" || c.method == "DELETE" {
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s without credentials: %d", c.method, c.path, resp.StatusCode)
			}
		}
	}
	for _, p := range []string{"/" + other + "/..", "/" + other + "/.hidden", "/" + other + "/a..b", "/../x", "/short/x.vhd",
		"/" + other + "/a%2Fb", "/" + other + "/x/y", "/" + other} {
		if resp, _ := authed(t, "PUT", srv.URL+p, strings.NewReader("data")); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("PUT %s: %d", p, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/"+other+"/x.vhd", io.NopCloser(strings.NewReader("chunked")))
	req.ContentLength = -1
	req.SetBasicAuth(davUser, davPass)
	if resp, _ := send(t, req); resp.StatusCode != http.StatusLengthRequired {
		t.Errorf("PUT without a length: %d", resp.StatusCode)
	}
	if resp, _ := authed(t, "DELETE", srv.URL+"/"+other, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("DELETE of an absent token: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", url, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("the image did not survive the refusals: %d", resp.StatusCode)
	}
	if entries := dirEntries(t, filepath.Join(dir, ".incoming")); len(entries) != 0 {
		t.Fatalf("refused uploads left %v", entries)
	}
}

func TestGarbageCollection(t *testing.T) {
	dir := t.TempDir()
	d, srv := startDaemon(t, dir, true, time.Hour)
	h := handoff(t, srv, "")
	old, err := h.Publish(context.Background(), image(t, "old"), "old.vhd")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := h.Publish(context.Background(), image(t, "fresh"), "fresh.vhd")
	if err != nil {
		t.Fatal(err)
	}
	oldToken := strings.Split(strings.TrimPrefix(daemonURL(srv, old.URL), srv.URL+"/"), "/")[0]
	past := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, oldToken), past, past); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, ".incoming", "stale-upload")
	if err := os.WriteFile(stale, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(stale, past, past)
	notOurs := filepath.Join(dir, "lost+found")
	_ = os.Mkdir(notOurs, 0o700)
	_ = os.Chtimes(notOurs, past, past)

	n, err := d.Sweep(time.Now())
	if err != nil || n != 2 {
		t.Fatalf("Sweep removed %d (%v), want the old image and the stale upload", n, err)
	}
	if resp, _ := do(t, "GET", daemonURL(srv, old.URL), nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the old image is still served: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", daemonURL(srv, fresh.URL), nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the fresh image was collected: %d", resp.StatusCode)
	}
	if _, err := os.Stat(notOurs); err != nil {
		t.Error("the sweep removed a directory that is not the daemon's")
	}
	if webdav.GCInterval(24*time.Hour) != time.Hour || webdav.GCInterval(time.Second) != time.Second {
		t.Error("GCInterval")
	}
}

func TestDaemonRestartClearsHalfUploads(t *testing.T) {
	dir := t.TempDir()
	startDaemon(t, dir, true, time.Hour)
	_ = os.WriteFile(filepath.Join(dir, ".incoming", "half"), []byte("x"), 0o600)
	startDaemon(t, dir, true, time.Hour)
	if entries := dirEntries(t, filepath.Join(dir, ".incoming")); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestDaemonLogsNoToken(t *testing.T) {
	dir := t.TempDir()
	logs := &daemonLogs{}
	d, err := webdav.NewDaemon(webdav.DaemonOptions{Dir: dir, Username: davUser, Password: davPass, MaxAge: time.Hour,
		Logf: func(format string, args ...any) { logs.logf(fmt.Sprintf(format, args...)) }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	defer srv.Close()
	img, err := handoff(t, srv, "").Publish(context.Background(), image(t, "x"), "i.vhd")
	if err != nil {
		t.Fatal(err)
	}
	if err := img.Remove(context.Background()); err != nil {
		t.Fatal(err)
	}
	token := strings.Split(strings.TrimPrefix(img.URL, "http://ssvm-sees.example:8080/"), "/")[0]
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if len(logs.lines) < 2 {
		t.Fatalf("logs %v", logs.lines)
	}
	for _, l := range logs.lines {
		if strings.Contains(l, token) || strings.Contains(l, davPass) {
			t.Fatalf("the log shows a token or the password: %q", l)
		}
	}
}

func TestDaemonRefusesAnImageLargerThanItsDisk(t *testing.T) {
	_, srv := startDaemon(t, t.TempDir(), true, time.Hour)
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "PUT /" + strings.Repeat("cd", 16) + "/huge.vhd HTTP/1.1\r\nHost: x\r\nContent-Length: 4611686018427387904\r\n" +
		"Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(davUser+":"+davPass)) + "\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 4 EiB PUT: %d", resp.StatusCode)
	}
}

// TestHandoffTrustsTheConfiguredBundles: an https daemon with a private
// certificate takes a PUT when its certificate is among RootCAs, and a
// bundle without a certificate is refused up front, named by its setting.
func TestHandoffTrustsTheConfiguredBundles(t *testing.T) {
	d, err := webdav.NewDaemon(webdav.DaemonOptions{Dir: t.TempDir(), MaxAge: time.Hour, Logf: (&daemonLogs{}).logf,
		Username: davUser, Password: davPass})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(d)
	t.Cleanup(srv.Close)
	cert := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	h, err := webdav.NewHandoff(webdav.HandoffOptions{DaemonURL: srv.URL, Username: davUser, Password: davPass,
		RootCAs: []trust.PEM{{Setting: "cloudstack.ca_cert"}, {Setting: "webdav.tls_cert", Text: cert}}})
	if err != nil {
		t.Fatal(err)
	}
	img, err := h.Publish(context.Background(), image(t, "over tls"), "i.ova")
	if err != nil {
		t.Fatalf("publish to an https daemon whose certificate is trusted: %v", err)
	}
	if err := img.Remove(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = webdav.NewHandoff(webdav.HandoffOptions{DaemonURL: srv.URL,
		RootCAs: []trust.PEM{{Setting: "cloudstack.ca_cert", Text: cert}, {Setting: "webdav.tls_cert", Text: "not a pem"}}})
	if err == nil || !strings.Contains(err.Error(), "webdav.tls_cert holds no PEM certificate") {
		t.Fatalf("a bundle without a certificate: err = %v, want one naming webdav.tls_cert", err)
	}
}
