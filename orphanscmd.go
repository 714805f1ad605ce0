package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/termtable"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/trust"
	"github.com/bosh-cloudstack/cloudstack-cpi/orphans"
	"github.com/bosh-cloudstack/cloudstack-cpi/registry"
)

const orphansUsage = "usage: cloudstack-cpi orphans -configPath cpi.json [-delete] [-older-than 1h] [-known FILE]... " +
	"[-director UUID] [-json]"

// orphansCommand is `cloudstack-cpi orphans`: it lists what the CPI made
// that no director call reaches any more and, with -delete, removes it.
// Exit 0 when the listing (and every removal) succeeded.
func orphansCommand(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("cloudstack-cpi orphans", flag.ContinueOnError)
	flags.SetOutput(stderr)
	configPath := flags.String("configPath", "", "path to cpi.json")
	remove := flags.Bool("delete", false, "remove what is listed")
	olderThan := flags.Duration("older-than", time.Hour, "list only what is at least this old: a running call may still be making younger resources")
	director := flags.String("director", "", "list only the resources of this director uuid")
	asJSON := flags.Bool("json", false, "print JSON")
	known := &orphans.Known{}
	flags.Func("known", "a file of the CIDs the director knows (bosh CLI --json, or one CID per line); repeatable",
		known.ReadFile)
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *configPath == "" || flags.NArg() > 0 || *olderThan < 0 {
		fmt.Fprintln(stderr, orphansUsage)
		return 2
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "invalid CPI config: %s\n", jsonwords.Message(err))
		return 1
	}
	// The client logs warnings only: a request per line would bury the list.
	cloud, err := cloudstack.New(cfg.CloudStack, boshlog.NewWriterLogger(boshlog.LevelWarn, stderr))
	if err != nil {
		fmt.Fprintf(stderr, "invalid CPI config: %s\n", err)
		return 1
	}
	o := orphans.Options{OlderThan: *olderThan, Director: *director, Known: known, Now: time.Now()}
	rows, err := orphans.Find(cloud, o)
	if err != nil {
		fmt.Fprintf(stderr, "listing CloudStack's resources: %s\n", err)
		return 1
	}
	failed := 0
	if *remove {
		if failed, err = removeOrphans(cloud, cfg, rows, stderr); err != nil {
			fmt.Fprintf(stderr, "invalid CPI config: %s\n", err)
			return 1
		}
	}
	if err := printOrphans(stdout, rows, o.Now, *asJSON); err != nil {
		fmt.Fprintf(stderr, "writing the list: %s\n", err)
		return 1
	}
	summarise(stderr, rows, *remove, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

// removeOrphans removes the rows as delete_vm and the CPI's sweeps do,
// reporting each on stderr; it says how many it could not remove.
func removeOrphans(cloud orphans.Cloud, cfg config.Config, rows []orphans.Row, stderr io.Writer) (int, error) {
	rm := orphans.Removal{Expunge: *cfg.CloudStack.ExpungeVM, JobTimeout: cfg.CloudStack.JobTimeout.D(),
		Progress: func(r orphans.Row) { reportRemoval(stderr, r) }}
	var err error
	if rm.ForgetSettings, err = registrySettings(cfg); err != nil {
		return 0, err
	}
	return orphans.Delete(cloud, rows, rm), nil
}

// registrySettings deletes a VM's settings from the registry old
// stemcells read theirs from; nil without registry.endpoint.
func registrySettings(cfg config.Config) (func(string) error, error) {
	r := cfg.Registry
	if r.Endpoint == "" {
		return nil, nil
	}
	transport, err := trust.Transport(trust.PEM{Setting: "cloudstack.ca_cert", Text: cfg.CloudStack.CACert},
		trust.PEM{Setting: "registry.tls_cert", Text: r.TLSCert})
	if err != nil {
		return nil, err
	}
	client, err := registry.NewClient(r.Endpoint, r.Username, r.Password, &http.Client{Transport: transport, Timeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	return client.Delete, nil
}

func printOrphans(w io.Writer, rows []orphans.Row, now time.Time, asJSON bool) error {
	if asJSON {
		return orphans.WriteJSON(w, rows, now)
	}
	return orphans.Write(w, termtable.For(w), rows, now)
}

func reportRemoval(w io.Writer, r orphans.Row) {
	if r.Error != "" {
		fmt.Fprintf(w, "not deleted: %s %s (%s): %s\n", r.Kind, r.ID, r.Name, r.Error)
		return
	}
	fmt.Fprintf(w, "deleted %s %s (%s)\n", r.Kind, r.ID, r.Name)
}

// summarise says on stderr how many were found and removed, by kind.
func summarise(w io.Writer, rows []orphans.Row, removed bool, failed int) {
	counts := map[string]int{}
	var kinds []string
	for _, r := range rows {
		if counts[r.Kind] == 0 {
			kinds = append(kinds, r.Kind)
		}
		counts[r.Kind]++
	}
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	line := fmt.Sprintf("orphans: %d found", len(rows))
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	if removed {
		line += fmt.Sprintf("; %d deleted, %d not", len(rows)-failed, failed)
	}
	fmt.Fprintln(w, line)
}
