// Command cloudstack-simulator runs the CloudStack API simulator: 4.22, or
// with -cloudstack-version 4.20 (or 4.19) that release's API.
//
//	cloudstack-simulator -listen 127.0.0.1:8080 -admin-keys KEY:SECRET -state sim.json
//
// With -empty a new state has only the root admin (admin/password; its keys
// are -admin-keys if given) and no zone: the zone is then deployed through
// the admin API (hack/zone/ does it with the cloudstack CLI).
//
// Template uploads (getUploadParamsForTemplate) are POSTed to
// http://ADDR/upload/<template id> on the same listener.
//
// It prints "cloudstack-simulator listening on http://ADDR/client/api" once
// it accepts connections (with -listen 127.0.0.1:0 the line carries the
// port actually chosen) and saves its state on SIGINT/SIGTERM. The command
// is plumbing with no CloudStack Java of its own; what it serves follows
// the Java cited in the simulator package (docs/development/simulator-fidelity.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cloudstack-simulator:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("cloudstack-simulator", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8080", "address to serve http://HOST:PORT/client/api on")
	adminKeys := fs.String("admin-keys", "", "preset the admin user's API keys as KEY:SECRET")
	version := fs.String("cloudstack-version", string(schema.Newest), "the CloudStack release to be: "+
		strings.Join(schema.VersionNames(), ", ")+" (its API's commands and parameters, the version listCapabilities reports)")
	hypervisor := fs.String("hypervisor", "XenServer", "hypervisor of the simulated hosts: XenServer, KVM, VMware or Simulator (a loaded -state keeps its own unless this is given)")
	latency := fs.Duration("job-latency", 200*time.Millisecond, "how long async jobs take")
	latencyFor := jobLatencies{}
	fs.Var(latencyFor, "job-latency-for", "how long the jobs of the commands named take instead of -job-latency, as COMMAND=DURATION,... e.g. deployVirtualMachine=2s,createTags=300ms (repeatable)")
	throttleEnabled := fs.Bool("api-throttling-enabled", false, "set the global setting api.throttling.enabled at start: limit each account but the root admin to -api-throttling-max calls per window (a loaded -state keeps its own unless this is given)")
	throttleInterval := fs.Int("api-throttling-interval", 1, "set the global setting api.throttling.interval at start: the window in seconds (if given)")
	throttleMax := fs.Int("api-throttling-max", 25, "set the global setting api.throttling.max at start: calls an account may make in a window (if given)")
	throttleCache := fs.Int("api-throttling-cachesize", 50000, "set the global setting api.throttling.cachesize at start: accounts counted at once (if given)")
	statePath := fs.String("state", "", "file keeping the state across restarts")
	loopback := fs.Bool("allow-loopback-urls", false, "accept template URLs on loopback addresses")
	templateLatency := fs.Duration("template-latency", 100*time.Millisecond, "how long each stage of a template download, upload or copy takes besides moving the bytes")
	uploadInterval := fs.Duration("upload-monitoring-interval", 0, "set the global setting upload.monitoring.interval at start: how often the management server polls the SSVM about POSTed templates, which become ready only then (0 keeps the setting: 60s unless changed; finer than CloudStack's whole seconds for tests)")
	uploadTimeout := fs.Duration("upload-operation-timeout", 0, "set the global setting upload.operation.timeout at start: when upload parameters expire and a pending upload is abandoned (0 keeps the setting: 60m unless changed)")
	var extraZones zoneNames
	fs.Var(&extraZones, "extra-zone", "add an advanced zone with this name next to Sandbox-simulator (repeatable)")
	expungeInterval := fs.Int("expunge-interval", 0, "the expunge.interval global setting in seconds: how often destroyed VMs are expunged (0: CloudStack's 86400)")
	expungeDelay := fs.Int("expunge-delay", 0, "the expunge.delay global setting in seconds: how long a destroyed VM keeps its addresses and name (0: CloudStack's 86400)")
	vmStatsInterval := fs.Duration("vm-stats-interval", 0, "set the global setting vm.stats.interval at start: how often VM statistics are collected; a VM shows cpuused, network*, disk* and memory* once a collection saw it Running (0 keeps the setting: 60s unless changed)")
	vmStatsDelay := fs.Duration("vm-stats-initial-delay", 0, "how long after start VM statistics are first collected (0: CloudStack's 15s; shorter for tests)")
	empty := fs.Bool("empty", false, "start a new state with only the root admin and no zone or offerings (deploy them through the API, e.g. with hack/zone/)")
	quiet := fs.Bool("quiet", false, "do not log API requests to stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cs, err := schema.ParseVersion(*version)
	if err != nil {
		return fmt.Errorf("-cloudstack-version: %w", err)
	}
	opts := simulator.Options{CloudStackVersion: cs, JobLatency: *latency, StatePath: *statePath, AllowLoopbackURLs: *loopback,
		TemplateLatency: *templateLatency, ExtraZones: extraZones, ExpungeInterval: *expungeInterval,
		ExpungeDelay: *expungeDelay, UploadMonitorInterval: *uploadInterval, UploadOperationTimeout: *uploadTimeout,
		Empty: *empty, JobLatencyFor: latencyFor, VMStatsInterval: *vmStatsInterval, VMStatsInitialDelay: *vmStatsDelay}
	opts.APIThrottling = throttlingFlags(fs, *throttleEnabled, *throttleInterval, *throttleMax, *throttleCache)
	if n := opts.APIThrottling.Interval; n != nil && *n < 0 {
		return fmt.Errorf("-api-throttling-interval must not be negative: %d", *n)
	}
	// An explicit -hypervisor also converts a loaded state; the default only
	// applies to a new zone.
	opts.Hypervisor = *hypervisor
	if *statePath != "" && !flagSet(fs, "hypervisor") {
		opts.Hypervisor = ""
	}
	if *adminKeys != "" {
		key, secret, ok := strings.Cut(*adminKeys, ":")
		if !ok || key == "" || secret == "" {
			return errors.New("-admin-keys must be KEY:SECRET")
		}
		opts.AdminAPIKey, opts.AdminSecretKey = key, secret
	}
	if !*quiet {
		opts.Logger = log.New(os.Stderr, "cloudstack-simulator: ", log.LstdFlags|log.Lmicroseconds)
	}
	sim, err := simulator.New(opts)
	if err != nil {
		return err
	}
	return serve(sim, *listen)
}

