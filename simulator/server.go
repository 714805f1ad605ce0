// Package simulator is a CloudStack management server simulator (4.22, or
// the API of 4.20 or 4.19: Options.CloudStackVersion): it
// speaks the real API at /client/api (signature checks, sessions, schema
// validation, async jobs, CloudStack's response and error shapes) over an
// in-memory cloud seeded like the stock simulator's advanced zone, and adds
// /sim/ endpoints for tests (request log, fault injection).
//
// Simulator plumbing: Server wires the HTTP paths to the kernel and the
// families, whose handlers cite the Java they follow.
//
// Only response=json is supported: the simulator answers JSON whatever the
// response parameter says, as the clients it serves all ask for JSON.
package simulator

import (
	"cmp"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/identity"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/infrastructure"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/template"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/transfers"
)

// Options configure a Server.
type Options struct {
	// CloudStackVersion is the release the simulator is: its API (the
	// commands and parameters of that release's listApis), the version
	// listCapabilities and the hosts report, and the behaviour that
	// follows from the API. Empty is schema.Newest (4.22).
	CloudStackVersion schema.Version
	// AdminAPIKey and AdminSecretKey preset the admin user's API keys. Empty
	// leaves the admin without keys until registerUserKeys is called.
	AdminAPIKey, AdminSecretKey string
	// Hypervisor of the simulated hosts: XenServer, KVM, VMware or
	// Simulator. Empty means XenServer for a new zone and keeps the stored
	// hypervisor when the state is loaded.
	Hypervisor string
	// JobLatency is how long async jobs take. Zero completes a job before the
	// request that queued it is answered.
	JobLatency time.Duration
	// JobLatencyFor gives the jobs of the commands it names their own
	// latency instead of JobLatency, e.g. deployVirtualMachine 2s and
	// createTags 300ms. Each name must be a command of the release served.
	JobLatencyFor map[string]time.Duration
	// APIThrottling presets the api.throttling.* global settings at start,
	// as an operator's configuration rows; a nil field keeps the stored
	// setting. CloudStack's rate limiter reads them only when it starts.
	APIThrottling APIThrottling
	// StatePath persists the state there after every change and loads it at
	// start. Empty keeps the state in memory.
	StatePath string
	// AllowLoopbackURLs lets template URLs point at loopback addresses,
	// which CloudStack refuses (for tests serving images locally).
	AllowLoopbackURLs bool
	// TemplateLatency is how long each stage of a template download, upload
	// or copy takes besides moving the bytes: the secondary storage VM
	// picking the work up, installing the image. Zero runs them as fast as
	// the bytes move.
	TemplateLatency time.Duration
	// UploadMonitorInterval sets upload.monitoring.interval at start (the
	// setting shows it in whole seconds, rounded up); zero keeps the stored
	// setting (60 s by default). The management server's upload monitor
	// notices a finished POST upload only on its next poll.
	UploadMonitorInterval time.Duration
	// UploadOperationTimeout sets upload.operation.timeout at start (the
	// setting shows whole minutes, rounded up): how long upload parameters
	// stay valid and after which a pending upload is abandoned or failed.
	// Zero keeps the stored setting (60 minutes by default).
	UploadOperationTimeout time.Duration
	// Empty starts a new state with only the root admin (and the OS types
	// and builtin template CloudStack installs with): no zone, no
	// offerings. A harness deploys them through the API. A loaded state is
	// kept as it is.
	Empty bool
	// ExtraZones adds advanced zones with these names next to
	// Sandbox-simulator (each with a pod, a cluster and a host of the same
	// hypervisor), e.g. for copyTemplate. A loaded state gains the ones it
	// lacks.
	ExtraZones []string
	// Faults are fault-injection rules active from the start.
	Faults []kernel.Fault
	// FaultSeed seeds probabilistic fault rules; 0 means 1.
	FaultSeed int64
	// ExpungeInterval and ExpungeDelay set the expunge.interval and
	// expunge.delay global settings (seconds) at start; zero keeps the stored
	// settings (CloudStack's default, 86400).
	ExpungeInterval, ExpungeDelay int
	// VMStatsInterval sets the vm.stats.interval global setting at start
	// (the setting shows whole milliseconds, rounded up); zero keeps the
	// stored setting (CloudStack's default, 60 s). VMs show statistics
	// once the stats collector has run while they were Running.
	VMStatsInterval time.Duration
	// VMStatsInitialDelay is how long after start the stats collector first
	// runs: a test instrument, zero is StatsCollector's 15 s.
	VMStatsInitialDelay time.Duration
	// Logger gets one line per API request (method, command, status,
	// latency; never parameters). Nil discards.
	Logger *log.Logger
}

