package main

import (
	"fmt"
	"strings"

	"github.com/cloudfoundry/bosh-agent/v2/platform/disk"
	"github.com/cloudfoundry/bosh-agent/v2/platform/disk/diskfakes"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	fakesys "github.com/cloudfoundry/bosh-utils/system/fakes"

	"github.com/bosh-cloudstack/cloudstack-cpi/tools/internal/isofiles"
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
	label, err := isofiles.Label(isoPath)
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
	return isofiles.Mount(g.iso, g.fs, mountPoint)
}

// unmount leaves the mount point empty, as umount does.
func (g *guest) unmount(mountPoint string) (bool, error) {
	return true, isofiles.Unmount(g.fs, mountPoint)
}
