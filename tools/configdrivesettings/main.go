// Command configdrivesettings reads a VM's agent settings from a config
// drive ISO with the real bosh-agent code, configured as bosh.io's
// OpenStack stemcell configures its agent, and prints what the agent
// would see.
//
//	configdrivesettings -iso config-2.iso
//
// It parses the "Infrastructure" block of the OpenStack stemcell's
// /var/vcap/bosh/agent.json with the agent's own JSON decoding (sources
// File, then ConfigDrive with DiskPaths /dev/disk/by-label/CONFIG-2 then
// config-2, MetaDataPath ec2/latest/meta-data.json and UserDataPath
// ec2/latest/user-data, then HTTP), and builds the sources with the
// agent's infrastructure.SettingsSourceFactory; -sources config-drive
// keeps the ConfigDrive source alone. That source reads the drive through
// Platform.GetFilesContentsFromDisk; here that is the agent's own
// diskUtil.GetFilesContents (does the device exist, mount it on a temporary
// directory, read the files, unmount) over an in-memory file system, with
// a mounter that presents the ISO's files, read by go-diskfs under their
// Rock Ridge names, as the guest kernel would. The ISO appears as
// /dev/disk/by-label/<its volume label>, as udev names it.
//
// On success it prints {"settings": …, "public_key": …, "mounts": […]} on
// stdout; on failure the agent's error text on stderr and exit status 1.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	boshinf "github.com/cloudfoundry/bosh-agent/v2/infrastructure"
	"github.com/cloudfoundry/bosh-agent/v2/platform/platformfakes"
	boshsettings "github.com/cloudfoundry/bosh-agent/v2/settings"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/tools/internal/agentcmd"
)

// stemcellInfrastructure is the "Infrastructure" object of the OpenStack
// stemcell's /var/vcap/bosh/agent.json (bosh-linux-stemcell-builder,
// stages/bosh_openstack_agent_settings/apply.sh), parsed by the agent's
// own decoding (infrastructure.SourceOptionsSlice.UnmarshalJSON).
const stemcellInfrastructure = `{
  "Settings": {
    "Sources": [
      {
        "Type": "File",
        "SettingsPath": "/var/vcap/bosh/agent-bootstrap-env.json"
      },
      {
        "Type": "ConfigDrive",
        "DiskPaths": [
          "/dev/disk/by-label/CONFIG-2",
          "/dev/disk/by-label/config-2"
        ],
        "MetaDataPath": "ec2/latest/meta-data.json",
        "UserDataPath": "ec2/latest/user-data"
      },
      {
        "Type": "HTTP",
        "URI": "http://169.254.169.254",
        "UserDataPath": "/latest/user-data",
        "InstanceIDPath": "/latest/meta-data/instance-id",
        "SSHKeysPath": "/latest/meta-data/public-keys/0/openssh-key"
      }
    ],
    "UseServerName": true,
    "UseRegistry": true
  }
}`

// Result is what the command prints on success. Mounts are the device
// paths the agent's code mounted, in order.
type Result struct {
	Settings  boshsettings.Settings `json:"settings"`
	PublicKey string                `json:"public_key"`
	Mounts    []string              `json:"mounts"`
}

var errNoHostChanges = errors.New("configdrivesettings: refusing to change the host's networking")

// Which of the stemcell's sources the tool runs (-sources).
const (
	// SourcesStemcell is all three, in the stemcell's order, as the agent
	// runs them on a CloudStack VM: File finds no file, ConfigDrive reads
	// the ISO, HTTP is reached only when ConfigDrive fails.
	SourcesStemcell = "stemcell"
	// SourcesConfigDrive is the ConfigDrive source alone: its own contract,
	// in which meta-data.json is required and gives the public key.
	SourcesConfigDrive = "config-drive"
)

// StemcellOptions returns the OpenStack stemcell's settings sources, all
// of them or the ConfigDrive source alone.
func StemcellOptions(sources string) (boshinf.SettingsOptions, error) {
	var opts boshinf.Options
	if err := json.Unmarshal([]byte(stemcellInfrastructure), &opts); err != nil {
		return opts.Settings, fmt.Errorf("parsing the stemcell's agent.json infrastructure: %w", err)
	}
	switch sources {
	case SourcesStemcell:
		return opts.Settings, nil
	case SourcesConfigDrive:
	default:
		return opts.Settings, fmt.Errorf("-sources %q: want %s or %s", sources, SourcesStemcell, SourcesConfigDrive)
	}
	var kept boshinf.SourceOptionsSlice
	for _, src := range opts.Settings.Sources {
		if cd, ok := src.(boshinf.ConfigDriveSourceOptions); ok {
			kept = append(kept, cd)
		}
	}
	if len(kept) == 0 {
		return opts.Settings, errors.New("the stemcell's agent.json has no ConfigDrive source")
	}
	opts.Settings.Sources = kept
	return opts.Settings, nil
}

// Read fetches the settings from the ISO at isoPath the way the agent's
// bootstrap does: the IaaS public key for vcap first, then the settings.
//
// The platform is bosh-agent's fake: its file system (the File source's)
// is the guest's in-memory one, without agent-bootstrap-env.json; it
// reports no configured network interfaces, as at first boot, so the
// HTTP source asks it to set up DHCP on eth0, which it refuses. The HTTP
// source thus fails at once, before any request; on a CloudStack VM it
// fails too, later, since nothing serves 169.254.169.254 there.
func Read(isoPath, sources string, logger boshlog.Logger) (Result, error) {
	var res Result
	opts, err := StemcellOptions(sources)
	if err != nil {
		return res, err
	}
	guest, err := newGuest(isoPath, logger)
	if err != nil {
		return res, err
	}
	platform := &platformfakes.FakePlatform{}
	platform.GetFsReturns(guest.fs)
	platform.GetFilesContentsFromDiskStub = guest.util.GetFilesContents
	platform.SetupNetworkingReturns(errNoHostChanges)
	boot, err := agentcmd.Bootstrap(opts, platform, logger)
	res.PublicKey, res.Settings, res.Mounts = boot.PublicKey, boot.Settings, guest.mounts
	return res, err
}

const usage = "usage: configdrivesettings -iso config-2.iso [-sources stemcell|config-drive]\n\n" +
	"Reads agent settings with bosh-agent's ConfigDrive settings source, configured\n" +
	"as the OpenStack stemcell's agent.json configures it, and prints them as JSON.\n\n"

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("configdrivesettings", flag.ContinueOnError)
	iso := fs.String("iso", "", "the config drive ISO file")
	sources := fs.String("sources", SourcesStemcell, "the stemcell's settings sources to run: "+SourcesStemcell+" (File, ConfigDrive, HTTP) or "+SourcesConfigDrive+" (ConfigDrive alone)")
	check := func() error {
		if *iso == "" {
			return errors.New("-iso is required")
		}
		_, err := StemcellOptions(*sources)
		return err
	}
	return agentcmd.Run(fs, usage, args, stdout, stderr, check, func(logger boshlog.Logger) (any, error) {
		return Read(*iso, *sources, logger)
	})
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