// APIThrottling is the API rate limit's global settings
// (ApiRateLimitServiceImpl: Config.ApiLimitEnabled, ApiLimitInterval,
// ApiLimitMax, ApiLimitCacheSize).
type APIThrottling struct {
	Enabled *bool // api.throttling.enabled (default false)
	// Interval is api.throttling.interval, the window in seconds (default 1).
	Interval *int
	// Max is api.throttling.max, the calls an account may make in a window
	// (default 25).
	Max *int
	// CacheSize is api.throttling.cachesize, the accounts counted at once
	// (default 50000; 0 is no bound).
	CacheSize *int
}

// preset stores the given settings in the state.
func (a APIThrottling) preset(st *model.State) {
	str := func(n *int) *string {
		if n == nil {
			return nil
		}
		return model.Ptr(strconv.Itoa(*n))
	}
	if a.Enabled != nil {
		infrastructure.PresetSetting(st, model.SettingAPILimitEnabled, model.Ptr(strconv.FormatBool(*a.Enabled)))
	}
	infrastructure.PresetSetting(st, model.SettingAPILimitInterval, str(a.Interval))
	infrastructure.PresetSetting(st, model.SettingAPILimitMax, str(a.Max))
	infrastructure.PresetSetting(st, model.SettingAPILimitCache, str(a.CacheSize))
}

// checkJobLatencies refuses a latency for a command the API does not have
// or a negative one: a misspelt name would otherwise be silently ignored.
func checkJobLatencies(api *schema.Schema, m map[string]time.Duration) error {
	for name, d := range m {
		if cmd, ok := api.Lookup(name); !ok || cmd.Name != name {
			return fmt.Errorf("job latency for %q: no such API command in CloudStack %s (names are case-sensitive)", name, api.Version)
		}
		if d < 0 {
			return fmt.Errorf("job latency for %s: negative duration %s", name, d)
		}
	}
	return nil
}

// Server is the simulator. Create it with New, serve Handler, Close it to
// stop pending jobs and save the state.
type Server struct {
	*kernel.Engine
	*template.SSVM
	opts     Options
	handler  http.Handler
	expunger *periodicTask // guarded by the engine's Mu
	vmStats  *periodicTask // StatsCollector's VmStatsCollector (vmstats.go)
}

// New creates a simulator, loading Options.StatePath when it exists and
// seeding a fresh zone otherwise.
func New(opts Options) (*Server, error) {
	registerCommands()
	api, err := schema.For(cmp.Or(opts.CloudStackVersion, schema.Newest))
	if err != nil {
		return nil, err
	}
	if err := checkJobLatencies(api, opts.JobLatencyFor); err != nil {
		return nil, err
	}
	if opts.Hypervisor != "" {
		hv, err := infrastructure.CanonicalHypervisor(opts.Hypervisor)
		if err != nil {
			return nil, err
		}
		opts.Hypervisor = hv
	}
	s := &Server{opts: opts, Engine: &kernel.Engine{Faults: kernel.NewFaultSet(opts.FaultSeed), Xfer: transfers.New(opts.StatePath),
		JobLatency: opts.JobLatency, JobLatencyFor: opts.JobLatencyFor, StatePath: opts.StatePath, Logger: opts.Logger, Schema: api,
		Sessions: map[string]*kernel.Session{}, Timers: map[string]*time.Timer{}, Started: time.Now().UTC()}}
	s.SSVM = &template.SSVM{Engine: s.Engine, AllowLoopbackURLs: opts.AllowLoopbackURLs,
		TemplateLatency: opts.TemplateLatency, UploadMonitorInterval: opts.UploadMonitorInterval,
		UploadOperationTimeout: opts.UploadOperationTimeout}
	s.Ext = s.SSVM
	if n := transfers.Sweep(s.Xfer.Base()); n > 0 {
		s.Logf("removed %d image directories left by simulators that are gone", n)
	}
	for _, f := range opts.Faults {
		if err := s.Faults.Add(f); err != nil {
			return nil, err
		}
	}
	if err := s.loadOrSeed(); err != nil {
		return nil, err
	}
	// ApiRateLimitServiceImpl.configure: the limit read once, at start.
	throttle, err := kernel.NewThrottle(s.State)
	if err != nil {
		return nil, err
	}
	s.Throttle = throttle
	s.SSVMSites = template.InternalSites(s.State.Setting(model.SettingInternalSites))
	s.StartUploadMonitor()
	s.handler = s.routes()
	s.startExpungeTask()
	s.startVMStatsCollector()
	return s, nil
}

