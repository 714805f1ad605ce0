package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// excluded are the parts of GOROOT that `go build` does not need, relative
// to GOROOT: tests, docs, API lists, the cmd sources (the tools are built),
// lib/, gofmt and the tools the go command runs only for pprof, trace, fix
// and doc.
var excluded = []string{"test", "api", "doc", "misc", "lib", "src/cmd", "bin/gofmt",
	"pkg/tool/*/pprof", "pkg/tool/*/trace", "pkg/tool/*/fix", "pkg/tool/*/doc"}

// trimmed says whether GOROOT's file or directory rel is left out: one of
// excluded, or a test file or testdata anywhere.
func trimmed(rel string) bool {
	for _, pattern := range excluded {
		if ok, _ := path.Match(pattern, rel); ok {
			return true
		}
	}
	base := path.Base(rel)
	return base == "testdata" || strings.HasSuffix(base, "_test.go")
}

// executable: the module cache holds every file without execute bits (the
// go command sets them on bin/ and pkg/tool/ itself when it installs a
// toolchain), so the blob sets them on the same files.
func executable(rel string) bool {
	return strings.HasPrefix(rel, "bin/") || strings.HasPrefix(rel, "pkg/tool/")
}

// pack writes the trimmed toolchain in dir to out as a gzipped tarball of
// ./-prefixed names (the package's packaging strips that component) and
// returns its sha256. Nothing of the machine goes in: names in lexical
// order, modes 0755/0644 whatever the umask, owner 0:0 with no names, every
// mtime the toolchain's own release time, and a gzip header with no name,
// time or OS.
func pack(dir, goVersion, out string) (string, error) {
	mtime, err := releaseTime(dir, goVersion)
	if err != nil {
		return "", err
	}
	for _, need := range []string{"bin/go", "pkg/tool/linux_amd64/compile"} {
		if _, err := os.Stat(filepath.Join(dir, need)); err != nil {
			return "", fmt.Errorf("%s: no %s: %w", dir, need, errNotToolchain)
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	buf := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	zw, err := gzip.NewWriterLevel(buf, gzip.DefaultCompression)
	if err != nil {
		return "", err
	}
	zw.OS = 255 // unknown: the default, set so that no machine's OS shows
	tw := tar.NewWriter(zw)
	if err := addTree(tw, dir, mtime); err != nil {
		return "", err
	}
	for _, c := range []io.Closer{tw, zw} {
		if err := c.Close(); err != nil {
			return "", err
		}
	}
	if err := buf.Flush(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), f.Close()
}

// addTree adds dir's entries; fs.WalkDir visits them in lexical order.
func addTree(tw *tar.Writer, dir string, mtime time.Time) error {
	return fs.WalkDir(os.DirFS(dir), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil || rel == "." {
			return err
		}
		if trimmed(rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		hdr := &tar.Header{Name: "./" + rel, ModTime: mtime, Mode: 0o644, Format: tar.FormatPAX}
		switch {
		case d.IsDir():
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
			return tw.WriteHeader(hdr)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: %s is not a regular file: %w", dir, rel, errNotToolchain)
		case executable(rel):
			hdr.Mode = 0o755
		}
		return addFile(tw, hdr, filepath.Join(dir, filepath.FromSlash(rel)))
	})
}

func addFile(tw *tar.Writer, hdr *tar.Header, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// releaseTime is the toolchain's release time from its VERSION file
// ("go1.26.8\ntime 2026-08-28T16:20:06Z\n"): a time every copy of the
// toolchain agrees on, unlike the module cache's extraction time. The
// first line must be the Go version the module version names.
func releaseTime(dir, goVersion string) (time.Time, error) {
	b, err := os.ReadFile(filepath.Join(dir, "VERSION"))
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w (%w)", dir, err, errNotToolchain)
	}
	lines := strings.Split(string(b), "\n")
	if lines[0] != goVersion {
		return time.Time{}, fmt.Errorf("%s: VERSION says %q, the module version %s: %w", dir, lines[0], goVersion, errNotToolchain)
	}
	for _, l := range lines[1:] {
		if stamp, ok := strings.CutPrefix(l, "time "); ok {
			t, err := time.Parse(time.RFC3339, stamp)
			if err != nil {
				return time.Time{}, fmt.Errorf("%s: VERSION's time %q: %w", dir, stamp, err)
			}
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%s: VERSION has no time line: %w", dir, errNotToolchain)
}