// zoneNames collects repeated -extra-zone flags.
type zoneNames []string

func (z *zoneNames) String() string { return strings.Join(*z, ",") }

func (z *zoneNames) Set(name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("empty zone name")
	}
	*z = append(*z, name)
	return nil
}

// jobLatencies collects -job-latency-for COMMAND=DURATION pairs; the
// simulator checks the command names against the API. Job latency is a
// test instrument with no CloudStack Java behind it (a real job takes what
// its work takes).
type jobLatencies map[string]time.Duration

func (j jobLatencies) String() string {
	pairs := make([]string, 0, len(j))
	for name, d := range j {
		pairs = append(pairs, name+"="+d.String())
	}
	return strings.Join(pairs, ",")
}

func (j jobLatencies) Set(list string) error {
	for _, pair := range strings.Split(list, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || name == "" {
			return fmt.Errorf("%q is not COMMAND=DURATION", pair)
		}
		d, err := time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		j[name] = d
	}
	return nil
}

// throttlingFlags presets only the api.throttling settings whose flags were
// given, so a loaded -state keeps the rest. The flags' defaults are
// CloudStack's (Config.ApiLimitEnabled, ApiLimitInterval, ApiLimitMax,
// ApiLimitCacheSize: false, 1, 25, 50000), and the settings take effect at
// start only, as ApiRateLimitServiceImpl.configure reads them once.
func throttlingFlags(fs *flag.FlagSet, enabled bool, interval, maxCalls, cache int) simulator.APIThrottling {
	var t simulator.APIThrottling
	if flagSet(fs, "api-throttling-enabled") {
		t.Enabled = &enabled
	}
	if flagSet(fs, "api-throttling-interval") {
		t.Interval = &interval
	}
	if flagSet(fs, "api-throttling-max") {
		t.Max = &maxCalls
	}
	if flagSet(fs, "api-throttling-cachesize") {
		t.CacheSize = &cache
	}
	return t
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// serve listens, announces the address, and shuts down gracefully on
// SIGINT/SIGTERM: in-flight requests finish, then the state is saved.
func serve(sim *simulator.Server, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		// the state is saved on the way out all the same; report both
		return errors.Join(err, sim.Close())
	}
	srv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 30 * time.Second}
	fmt.Printf("cloudstack-simulator listening on http://%s/client/api\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = srv.Shutdown(shutdown)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, sim.Close())
}
