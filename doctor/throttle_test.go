package doctor

import (
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
)

// throttledCloud is the fake on which every check passes, but for what
// CloudStack's throttle refuses.
func throttledCloud(commands ...string) *fakeCloud {
	f := &fakeCloud{hypervisor: hypervisor.XenServer, network: cloudstack.Network{ID: "n-1", Name: "guest", UserData: true},
		throttled: map[string]bool{}}
	for _, c := range commands {
		f.throttled[c] = true
	}
	return f
}

// TestThrottledListApis: listApis, which counts once per command the role
// allows, may never get past the throttle; doctor checks the keys with
// listZones instead, says the commands could not be listed and why, and
// the other checks run and pass.
func TestThrottledListApis(t *testing.T) {
	results := Run(testConfig(t, nil), throttledCloud("listApis"), Options{CloudConfig: oneNetwork})
	if keys := rowOf(t, results, CheckKeys); !keys.OK || keys.Result != "accepted" {
		t.Errorf("keys %+v", keys)
	}
	cmds := rowOf(t, results, CheckCommands)
	if !cmds.OK || !strings.Contains(cmds.Result, "could not check: "+cloudstack.ThrottledText+" listApis") ||
		!strings.Contains(cmds.Fix, "root admin") || !strings.Contains(cmds.Fix, "once per command the role allows") {
		t.Errorf("commands %+v", cmds)
	}
	if !AllOK(results) {
		t.Errorf("the other checks should pass: %+v", results)
	}
}

// TestThrottledKeys: with listZones refused too, the keys could not be
// checked: the row says throttled and how to get past it, not that the
// keys are wrong.
func TestThrottledKeys(t *testing.T) {
	results := Run(testConfig(t, nil), throttledCloud("listApis", "listZones"), Options{})
	if ep := rowOf(t, results, CheckEndpoint); !ep.OK {
		t.Errorf("CloudStack answered: %+v", ep)
	}
	keys := rowOf(t, results, CheckKeys)
	if keys.OK || !strings.HasPrefix(keys.Result, "throttled, not checked: "+cloudstack.ThrottledText+" listZones") ||
		keys.Fix != throttleFix {
		t.Errorf("keys %+v", keys)
	}
}

// TestThrottledCheckSaysSo: a check whose call the throttle refused past
// request_timeout reads "throttled" with the throttle's fix, not its own.
func TestThrottledCheckSaysSo(t *testing.T) {
	row := rowOf(t, Run(testConfig(t, nil), throttledCloud("listHypervisors"), Options{}), CheckZone)
	if row.OK || !strings.HasPrefix(row.Result, "throttled, not checked: listHypervisors failed: "+cloudstack.ThrottledText) ||
		row.Fix != throttleFix {
		t.Errorf("zone %+v", row)
	}
}

// TestLatencyLeavesOutThrottleWaits: what listZones slept on the
// throttle's behalf is not CloudStack's answer time.
func TestLatencyLeavesOutThrottleWaits(t *testing.T) {
	f := throttledCloud()
	f.zonesWait = time.Hour
	// Each reading of the clock is an hour and 5 ms after the last: a
	// timed call takes that, of which the hour was the throttle's.
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Hour + 5*time.Millisecond); return clock }
	row := rowOf(t, Run(testConfig(t, nil), f, Options{Now: now}), CheckPolling)
	if !row.OK || !strings.HasPrefix(row.Result, "API answers in 5ms (median of 5; slowest 5ms)") ||
		!strings.Contains(row.Result, "5h0m0s of waiting on CloudStack's API throttle left out") {
		t.Errorf("polling %+v", row)
	}
}
