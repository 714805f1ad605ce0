// Package agentcmd is what the tools that read settings as bosh-agent
// reads them share: the agent's bootstrap order, and the command line
// (flags, the agent's logger, the answer as JSON).
package agentcmd

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	boshinf "github.com/cloudfoundry/bosh-agent/v2/infrastructure"
	"github.com/cloudfoundry/bosh-agent/v2/platform/platformfakes"
	boshsettings "github.com/cloudfoundry/bosh-agent/v2/settings"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

// Run adds -log-level to fs, parses args (flags only), checks them with
// check (nil for none), calls read with bosh-agent's logger on stderr and
// prints read's result as indented JSON on stdout. usage is printed
// before the flags on -h. It returns the exit status: 2 for bad usage, 1
// when read fails, whose error (the agent's own text) goes to stderr.
func Run(fs *flag.FlagSet, usage string, args []string, stdout, stderr io.Writer,
	check func() error, read func(boshlog.Logger) (any, error)) int {
	fs.SetOutput(stderr)
	logLevel := fs.String("log-level", "ERROR", "bosh-agent log level on stderr: DEBUG, INFO, WARN, ERROR, NONE")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments: %v\n", fs.Name(), fs.Args())
		return 2
	}
	if check == nil {
		check = func() error { return nil }
	}
	if err := check(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return 2
	}
	level, err := boshlog.Levelify(*logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return 2
	}
	res, err := read(boshlog.NewWriterLogger(level, stderr))
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return 1
	}
	return 0
}

// Boot is what the agent's bootstrap got from its settings source.
type Boot struct {
	Source    boshsettings.Source
	PublicKey string
	Settings  boshsettings.Settings
}

// Bootstrap builds the settings source of opts with the agent's own
// factory over platform and asks it what the agent's bootstrap
// (agent/bootstrap.go) asks, in its order: the IaaS public key of vcap,
// then the settings. Errors carry the agent's wording. The platform is
// bosh-agent's fake; asking it to set up networking is an error, since
// nothing here may change the host.
func Bootstrap(opts boshinf.SettingsOptions, platform *platformfakes.FakePlatform, logger boshlog.Logger) (Boot, error) {
	var b Boot
	var err error
	b.Source, err = boshinf.NewSettingsSourceFactory(opts, platform, logger).New()
	if err != nil {
		return b, fmt.Errorf("Getting Settings Source: %w", err) //nolint:staticcheck // the agent's own wording (ST1005)
	}
	b.PublicKey, err = b.Source.PublicSSHKeyForUsername(boshsettings.VCAPUsername)
	if err != nil {
		return b, fmt.Errorf("Setting up ssh: Getting iaas public key: %w", err) //nolint:staticcheck // the agent's own wording (ST1005)
	}
	b.Settings, err = b.Source.Settings()
	if err != nil {
		return b, fmt.Errorf("Fetching settings: %w", err) //nolint:staticcheck // the agent's own wording (ST1005)
	}
	if n := platform.SetupNetworkingCallCount(); n > 0 {
		return b, fmt.Errorf("the agent's code asked to set up networking %d time(s)", n)
	}
	return b, nil
}
