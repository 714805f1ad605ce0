// Command cdromsettings reads a VM's agent settings from the CD-ROM ISO
// that bosh.io's vSphere stemcell reads, with the real bosh-agent code
// configured as that stemcell configures its agent, and prints what the
// agent would see.
//
//	cdromsettings -iso env.iso
//
// It parses the CDROM source of the vSphere stemcell's
// /var/vcap/bosh/agent.json (bosh-linux-stemcell-builder, stage
// bosh_vsphere_agent_settings: Type CDROM, FileName env) with the agent's
// own JSON decoding and builds it with the agent's
// infrastructure.SettingsSourceFactory. That source reads the file through
// Platform.GetFileContentsFromCDROM, which here is what the agent's Linux
// platform does: its cdrom.CDUtil (cdutil.go: wait for the media, make the
// mount point, mount, read, unmount, eject) over its LinuxCdrom on
// /dev/sr0 (udevadm settle, then mount /dev/sr0 with no type or label,
// umount, eject -v), with a command runner that shows the ISO's files at
// the mount point, as the guest kernel would, and fails a command it does
// not know. Newer stemcells list VsphereGuestInfo first, which fails on a
// CloudStack VM (no guestinfo) before the CDROM source is asked; that
// source is not run here.
//
// On success it prints {"settings": …, "commands": […]} on stdout; on
// failure the agent's error text on stderr and exit status 1.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	boshinf "github.com/cloudfoundry/bosh-agent/v2/infrastructure"
	"github.com/cloudfoundry/bosh-agent/v2/platform/cdrom"
	"github.com/cloudfoundry/bosh-agent/v2/platform/platformfakes"
	udevfakes "github.com/cloudfoundry/bosh-agent/v2/platform/udevdevice/fakes"
	boshsettings "github.com/cloudfoundry/bosh-agent/v2/settings"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	boshsys "github.com/cloudfoundry/bosh-utils/system"
	fakesys "github.com/cloudfoundry/bosh-utils/system/fakes"

	"github.com/bosh-cloudstack/cloudstack-cpi/tools/internal/agentcmd"
	"github.com/bosh-cloudstack/cloudstack-cpi/tools/internal/isofiles"
)

// stemcellInfrastructure is the CDROM source of the vSphere stemcell's
// agent.json, parsed by the agent's own decoding.
const stemcellInfrastructure = `{
  "Settings": {
    "Sources": [
      {
        "Type": "CDROM",
        "FileName": "env"
      }
    ],
    "UseServerName": false,
    "UseRegistry": false
  }
}`

// sr0 is the CD-ROM device the agent's Linux platform reads.
const sr0 = "/dev/sr0"

// settingsMountPath is where the agent's platform mounts the CD-ROM
// (dirProvider.SettingsDir(): /var/vcap/bosh/settings).
const settingsMountPath = "/var/vcap/bosh/settings"

// Result is what the command prints on success: the settings and the
// commands the agent's CD-ROM code ran, in order.
type Result struct {
	Settings boshsettings.Settings `json:"settings"`
	Commands []string              `json:"commands"`
}

// guestRunner runs the CD-ROM's commands against the ISO: mount shows its
// files at the mount point, umount empties it, eject is recorded; any
// other command fails, so nothing reaches the host.
type guestRunner struct {
	*fakesys.FakeCmdRunner
	iso      string
	fs       boshsys.FileSystem
	mounted  string
	commands []string
}

func (r *guestRunner) RunCommand(name string, args ...string) (string, string, int, error) {
	r.commands = append(r.commands, strings.Join(append([]string{name}, args...), " "))
	switch {
	case name == "mount" && len(args) == 2 && args[0] == sr0:
		r.mounted = args[1]
		return "", "", 0, isofiles.Mount(r.iso, r.fs, args[1])
	case name == "umount" && len(args) == 1 && args[0] == sr0 && r.mounted != "":
		return "", "", 0, isofiles.Unmount(r.fs, r.mounted)
	case name == "eject" && len(args) == 2 && args[0] == "-v" && args[1] == sr0:
		return "", "", 0, nil
	}
	return "", "unknown command", 1, fmt.Errorf("cdromsettings: the agent ran %q, which this guest does not run", name)
}

// Read fetches the settings from the ISO at isoPath as the agent's
// bootstrap does.
func Read(isoPath string, logger boshlog.Logger) (Result, error) {
	var res Result
	var opts boshinf.Options
	if err := json.Unmarshal([]byte(stemcellInfrastructure), &opts); err != nil {
		return res, fmt.Errorf("parsing the stemcell's agent.json infrastructure: %w", err)
	}
	if _, err := os.Stat(isoPath); err != nil {
		return res, err
	}
	fs := fakesys.NewFakeFileSystem()
	runner := &guestRunner{FakeCmdRunner: fakesys.NewFakeCmdRunner(), iso: isoPath, fs: fs}
	if err := fs.WriteFile(sr0, nil); err != nil {
		return res, err
	}
	udev := udevfakes.NewFakeUdevDevice()
	util := cdrom.NewCdUtil(settingsMountPath, fs, cdrom.NewLinuxCdrom(sr0, udev, runner), logger)
	platform := &platformfakes.FakePlatform{}
	platform.GetFsReturns(fs)
	platform.GetFileContentsFromCDROMStub = func(name string) ([]byte, error) {
		contents, err := util.GetFilesContents([]string{name})
		if err != nil {
			return nil, err
		}
		return contents[0], nil
	}
	platform.SetupNetworkingReturns(errors.New("cdromsettings: refusing to change the host's networking"))
	boot, err := agentcmd.Bootstrap(opts.Settings, platform, logger)
	res.Settings, res.Commands = boot.Settings, runner.commands
	return res, err
}

const usage = "usage: cdromsettings -iso env.iso\n\n" +
	"Reads agent settings with bosh-agent's CDROM settings source, configured as the\n" +
	"vSphere stemcell's agent.json configures it, and prints them as JSON.\n\n"

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cdromsettings", flag.ContinueOnError)
	iso := fs.String("iso", "", "the CD-ROM ISO file")
	check := func() error {
		if *iso == "" {
			return errors.New("-iso is required")
		}
		return nil
	}
	return agentcmd.Run(fs, usage, args, stdout, stderr, check, func(logger boshlog.Logger) (any, error) {
		return Read(*iso, logger)
	})
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
