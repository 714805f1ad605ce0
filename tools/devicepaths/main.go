// Command devicepaths finds a VM's disks the way the BOSH agent on the
// CloudStack stemcell finds them, with bosh-agent v2.769.0's own device
// path resolver, in a device tree under a directory instead of /dev.
//
//	devicepaths -root DIR [-type virtio|scsi] < settings.json
//
// -type scsi builds the agent's scsi resolver instead, as bosh.io's
// vSphere stemcell's agent.json asks (NewSCSIResolver); it reads the
// guest's /sys/bus/scsi/devices and writes the SCSI host's scan file under
// -root.
//
// The stemcell's agent.json sets DevicePathResolutionType "virtio", for
// which the agent's platform provider builds a virtio resolver over an id
// resolver (500 ms) and a mapped resolver (30 s). This command builds the
// same three from bosh-agent's devicepathresolver package. They reach the
// disk only through the agent's boshsys.FileSystem, with absolute /dev/...
// paths; the command hands them a FileSystem that reads those paths under
// -root, so a test can lay out dev/xvdb, dev/disk/by-id/virtio-… and so on
// as plain files and relative symlinks. Nothing outside -root is read, and
// udev is bosh-agent's fake (the agent runs udevadm trigger and settle).
//
// stdin holds agent settings (bosh-agent's settings.Settings JSON; only
// "disks" matters). As the agent does, the ephemeral disk is resolved from
// Settings.EphemeralDiskSettings and each persistent disk from
// Settings.PersistentDiskSettings(cid), whose ID is the disk CID and whose
// DeviceID, VolumeID and Path come from the hint. stdout holds
//
//	{"ephemeral": {"path": "/dev/xvdb"}, "persistent": {"<cid>": {"path": "/dev/xvdc"}}}
//
// with "error" (the agent's text) in place of "path" for a disk the agent
// would not find; the exit status is 0 even then, 2 for bad input.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cloudfoundry/bosh-agent/v2/infrastructure/devicepathresolver"
	udevfakes "github.com/cloudfoundry/bosh-agent/v2/platform/udevdevice/fakes"
	boshsettings "github.com/cloudfoundry/bosh-agent/v2/settings"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

// The timeouts bosh-agent's platform provider gives the virtio resolver's
// two parts (platform/provider.go).
const (
	agentIDTimeout     = 500 * time.Millisecond
	agentMappedTimeout = 30 * time.Second
)

// Found is where the agent found one disk, or why it did not.
type Found struct {
	Path  string `json:"path,omitempty"`
	Error string `json:"error,omitempty"`
}

// Result is what the command prints.
type Result struct {
	Ephemeral  *Found           `json:"ephemeral,omitempty"`
	Persistent map[string]Found `json:"persistent"`
}

// The agent's scsi resolver's parts' timeouts (platform/provider.go, case
// "scsi"): the volume id resolver retries its glob 30 times this far apart.
const (
	agentSCSIVolumeIDWait = 500 * time.Millisecond
	agentSCSIIDTimeout    = 50 * time.Second
)

// Resolution types, as agent.json's DevicePathResolutionType names them.
const (
	TypeVirtio = "virtio"
	TypeSCSI   = "scsi"
)

// NewSCSIResolver is the agent's scsi resolver (bosh.io's vSphere
// stemcell's DevicePathResolutionType) over a device tree under root,
// built as platform/provider.go builds it: a hint's id goes to the SCSI id
// resolver (/dev/disk/by-id after a rescan), a volume id (a plain string
// hint) to the volume id resolver (the unit on the root disk's SCSI host),
// a lun and host device id to the lun resolver.
func NewSCSIResolver(root string, logger boshlog.Logger) devicepathresolver.DevicePathResolver {
	fs := rootedFS{root: realRoot(root)}
	id := devicepathresolver.NewSCSIIDDevicePathResolver(agentSCSIIDTimeout, fs, logger)
	volume := devicepathresolver.NewSCSIVolumeIDDevicePathResolver(agentSCSIVolumeIDWait, fs)
	lun := devicepathresolver.NewSCSILunDevicePathResolver(agentSCSIIDTimeout, fs, logger)
	return devicepathresolver.NewScsiDevicePathResolver(volume, id, lun)
}

// realRoot is root absolute and without links, so that resolved links
// compare with it.
func realRoot(root string) string {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved
	}
	return root
}

// NewResolver is the agent's virtio resolver over a device tree under root.
func NewResolver(root string, mappedTimeout time.Duration, logger boshlog.Logger) devicepathresolver.DevicePathResolver {
	fs := rootedFS{root: realRoot(root)}
	udev := udevfakes.NewFakeUdevDevice()
	id := devicepathresolver.NewIDDevicePathResolver(agentIDTimeout, udev, fs, "", "", logger)
	mapped := devicepathresolver.NewMappedDevicePathResolver(mappedTimeout, fs)
	return devicepathresolver.NewVirtioDevicePathResolver(id, mapped, logger)
}

// Resolve finds the ephemeral disk (when the settings name one) and every
// persistent disk of the settings.
func Resolve(settings boshsettings.Settings, resolver devicepathresolver.DevicePathResolver) Result {
	res := Result{Persistent: map[string]Found{}}
	if settings.Disks.Ephemeral != nil {
		f := find(resolver, settings.EphemeralDiskSettings())
		res.Ephemeral = &f
	}
	for cid := range settings.Disks.Persistent {
		disk, _ := settings.PersistentDiskSettings(cid)
		res.Persistent[cid] = find(resolver, disk)
	}
	return res
}

func find(resolver devicepathresolver.DevicePathResolver, disk boshsettings.DiskSettings) Found {
	path, _, err := resolver.GetRealDevicePath(disk)
	if err != nil {
		return Found{Error: err.Error()}
	}
	return Found{Path: path}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("devicepaths", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "", "directory holding the guest's dev/ tree")
	mapped := fs.Duration("mapped-timeout", agentMappedTimeout, "how long the mapped resolver waits for a missing device (the agent's is 30s)")
	typ := fs.String("type", TypeVirtio, "the stemcell's DevicePathResolutionType: "+TypeVirtio+" (CloudStack's and OpenStack's stemcells) or "+TypeSCSI+" (vSphere's)")
	logLevel := fs.String("log-level", "ERROR", "bosh-agent log level on stderr: DEBUG, INFO, WARN, ERROR, NONE")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *root == "" || fs.NArg() > 0 || (*typ != TypeVirtio && *typ != TypeSCSI) {
		fmt.Fprintln(stderr, "usage: devicepaths -root DIR [-type virtio|scsi] < settings.json")
		return 2
	}
	level, err := boshlog.Levelify(*logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "devicepaths: %v\n", err)
		return 2
	}
	var settings boshsettings.Settings
	if err := json.NewDecoder(stdin).Decode(&settings); err != nil {
		fmt.Fprintf(stderr, "devicepaths: reading the agent settings: %v\n", err)
		return 2
	}
	logger := boshlog.NewWriterLogger(level, stderr)
	resolver := NewResolver(*root, *mapped, logger)
	if *typ == TypeSCSI {
		resolver = NewSCSIResolver(*root, logger)
	}
	res := Resolve(settings, resolver)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		fmt.Fprintf(stderr, "devicepaths: %v\n", err)
		return 1
	}
	return 0
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
