package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/doctor"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/termtable"
)

// doctorCommand is `cloudstack-cpi doctor -configPath cpi.json [-json]
// [-cloud-config FILE]`: read-only checks of what the CPI needs from
// CloudStack; exit 0 only when every one passes.
func doctorCommand(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("cloudstack-cpi doctor", flag.ContinueOnError)
	flags.SetOutput(stderr)
	configPath := flags.String("configPath", "", "path to cpi.json")
	asJSON := flags.Bool("json", false, "print a JSON array of {check, ok, result, fix}")
	cloudConfig := flags.String("cloud-config", "", "a BOSH cloud-config YAML whose AZs, networks, VM and disk types to check")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *configPath == "" || flags.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: cloudstack-cpi doctor -configPath cpi.json [-json] [-cloud-config FILE]")
		return 2
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, "invalid CPI config:", jsonwords.Message(err))
		return 2
	}
	var opts doctor.Options
	if *cloudConfig != "" {
		if opts.CloudConfig, err = doctor.LoadCloudConfig(*cloudConfig); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	// One request per check: a retry would hide the flakiness doctor is
	// there to show, and would make an unreachable endpoint slow to report.
	// CloudStack's API throttle is waited out still, within request_timeout
	// and logged on stderr, as the CPI does: its 429 is the cloud's rule,
	// not flakiness, and is not counted in max_retries.
	noRetries := 0
	cfg.CloudStack.MaxRetries = &noRetries
	cloud, err := cloudstack.New(cfg.CloudStack, boshlog.NewWriterLogger(boshlog.LevelWarn, stderr))
	if err != nil {
		fmt.Fprintln(stderr, "invalid CPI config:", err)
		return 2
	}
	results := doctor.Run(cfg, cloud, opts)
	if err := printResults(stdout, results, *asJSON); err != nil {
		fmt.Fprintln(stderr, "writing the results:", err)
		return 1
	}
	if !doctor.AllOK(results) {
		return 1
	}
	return 0
}

func printResults(w io.Writer, results []doctor.Result, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	o := termtable.For(w)
	return doctor.Table(results, o).Write(w, o)
}
