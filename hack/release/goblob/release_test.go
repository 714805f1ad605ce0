package main

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// changelogVersion is the version of CHANGELOG.md's first "## " heading,
// which must be one.
func changelogVersion(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	version := regexp.MustCompile(`^## (\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)(?:\s|$)`)
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "## ") {
			m := version.FindStringSubmatch(s.Text())
			if m == nil {
				t.Fatalf("CHANGELOG.md's first version heading %q does not start with a version x.y.z", s.Text())
			}
			return m[1]
		}
	}
	t.Fatal("CHANGELOG.md has no version heading (## x.y.z)")
	return ""
}

// TestMakeReleaseNamesTheChangelogVersion runs `make release` in a copy of
// the repository, with a bosh CLI that records its command lines and the
// fake toolchain from a loopback module proxy (the CPI's own modules from
// the module cache the test was built with): VERSION set to the
// changelog's version reaches create-release --version and the CPI's
// VERSION file; without VERSION, create-release numbers a dev release; a
// VERSION that is no version stops make release, naming it.
func TestMakeReleaseNamesTheChangelogVersion(t *testing.T) {
	version := changelogVersion(t)
	repo := copyRepo(t)
	p := newProxy(t)
	p.serve(t, fakePath, fakeVersion, fakeToolchain("go1.26.8\ntime "+fakeRelease+"\n"))
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := goEnv(t, p.URL+",file://"+filepath.ToSlash(filepath.Join(strings.TrimSpace(string(gomodcache)), "cache", "download")),
		moduleCache(t), "GO_BLOB_TOOLCHAIN_MODULE="+fakeModule)
	bosh, log := fakeBosh(t)
	tarball := filepath.Join(t.TempDir(), "release.tgz")
	makeRelease := func(args ...string) (string, error) {
		cmd := exec.Command("make", append([]string{"--no-print-directory", "release", "BOSH=" + bosh,
			"RELEASE_TARBALL=" + tarball}, args...)...)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	before := notIgnored(t, repo)
	if out, err := makeRelease("VERSION=" + version); err != nil {
		t.Fatalf("make release VERSION=%s: %v\n%s", version, err, out)
	}
	createRelease := lastLine(t, log, "create-release")
	if !strings.Contains(createRelease, " --version "+version+" ") {
		t.Errorf("make release VERSION=%s ran bosh %s; want --version %s", version, createRelease, version)
	}
	if !strings.Contains(lastLine(t, log, "add-blob"), " golang-1.26-linux/go-linux-amd64.tgz") {
		t.Errorf("make release added no golang-1.26-linux blob: %s", lastLine(t, log, "add-blob"))
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "src", "cloudstack-cpi", "VERSION")); strings.TrimSpace(string(b)) != version {
		t.Errorf("the CPI's VERSION is %q, want the release's %s", b, version)
	}

	// The blob and everything else make release writes are git-ignored:
	// config/blobs.yml stays empty and no blob can be committed.
	if after := notIgnored(t, repo); !maps.Equal(before, after) {
		t.Errorf("make release changed or added files git does not ignore:\n%s", diffFiles(before, after))
	}

	if out, err := makeRelease(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	if line := lastLine(t, log, "create-release"); strings.Contains(line, "--version") {
		t.Errorf("make release without VERSION ran bosh %s; want no --version (a dev release)", line)
	}

	out, err := makeRelease("VERSION=1.0 beta")
	if err == nil || !strings.Contains(out, "VERSION '1.0 beta' is not a release version") {
		t.Errorf("make release VERSION='1.0 beta': err %v, output %q; want a failure naming VERSION", err, out)
	}
}

// copyRepo copies the repository's files as make release sees them
// (tracked, and untracked but not ignored) into a new git repository, so
// that the release's working directories (src/cloudstack-cpi, bin/) are the
// copy's.
func copyRepo(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	for _, name := range notIgnoredNames(t, repoRoot(t)) {
		src := filepath.Join(repoRoot(t), name)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the worktree, or not a file
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", dst).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return dst
}

// fakeBosh is a bosh CLI that appends each command line to log; add-blob
// copies the blob to blobs/ and names it in config/blobs.yml, as bosh's
// does, and create-release writes the --tarball it is given.
func fakeBosh(t *testing.T) (bosh, log string) {
	t.Helper()
	dir := t.TempDir()
	bosh, log = filepath.Join(dir, "bosh"), filepath.Join(dir, "bosh.log")
	script := `#!/bin/sh
echo "$* " >> "` + log + `"
if [ "$3" = add-blob ]; then
  mkdir -p "blobs/$(dirname "$5")" && cp "$4" "blobs/$5" && echo "$5: {size: 1}" >> config/blobs.yml
fi
while [ $# -gt 0 ]; do
  if [ "$1" = --tarball ]; then echo release > "$2"; fi
  shift
done
`
	if err := os.WriteFile(bosh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bosh, log
}

// lastLine is the last command line in log that holds word.
func lastLine(t *testing.T, log, word string) string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, word) {
			last = l
		}
	}
	return last
}

// notIgnored maps each file of repo that git does not ignore to its sha256.
func notIgnored(t *testing.T, repo string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, name := range notIgnoredNames(t, repo) {
		b, err := os.ReadFile(filepath.Join(repo, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	return files
}

func diffFiles(before, after map[string]string) string {
	var d []string
	for name, sum := range after {
		if before[name] != sum {
			d = append(d, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			d = append(d, name+" (removed)")
		}
	}
	slices.Sort(d)
	return strings.Join(d, "\n")
}

// notIgnoredNames are the files of repo that git tracks, or does not track
// but does not ignore either.
func notIgnoredNames(t *testing.T, repo string) []string {
	t.Helper()
	list := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	list.Dir = repo
	names, err := list.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	return strings.Split(strings.TrimRight(string(names), "\x00"), "\x00")
}
