package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeModule is the toolchain module the tests serve in place of
// golang.org/toolchain, under a path of its own so that no module cache ever
// holds a fake golang.org/toolchain.
const (
	fakePath    = "toolchain.test/fake"
	fakeVersion = "v0.0.1-go1.26.8.linux-amd64"
	fakeModule  = fakePath + "@" + fakeVersion
	fakeRelease = "2026-08-28T16:20:06Z"
)

// fakeToolchain is a GOROOT as the module proxy serves it: what the blob
// keeps, and one file or directory of each kind it trims. bin/go answers
// `go version` as the real one does.
func fakeToolchain(versionFile string) map[string]string {
	return map[string]string{
		"VERSION":                           versionFile,
		"bin/go":                            "#!/bin/sh\necho go version go1.26.8 linux/amd64\n",
		"bin/gofmt":                         "#!/bin/sh\n",
		"pkg/tool/linux_amd64/compile":      "#!/bin/sh\n",
		"pkg/tool/linux_amd64/pprof":        "#!/bin/sh\n",
		"pkg/include/textflag.h":            "// textflag\n",
		"src/fmt/print.go":                  "package fmt\n",
		"src/fmt/print_test.go":             "package fmt\n",
		"src/fmt/testdata/x.txt":            "data\n",
		"src/internal/obscuretestdata/a.go": "package obscuretestdata\n",
		"src/cmd/go/main.go":                "package main\n",
		"api/go1.txt":                       "pkg fmt\n",
		"lib/time/README":                   "zoneinfo\n",
		"test/run.go":                       "package main\n",
	}
}

// kept and trimmedFiles are the blob's expected names for fakeToolchain.
var (
	kept = []string{"./VERSION", "./bin/", "./bin/go", "./pkg/", "./pkg/include/", "./pkg/include/textflag.h",
		"./pkg/tool/", "./pkg/tool/linux_amd64/", "./pkg/tool/linux_amd64/compile", "./src/", "./src/fmt/",
		"./src/fmt/print.go", "./src/internal/", "./src/internal/obscuretestdata/", "./src/internal/obscuretestdata/a.go"}
	executables = []string{"./bin/go", "./pkg/tool/linux_amd64/compile"}
)

func moduleZip(t *testing.T, module string, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, content := range files {
		w, err := zw.Create(module + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, content); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// proxy is a Go module proxy on loopback serving toolchain modules; any
// other path is a 404, so that GOPROXY's next entry answers it.
type proxy struct {
	*httptest.Server
	mu    sync.RWMutex // serve writes while a handler of an earlier fetch may still read
	files map[string][]byte
	zips  atomic.Int32
}

func newProxy(t *testing.T) *proxy {
	p := &proxy{files: map[string][]byte{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.RLock()
		body, ok := p.files[r.URL.Path]
		p.mu.RUnlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(r.URL.Path, ".zip") {
			p.zips.Add(1)
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(p.Close)
	return p
}

// serve adds the module path@version, with the toolchain files given.
func (p *proxy) serve(t *testing.T, path, version string, files map[string]string) {
	base := "/" + path + "/@v/" + version
	zip := moduleZip(t, path+"@"+version, files)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.files[base+".info"] = []byte(`{"Version":"` + version + `","Time":"` + fakeRelease + `"}`)
	p.files[base+".mod"] = []byte("module " + path + "\n")
	p.files[base+".zip"] = zip
}

// goEnv is the environment of a subprocess that fetches the toolchain
// module: GOPROXY the given proxies only (no "direct", so nothing beyond
// them), no checksum database (the fake toolchain is in none), its own
// module cache, and nothing from the caller that would change what is run.
func goEnv(t *testing.T, goproxy, modcache string, extra ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GOFLAGS", "GOMODCACHE", "GOTOOLCHAIN",
			"GO_BLOB_TOOLCHAIN_MODULE", "VERSION", "RELEASE_VERSION", "BOSH", "RELEASE_TARBALL", "MAKEFLAGS", "MFLAGS", "MAKELEVEL":
			continue
		}
		env = append(env, kv)
	}
	return append(env, append([]string{"GOPROXY=" + goproxy, "GOSUMDB=off", "GOFLAGS=-mod=mod",
		"GOMODCACHE=" + modcache, "GOTOOLCHAIN=local"}, extra...)...)
}

// moduleCache is an empty module cache, removed after the test although the
// go command leaves its files read-only.
func moduleCache(t *testing.T) string {
	dir := t.TempDir()
	t.Cleanup(func() {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	return dir
}

// repoRoot is the repository's root, where hack/release/ lives.
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goBlob runs hack/release/go-blob.sh under the umask given.
func goBlob(t *testing.T, env []string, umask, out string) (string, error) {
	t.Helper()
	script := filepath.Join(repoRoot(t), "hack", "release", "go-blob.sh")
	cmd := exec.Command("sh", "-c", `umask "$1" && exec "$2" "$3"`, "sh", umask, script, out)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// blobEntry is one tarball entry as the tests judge it.
type blobEntry struct {
	hdr  *tar.Header
	body []byte
}

// readBlob returns the gzip header and the tarball's entries in order.
func readBlob(t *testing.T, blob string) (gzip.Header, []blobEntry) {
	t.Helper()
	f, err := os.Open(blob)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var entries []blobEntry
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return zr.Header, entries
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, blobEntry{hdr, body})
	}
}
