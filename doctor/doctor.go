// Package doctor is `cloudstack-cpi doctor`: read-only checks, in order, of
// what the CPI needs from a CloudStack, each with its result and, when it
// fails, what to do. It asks CloudStack only through the cloudstack layer's
// lookups and creates nothing.
package doctor

import (
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// Result is one check: what was checked, whether it passed, what was found
// and, for a failure, the fix.
type Result struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Result string `json:"result"`
	Fix    string `json:"fix"`
}

// Cloud is what doctor asks of CloudStack: lookups only.
type Cloud interface {
	APIs() (map[string]bool, error)
	CloudStackVersion() (string, error)
	MayExpunge() (bool, error)
	Setting(name string) (string, error)
	HasKeyPair(name string) (bool, error)
	Zones() ([]cloudstack.ZoneStatus, error)
	// ThrottleWaited is how long calls have slept on CloudStack's API
	// throttle's behalf so far.
	ThrottleWaited() time.Duration
	cloudstack.ZoneCatalog
	cloudstack.ComputeCatalog
	cloudstack.DiskCatalog
	cloudstack.NetworkCatalog
}

var _ Cloud = (*cloudstack.Client)(nil)

// Options are what doctor checks against besides CloudStack.
type Options struct {
	// CloudConfig is the director's cloud-config, when one was given.
	CloudConfig *CloudConfig
	// Resolve looks a host name up (net.DefaultResolver.LookupHost).
	Resolve func(host string) ([]string, error)
	// Now is the clock the latency check reads (time.Now when nil).
	Now func() time.Time
}

// run is one doctor: the config, CloudStack, and what the checks found
// that later checks need.
type run struct {
	cfg     config.Config
	cloud   Cloud
	opts    Options
	apis    map[string]bool
	apisErr error // listApis refused or failed after the keys were accepted
	zone    *cloudstack.ZoneStatus
	hvs     []cloudstack.Hypervisor
	latency []time.Duration
	waited  time.Duration // of the timed calls, on the throttle's behalf
	results []Result
}

// The checks' names, in the order they run.
const (
	CheckEndpoint  = "endpoint"
	CheckKeys      = "keys"
	CheckVersion   = "version"
	CheckCommands  = "commands"
	CheckExpunge   = "expunge"
	CheckZone      = "zone"
	CheckOfferings = "offerings"
	CheckKeyPairs  = "key pairs"
	CheckNetworks  = "networks"
	CheckWebDAV    = "webdav"
	CheckUploads   = "uploads"
	CheckPolling   = "job polling"
)

// Run runs every check in order. A check that cannot run because one it
// needs failed (CloudStack unreachable, keys refused, no zone) is reported
// as not checked, and fails.
func Run(cfg config.Config, cloud Cloud, opts Options) []Result {
	r := &run{cfg: cfg, cloud: cloud, opts: opts}
	steps := []struct {
		name, needs string
		check       func()
	}{
		{CheckEndpoint, "", r.checkAccess}, // and CheckKeys
		{CheckVersion, CheckKeys, r.checkVersion},
		{CheckCommands, CheckKeys, r.checkCommands},
		{CheckExpunge, CheckKeys, r.checkExpunge},
		{CheckZone, CheckKeys, r.checkZone},
		{CheckOfferings, CheckKeys, r.checkOfferings},
		{CheckKeyPairs, CheckKeys, r.checkKeyPairs},
		{CheckNetworks, CheckKeys, r.checkNetworks}, // and the default zone
		{CheckWebDAV, CheckKeys, r.checkWebDAV},
		{CheckUploads, CheckKeys, r.checkUploads},
		{CheckPolling, CheckKeys, r.checkLatency},
	}
	for _, s := range steps {
		if s.needs == "" || r.passed(s.needs) {
			s.check()
			continue
		}
		r.fail(s.name, "not checked: the "+s.needs+" check failed", "fix the "+s.needs+" check first")
	}
	r.markThrottled()
	return r.results
}

// AllOK says every check passed.
func AllOK(results []Result) bool {
	for _, r := range results {
		if !r.OK {
			return false
		}
	}
	return len(results) > 0
}

// passed says the named check ran and every row of it passed.
func (r *run) passed(check string) bool {
	ran := false
	for _, res := range r.results {
		if res.Check == check {
			if !res.OK {
				return false
			}
			ran = true
		}
	}
	return ran
}

func (r *run) pass(check, result string) {
	r.results = append(r.results, Result{Check: check, OK: true, Result: result})
}

// unchecked is a check that could not be made for want of permission: it
// does not fail doctor, and says who can make it.
func (r *run) unchecked(check, result, fix string) {
	r.results = append(r.results, Result{Check: check, OK: true, Result: "could not check: " + result, Fix: fix})
}

func (r *run) fail(check, result, fix string) {
	r.results = append(r.results, Result{Check: check, Result: result, Fix: fix})
}

// timed runs f and keeps how long CloudStack took to answer, leaving out
// what the call slept on the API throttle's behalf.
func (r *run) timed(f func() error) error {
	now := r.opts.Now
	if now == nil {
		now = time.Now
	}
	start, before := now(), r.cloud.ThrottleWaited()
	err := f()
	waited := r.cloud.ThrottleWaited() - before
	r.waited += waited
	r.latency = append(r.latency, max(now().Sub(start)-waited, 0))
	return err
}
