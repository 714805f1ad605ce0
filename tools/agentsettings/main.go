// Command agentsettings reads a VM's agent settings from a metadata service
// with the real bosh-agent code, configured as the CloudStack stemcell
// configures its agent, and prints what the agent would see.
//
//	agentsettings -uri http://HOST:PORT/metadata/<vm-uuid>
//
// It builds the agent's settings source from the same "Infrastructure"
// options the stemcell's /var/vcap/bosh/agent.json holds (one HTTP source),
// with only the URI replaced, and calls the agent's own
// infrastructure.SettingsSourceFactory, MultiSettingsSource and
// HTTPMetadataService. It performs no change on the host: the agent's
// Platform is bosh-agent's counterfeiter fake, which reports eth0 as already
// configured so the HTTP source does not run DHCP, and refuses any network
// setup should it be asked for one.
//
// On success it prints {"settings": …, "instance_id": …, "public_key": …} on
// stdout; on failure it prints the agent's error text on stderr and exits 1.
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
	"github.com/cloudfoundry/bosh-agent/v2/platform/platformfakes"
	boshsettings "github.com/cloudfoundry/bosh-agent/v2/settings"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/tools/internal/agentcmd"
)

// StemcellURI is the metadata URI in the CloudStack stemcell's agent.json
// (mdproxy4cs listens there and forwards to the virtual router).
const StemcellURI = "http://169.254.169.254:39724"

// stemcellInfrastructure is the "Infrastructure" object of the CloudStack
// stemcell's /var/vcap/bosh/agent.json (bosh-linux-stemcell-builder,
// stages/bosh_cloudstack_agent_settings). It is parsed by the agent's own
// JSON decoding (infrastructure.SourceOptionsSlice.UnmarshalJSON).
const stemcellInfrastructure = `{
  "Settings": {
    "Sources": [
      {
        "Type": "HTTP",
        "URI": "http://169.254.169.254:39724",
        "UserDataPath": "/latest/user-data",
        "InstanceIDPath": "/latest/meta-data/instance-id",
        "SSHKeysPath": "/latest/meta-data/public-keys"
      }
    ]
  }
}`

// Result is what the command prints on success.
type Result struct {
	Settings   boshsettings.Settings `json:"settings"`
	InstanceID string                `json:"instance_id"`
	PublicKey  string                `json:"public_key"`
}

// errNoHostChanges is what the fake platform answers if the agent's code
// asks it to configure networking.
var errNoHostChanges = errors.New("agentsettings: refusing to change the host's networking")

// StemcellOptions returns the agent's infrastructure options of the
// CloudStack stemcell with the HTTP source's URI replaced by uri.
func StemcellOptions(uri string) (boshinf.Options, error) {
	var opts boshinf.Options
	if err := json.Unmarshal([]byte(stemcellInfrastructure), &opts); err != nil {
		return opts, fmt.Errorf("parsing the stemcell's agent.json infrastructure: %w", err)
	}
	for i, src := range opts.Settings.Sources {
		if h, ok := src.(boshinf.HTTPSourceOptions); ok {
			h.URI = strings.TrimSuffix(uri, "/")
			opts.Settings.Sources[i] = h
		}
	}
	return opts, nil
}

// NoopPlatform returns bosh-agent's fake Platform set up so the agent's
// settings sources change nothing on the host: eth0 counts as configured
// (so the HTTP source skips its DHCP setup) and SetupNetworking fails.
func NoopPlatform() *platformfakes.FakePlatform {
	p := &platformfakes.FakePlatform{}
	p.GetConfiguredNetworkInterfacesReturns([]string{"eth0"}, nil)
	p.SetupNetworkingReturns(errNoHostChanges)
	return p
}

// Read fetches the settings the way the agent's bootstrap does: the IaaS
// public key for vcap first, then the settings; then the instance id from
// the HTTP source.
func Read(uri string, logger boshlog.Logger) (Result, error) {
	var res Result
	opts, err := StemcellOptions(uri)
	if err != nil {
		return res, err
	}
	platform := NoopPlatform()
	boot, err := agentcmd.Bootstrap(opts.Settings, platform, logger)
	if err != nil {
		return res, err
	}
	res.PublicKey, res.Settings = boot.PublicKey, boot.Settings
	if multi, ok := boot.Source.(*boshinf.MultiSettingsSource); ok {
		for _, s := range multi.GetSources() {
			if ms, ok := s.(boshinf.HTTPMetadataService); ok {
				if res.InstanceID, err = ms.GetInstanceID(); err != nil {
					return res, fmt.Errorf("Getting instance id: %w", err) //nolint:staticcheck // the agent's own wording (ST1005)
				}
				break
			}
		}
	}
	if n := platform.SetupNetworkingCallCount(); n > 0 {
		return res, fmt.Errorf("the agent's code asked to set up networking %d time(s)", n)
	}
	return res, nil
}

const usage = "usage: agentsettings -uri http://HOST:PORT/metadata/<vm-uuid>\n\n" +
	"Reads agent settings with bosh-agent's HTTP settings source, configured as the\n" +
	"CloudStack stemcell's agent.json configures it, and prints them as JSON.\n\n"

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentsettings", flag.ContinueOnError)
	uri := fs.String("uri", StemcellURI, "metadata service base URI, e.g. http://HOST:PORT/metadata/<vm-uuid>; the agent appends /latest/user-data etc.")
	return agentcmd.Run(fs, usage, args, stdout, stderr, nil, func(logger boshlog.Logger) (any, error) {
		return Read(*uri, logger)
	})
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
