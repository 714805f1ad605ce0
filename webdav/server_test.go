package webdav_test

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/webdav"
)

func image(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "image")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func start(t *testing.T, listen, public string) *webdav.Server {
	t.Helper()
	s, err := webdav.Listen(listen, public)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(time.Second); err != nil {
			t.Errorf("closing the server: %v", err)
		}
	})
	return s
}

// answer is what a test's request got: the response's status and headers,
// its body read and closed.
type answer struct {
	StatusCode    int
	ContentLength int64
	Header        http.Header
}

func do(t *testing.T, method, url string, header map[string]string) (answer, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return send(t, req)
}

// send does req and reads the answer; a failed request fails the test.
func send(t *testing.T, req *http.Request) (answer, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return answer{StatusCode: resp.StatusCode, ContentLength: resp.ContentLength, Header: resp.Header}, string(body)
}

func TestServesHeadAndRangedGet(t *testing.T) {
	s := start(t, "127.0.0.1:0", "")
	url, err := s.Publish(image(t, "0123456789"), "bosh-stemcell-1.vhd.bz2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(url, ".vhd.bz2") || !strings.Contains(url, s.Addr()) {
		t.Fatalf("url %s", url)
	}
	resp, _ := do(t, http.MethodHead, url, nil)
	if resp.StatusCode != http.StatusOK || resp.ContentLength != 10 {
		t.Fatalf("HEAD: %d length %d", resp.StatusCode, resp.ContentLength)
	}
	resp, body := do(t, http.MethodGet, url, map[string]string{"Range": "bytes=2-5"})
	if resp.StatusCode != http.StatusPartialContent || body != "2345" {
		t.Fatalf("GET range: %d %q", resp.StatusCode, body)
	}
	resp, body = do(t, http.MethodGet, url, nil)
	if resp.StatusCode != http.StatusOK || body != "0123456789" {
		t.Fatalf("GET: %d %q", resp.StatusCode, body)
	}
}

func TestNothingElseIsReachable(t *testing.T) {
	s := start(t, "127.0.0.1:0", "")
	url, _ := s.Publish(image(t, "data"), "img.qcow2")
	root := "http://" + s.Addr()
	token := strings.Split(strings.TrimPrefix(url, root+"/"), "/")[0]
	cases := []struct{ method, url string }{
		{"PUT", url}, {"DELETE", url}, {"MKCOL", root + "/x"}, {"MOVE", url}, {"COPY", url}, {"PROPPATCH", url},
		{"PROPFIND", root + "/"}, {"PROPFIND", root + "/" + token}, {"GET", root + "/"}, {"GET", root + "/" + token},
		{"GET", root + "/" + token + "/../" + token + "/other"}, {"GET", root + "/0000/img.qcow2"},
	}
	for _, c := range cases {
		resp, body := do(t, c.method, c.url, nil)
		if resp.StatusCode < 400 || strings.Contains(body, token) {
			t.Errorf("%s %s: %d %q", c.method, c.url, resp.StatusCode, body)
		}
	}
}

func TestPortRangeLetsConcurrentServersCoexist(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	listen := "127.0.0.1:" + strconv.Itoa(port) + "-" + strconv.Itoa(port+20)
	a := start(t, listen, "http://ssvm-reachable.example")
	b := start(t, listen, "http://ssvm-reachable.example")
	if a.Addr() == b.Addr() {
		t.Fatal("two servers on one port")
	}
	url, _ := b.Publish(image(t, "x"), "i.ova")
	_, boundPort, _ := net.SplitHostPort(b.Addr())
	if !strings.HasPrefix(url, "http://ssvm-reachable.example:"+boundPort+"/") {
		t.Fatalf("public URL %s should carry the bound port %s", url, boundPort)
	}
}

func TestBadSettings(t *testing.T) {
	for _, c := range []struct{ listen, public, want string }{
		{"nope", "", "webdav.listen"},
		{"127.0.0.1:9-1", "", "webdav.listen"},
		{"0.0.0.0:0", "", "webdav.public_url is needed"},
		{"127.0.0.1:0", "ftp://x", "webdav.public_url"},
	} {
		if _, err := webdav.Listen(c.listen, c.public); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Listen(%q, %q) = %v", c.listen, c.public, err)
		}
	}
	s := start(t, "127.0.0.1:0", "")
	if _, err := s.Publish(image(t, "x"), "../etc/passwd"); err == nil {
		t.Error("a name with a slash must be refused")
	}
}
