package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/cloudfoundry/bosh-agent/v2/platform/disk"
	"github.com/cloudfoundry/bosh-agent/v2/platform/disk/diskfakes"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	fakesys "github.com/cloudfoundry/bosh-utils/system/fakes"
	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// cdrom is the device node the ISO is attached as; udev links
// /dev/disk/by-label/<label> to it.
const cdrom = "/dev/sr0"

// guest is what the agent's disk code sees of a VM with the ISO attached:
// an in-memory file system where udev's by-label link exists, and a
// mounter that shows the ISO's files under the mount point.
type guest struct {
	iso    string
	device string
	fs     *fakesys.FakeFileSystem
	util   disk.Util
	mounts []string
}

func newGuest(isoPath string, logger boshlog.Logger) (*guest, error) {
	label, err := volumeLabel(isoPath)
	if err != nil {
		return nil, err
	}
	g := &guest{iso: isoPath, device: "/dev/disk/by-label/" + udevEncode(label), fs: fakesys.NewFakeFileSystem()}
	// The agent's temporary root; its diskUtil mounts under TempDir("diskutil").
	g.fs.TempDirDir = "/var/vcap/data/tmp/diskutil"
	for _, node := range []string{cdrom, g.device} {
		if err := g.fs.WriteFile(node, nil); err != nil {
			return nil, err
		}
	}
	mounter := &diskfakes.FakeMounter{}
	mounter.MountStub = g.mount
	mounter.UnmountStub = g.unmount
	g.util = disk.NewUtil(fakesys.NewFakeCmdRunner(), mounter, g.fs, logger)
	return g, nil
}

// openISO reads the image with go-diskfs.
func openISO(isoPath string) (*iso9660.FileSystem, *os.File, error) {
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

// volumeLabel is the volume identifier as blkid reports it (ID_FS_LABEL),
// padding trimmed.
func volumeLabel(isoPath string) (string, error) {
	iso, f, err := openISO(isoPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return strings.TrimRight(iso.Label(), "\x00 "), nil
}

// udevEncode is the by-label link name udev makes of a label
// (ID_FS_LABEL_ENC): bytes outside its plain set written as \xNN.
// Multi-byte UTF-8, which udev keeps, is escaped here too.
func udevEncode(label string) string {
	var b strings.Builder
	for i := 0; i < len(label); i++ {
		c := label[i]
		plain := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("#+-.:=@_", c) >= 0
		if plain {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	return b.String()
}

// mount is `mount <device> <mountPoint>` of the ISO: the kernel's isofs
// shows Rock Ridge names, which go-diskfs reads too.
func (g *guest) mount(device, mountPoint string, _ ...string) error {
	g.mounts = append(g.mounts, device)
	if device != g.device && device != cdrom {
		return fmt.Errorf("mount: %s: special device does not exist", device)
	}
	iso, f, err := openISO(g.iso)
	if err != nil {
		return err
	}
	defer f.Close()
	return g.copyTree(iso, "/", mountPoint)
}

func (g *guest) copyTree(iso *iso9660.FileSystem, dir, to string) error {
	entries, err := iso.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading directory %s of the ISO: %w", dir, err)
	}
	for _, e := range entries {
		src, dst := path.Join(dir, e.Name()), path.Join(to, e.Name())
		if e.IsDir() {
			if err := g.fs.MkdirAll(dst, 0o700); err != nil {
				return err
			}
			if err := g.copyTree(iso, src, dst); err != nil {
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
		if err := g.fs.WriteFile(dst, b); err != nil {
			return err
		}
	}
	return nil
}

// unmount leaves the mount point empty, as umount does.
func (g *guest) unmount(mountPoint string) (bool, error) {
	if err := g.fs.RemoveAll(mountPoint); err != nil {
		return false, err
	}
	return true, g.fs.MkdirAll(mountPoint, 0o700)
}