func (s *Server) loadOrSeed() error {
	var st *model.State
	if s.opts.StatePath != "" {
		loaded, err := model.LoadState(s.opts.StatePath)
		if err != nil {
			return err
		}
		st = loaded
	}
	if st == nil {
		st = seedState(cmp.Or(s.opts.Hypervisor, model.DefaultHypervisor), s.opts.Empty, s.Now())
	} else {
		kernel.FailInterruptedJobs(st, s.Now())
		template.FailInterruptedTransfers(st)
		template.SeedTemplates(st, st.FirstZoneHypervisor(), s.Now())
		st.EnsurePublicNetworks(s.Now()) // zones saved before their public network was kept
		if s.opts.Hypervisor != "" {
			infrastructure.SetHypervisor(st, s.opts.Hypervisor)
		}
	}
	seedExtraZones(st, s.opts.ExtraZones, st.FirstZoneHypervisor(), s.Now())
	infrastructure.PresetDurationSetting(st, model.SettingUploadInterval, s.opts.UploadMonitorInterval, time.Second)
	infrastructure.PresetDurationSetting(st, model.SettingUploadTimeout, s.opts.UploadOperationTimeout, time.Minute)
	infrastructure.PresetDurationSetting(st, model.SettingExpungeInterval, time.Duration(s.opts.ExpungeInterval)*time.Second, time.Second)
	infrastructure.PresetDurationSetting(st, model.SettingExpungeDelay, time.Duration(s.opts.ExpungeDelay)*time.Second, time.Second)
	infrastructure.PresetDurationSetting(st, model.SettingVMStatsInterval, s.opts.VMStatsInterval, time.Millisecond)
	s.opts.APIThrottling.preset(st)
	if st.UploadKey == "" {
		st.UploadKey = identity.NewKey()
	}
	if s.opts.AdminAPIKey != "" || s.opts.AdminSecretKey != "" {
		admin := st.AdminUser()
		admin.APIKey, admin.SecretKey = s.opts.AdminAPIKey, s.opts.AdminSecretKey
	}
	s.State = st
	s.Dirty = true
	s.Persist()
	return s.SaveErr
}

// Close stops pending jobs (they stay pending in the saved state and fail on
// the next start, like jobs of a stopped management server) and saves.
func (s *Server) Close() error {
	// Transfers take the lock to record progress: stop them first.
	s.Xfer.Close()
	s.stopExpungeTask()
	s.vmStats.stopPeriodic()
	s.vmStats = nil
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Closed = true
	for id, t := range s.Timers {
		t.Stop()
		delete(s.Timers, id)
	}
	s.Dirty = true
	s.Persist()
	return s.SaveErr
}

// Handler serves the API at /client/api, the test endpoints under /sim/ and
// the virtual router's metadata service under /metadata/ (metadata.go).
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/client/api", s.ServeAPI)
	mux.HandleFunc("/client/api/", s.ServeAPI)
	mux.Handle("/sim/", s.adminHandler())
	mux.HandleFunc("/upload/", s.ServeUpload)
	mux.Handle("/metadata/", s.metadataHandler())
	return mux
}

// ServeHTTP makes a Server usable as an http.Handler directly.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// The kernel's names the simulator's clients use (spec/, the CLI's
// -fault flag): a fault rule and its stages, a request log entry.
type (
	// Fault is a fault-injection rule (kernel.Fault).
	Fault = kernel.Fault
	// LoggedRequest is one entry of the request log (kernel.LoggedRequest).
	LoggedRequest = kernel.LoggedRequest
)

// The stages a fault rule acts at.
const (
	StageRequest = kernel.StageRequest
	StageJob     = kernel.StageJob
)
