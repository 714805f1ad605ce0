// Command devicepaths finds a VM's disks the way the BOSH agent on the
// CloudStack stemcell finds them, with bosh-agent v2.769.0's own device
// path resolver, in a device tree under a directory instead of /dev.
//
//	devicepaths -root DIR < settings.json
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

// NewResolver is the agent's virtio resolver over a device tree under root.
func NewResolver(root string, mappedTimeout time.Duration, logger boshlog.Logger) devicepathresolver.DevicePathResolver {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved // so that resolved links compare with it
	}
	fs := rootedFS{root: root}
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
	logLevel := fs.String("log-level", "ERROR", "bosh-agent log level on stderr: DEBUG, INFO, WARN, ERROR, NONE")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *root == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: devicepaths -root DIR < settings.json")
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
	res := Resolve(settings, NewResolver(*root, *mapped, boshlog.NewWriterLogger(level, stderr)))
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
