// Package isofiles shows an ISO's files to the agent's code as the guest
// kernel's isofs would after a mount: read by go-diskfs under their Rock
// Ridge names and copied into the agent's (in-memory) file system.
package isofiles

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	boshsys "github.com/cloudfoundry/bosh-utils/system"
	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// Open reads the image with go-diskfs; close the file when done.
func Open(isoPath string) (*iso9660.FileSystem, *os.File, error) {
	f, err := os.Open(isoPath)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	iso, err := iso9660.Read(file.New(f, true), st.Size(), 0, 0)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("reading %s as ISO 9660: %w", isoPath, err)
	}
	return iso, f, nil
}

// Label is the volume identifier as blkid reports it (ID_FS_LABEL),
// padding trimmed: empty for none.
func Label(isoPath string) (string, error) {
	iso, f, err := Open(isoPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return strings.TrimRight(iso.Label(), "\x00 "), nil
}

// Mount copies the ISO's files under mountPoint in fs.
func Mount(isoPath string, fs boshsys.FileSystem, mountPoint string) error {
	iso, f, err := Open(isoPath)
	if err != nil {
		return err
	}
	defer f.Close()
	return copyTree(iso, fs, "/", mountPoint)
}

func copyTree(iso *iso9660.FileSystem, fs boshsys.FileSystem, dir, to string) error {
	entries, err := iso.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading directory %s of the ISO: %w", dir, err)
	}
	for _, e := range entries {
		src, dst := path.Join(dir, e.Name()), path.Join(to, e.Name())
		if e.IsDir() {
			if err := fs.MkdirAll(dst, 0o700); err != nil {
				return err
			}
			if err := copyTree(iso, fs, src, dst); err != nil {
				return err
			}
			continue
		}
		r, err := iso.OpenFile(src, os.O_RDONLY)
		if err != nil {
			return fmt.Errorf("opening %s on the ISO: %w", src, err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("reading %s on the ISO: %w", src, err)
		}
		if err := fs.WriteFile(dst, b); err != nil {
			return err
		}
	}
	return nil
}

// Unmount leaves the mount point empty, as umount does.
func Unmount(fs boshsys.FileSystem, mountPoint string) error {
	if err := fs.RemoveAll(mountPoint); err != nil {
		return err
	}
	return fs.MkdirAll(mountPoint, 0o700)
}
