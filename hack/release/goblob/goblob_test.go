package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBlobIsTheSameFromAnyModuleCacheAndUmask: go-blob.sh, run from two
// empty module caches under umasks 022 and 077, fetches the toolchain module
// from the proxy each time and writes the same bytes: the files it keeps in
// lexical order, the trimmed ones absent, execute bits on bin/ and pkg/tool/
// only, owner 0:0 without names, every mtime the toolchain's release time
// (not the module cache's extraction time), a gzip header without name or
// time; and the package's packaging installs it so that bin/go runs.
func TestBlobIsTheSameFromAnyModuleCacheAndUmask(t *testing.T) {
	p := newProxy(t)
	p.serve(t, fakePath, fakeVersion, fakeToolchain("go1.26.8\ntime "+fakeRelease+"\n"))
	var sums []string
	for i, umask := range []string{"022", "077"} {
		out := filepath.Join(t.TempDir(), "go-linux-amd64.tgz")
		env := goEnv(t, p.URL, moduleCache(t), "GO_BLOB_TOOLCHAIN_MODULE="+fakeModule)
		if msg, err := goBlob(t, env, umask, out); err != nil {
			t.Fatalf("go-blob.sh under umask %s: %v\n%s", umask, err, msg)
		}
		if got := p.zips.Load(); got != int32(i+1) {
			t.Fatalf("the proxy served the module's zip %d times after %d runs from empty module caches", got, i+1)
		}
		sums = append(sums, sha256File(t, out))
		checkBlob(t, out)
		if i == 0 {
			checkPackaging(t, out)
			checkRebuiltWhenChanged(t, env, out, sums[0])
		}
	}
	if sums[0] != sums[1] {
		t.Errorf("two module caches and umasks gave two blobs: sha256 %s and %s", sums[0], sums[1])
	}
}

func checkBlob(t *testing.T, blob string) {
	t.Helper()
	gz, entries := readBlob(t, blob)
	if gz.Name != "" || !gz.ModTime.IsZero() || gz.Comment != "" || gz.OS != 255 {
		t.Errorf("gzip header has name %q, time %v, comment %q, OS %d; want none of them (OS 255, unknown)",
			gz.Name, gz.ModTime, gz.Comment, gz.OS)
	}
	release, _ := time.Parse(time.RFC3339, fakeRelease)
	var names []string
	for _, e := range entries {
		h := e.hdr
		names = append(names, h.Name)
		wantMode := int64(0o644)
		if strings.HasSuffix(h.Name, "/") || slices.Contains(executables, h.Name) {
			wantMode = 0o755
		}
		if h.Mode != wantMode {
			t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, wantMode)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: owner %d:%d (%q:%q), want 0:0 without names", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		if !h.ModTime.Equal(release) {
			t.Errorf("%s: mtime %v, want the toolchain's release time %v", h.Name, h.ModTime, release)
		}
	}
	if !slices.Equal(names, kept) {
		t.Errorf("blob holds, in this order:\n%q\nwant:\n%q", names, kept)
	}
}

// checkPackaging runs packages/golang-1.26-linux/packaging as bosh does (in
// a directory holding the package's files, BOSH_INSTALL_TARGET set) and the
// installed bin/go.
func checkPackaging(t *testing.T, blob string) {
	t.Helper()
	compile, install := t.TempDir(), t.TempDir()
	b, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(compile, "golang-1.26-linux"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(compile, "golang-1.26-linux", "go-linux-amd64.tgz"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "packages", "golang-1.26-linux", "packaging"))
	cmd.Dir, cmd.Env = compile, append(os.Environ(), "BOSH_INSTALL_TARGET="+install)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("packaging: %v\n%s", err, msg)
	}
	got, err := exec.Command(filepath.Join(install, "bin", "go"), "version").Output()
	if err != nil || string(got) != "go version go1.26.8 linux/amd64\n" {
		t.Errorf("installed bin/go version: %q, %v", got, err)
	}
}

// checkRebuiltWhenChanged: go-blob.sh reuses a blob it made only while the
// blob is unchanged.
func checkRebuiltWhenChanged(t *testing.T, env []string, out, sum string) {
	t.Helper()
	if err := os.WriteFile(out, []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := goBlob(t, env, "022", out); err != nil {
		t.Fatalf("go-blob.sh over a changed blob: %v\n%s", err, msg)
	}
	if got := sha256File(t, out); got != sum {
		t.Errorf("go-blob.sh kept a changed blob (sha256 %s, want %s)", got, sum)
	}
}

// TestBlobRefusesOtherToolchains: a module of another Go minor version or
// platform, or one whose VERSION is not the version its module version
// names, gives no blob and an error that says why.
func TestBlobRefusesOtherToolchains(t *testing.T) {
	p := newProxy(t)
	p.serve(t, fakePath, "v0.0.1-go1.26.9.linux-amd64", fakeToolchain("go1.26.8\ntime "+fakeRelease+"\n"))
	for _, c := range []struct{ module, want string }{
		{fakePath + "@v0.0.1-go1.25.3.linux-amd64", "the package is golang-1.26-linux"},
		{fakePath + "@v0.0.1-go1.26.8.darwin-arm64", "the package is golang-1.26-linux"},
		{fakePath + "@v0.0.1-go1.26.9.linux-amd64", `VERSION says "go1.26.8", the module version go1.26.9`},
	} {
		out := filepath.Join(t.TempDir(), "go-linux-amd64.tgz")
		env := goEnv(t, p.URL, moduleCache(t), "GO_BLOB_TOOLCHAIN_MODULE="+c.module)
		msg, err := goBlob(t, env, "022", out)
		if err == nil || !strings.Contains(msg, c.want) {
			t.Errorf("%s: err %v, output %q; want a failure saying %q", c.module, err, msg, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: a blob was written", c.module)
		}
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
