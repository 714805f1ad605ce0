package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	boshsys "github.com/cloudfoundry/bosh-utils/system"
)

// rootedFS is the part of bosh-utils' FileSystem the agent's device path
// resolvers use (Glob, ReadAndFollowLink, FileExists, Stat, Lstat,
// Readlink), with every absolute path, link targets included, read under
// root, as in a chroot. Paths it returns are in the guest's namespace. Any other FileSystem method panics on
// the nil embedded interface: the resolvers must not reach the host.
type rootedFS struct {
	boshsys.FileSystem
	root string
}

func (fs rootedFS) host(path string) string { return filepath.Join(fs.root, filepath.Clean("/"+path)) }

func (fs rootedFS) guest(path string) (string, error) {
	rel, err := filepath.Rel(fs.root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s is outside the device tree", path)
	}
	return filepath.Join("/", rel), nil
}

func (fs rootedFS) Glob(pattern string) ([]string, error) {
	matches, err := filepath.Glob(fs.host(pattern))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(matches))
	for _, m := range matches {
		g, err := fs.guest(m)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// ReadAndFollowLink is filepath.EvalSymlinks, as bosh-utils has it, with
// the links read as the guest reads them: an absolute target is under root
// too, as in a chroot.
func (fs rootedFS) ReadAndFollowLink(path string) (string, error) {
	return fs.follow(path)
}

// follow resolves a chain of links in the guest's namespace. Links in the
// directories above the last element are not followed: udev's by-id and
// by-path directories are real ones.
func (fs rootedFS) follow(path string) (string, error) {
	path = filepath.Clean("/" + path)
	for range 40 {
		info, err := os.Lstat(fs.host(path))
		if err != nil {
			return "", err
		}
		if info.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(fs.host(path))
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = filepath.Clean(target)
	}
	return "", fmt.Errorf("too many links from %s", path)
}

// FileExists follows links, as bosh-utils' Stat does.
func (fs rootedFS) FileExists(path string) bool {
	_, err := fs.Stat(path)
	return err == nil || !os.IsNotExist(err)
}

func (fs rootedFS) Stat(path string) (os.FileInfo, error) {
	resolved, err := fs.follow(path)
	if err != nil {
		return nil, err
	}
	return os.Stat(fs.host(resolved))
}

func (fs rootedFS) Lstat(path string) (os.FileInfo, error) { return os.Lstat(fs.host(path)) }

// Readlink returns the link's text unchanged: the mapped resolver joins a
// relative one to the link's own guest path.
func (fs rootedFS) Readlink(path string) (string, error) { return os.Readlink(fs.host(path)) }

// WriteFileString writes under root: the scsi resolver asks the SCSI host
// to rescan by writing its scan file, which must exist (the kernel makes
// it), as the test's /sys tree has it.
func (fs rootedFS) WriteFileString(path, content string) error {
	f, err := os.OpenFile(fs.host(path), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
