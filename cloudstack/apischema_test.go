package cloudstack_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// TestEveryRequestIsInEachSupportedRelease: every command the layer sends,
// and every parameter it gives each, is in the API of each release from
// cloudstack.OldestSupported on (the release's own listApis, as the
// simulator serves it). CloudStack answers a command it lacks as unknown
// and ignores a parameter it lacks (ParamGenericValidationWorker only logs
// it), so the CPI would lose what it asked for without an error.
func TestEveryRequestIsInEachSupportedRelease(t *testing.T) {
	sent := sentRequests(t)
	checkTheReadingIsComplete(t, sent)
	var releases []schema.Version
	for _, v := range schema.Versions() {
		if ok, _ := cloudstack.Supported(string(v)); ok {
			releases = append(releases, v)
		}
	}
	if len(releases) < 2 || releases[len(releases)-1] != schema.Newest {
		t.Fatalf("supported releases %v: the reading of cloudstack.OldestSupported is broken", releases)
	}
	for _, v := range releases {
		api, err := schema.For(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range slices.Sorted(maps.Keys(sent)) {
			a, ok := api.Lookup(cmd)
			if !ok || a.Name != cmd {
				t.Errorf("CloudStack %s has no command %s, which the CPI sends: read the version where the CPI "+
					"sends it (Client.CloudStackVersion) and do without or answer NotSupported naming it, or raise "+
					"cloudstack.OldestSupported", v, cmd)
				continue
			}
			for _, p := range slices.Sorted(maps.Keys(sent[cmd])) {
				if _, ok := a.Param(p); !ok {
					t.Errorf("CloudStack %s's %s has no parameter %s, which the CPI sends: it would be ignored",
						v, cmd, p)
				}
			}
		}
	}
}

// checkTheReadingIsComplete: the reading finds exactly the commands the
// layer's lists name, and each way of giving a parameter is read: a
// constructor's, a setter's, one set through an interface, SetParam's
// constant, one set by a helper, and names held in a variable and in a
// map's keys passed down a call.
func checkTheReadingIsComplete(t *testing.T, sent map[string]map[string]bool) {
	t.Helper()
	listed := slices.Concat(cloudstack.Commands, cloudstack.OptionalCommands, cloudstack.DoctorCommands)
	for _, cmd := range listed {
		if sent[cmd] == nil {
			t.Errorf("the reading found no %s, which cloudstack.Commands lists", cmd)
		}
	}
	for cmd := range sent {
		if !slices.Contains(listed, cmd) {
			t.Errorf("the reading found %s, which no list names", cmd)
		}
	}
	for _, want := range [][2]string{{"deployVirtualMachine", "zoneid"}, {"deployVirtualMachine", "keypair"},
		{"listLoadBalancerRules", "projectid"}, {"getUser", "userapikey"}, {"registerIso", "bootable"},
		{"registerIso", "projectid"}, {"listServiceOfferings", "name"}, {"listServiceOfferings", "id"},
		{"listVolumes", "pagesize"}} {
		if !sent[want[0]][want[1]] {
			t.Errorf("the reading missed %s's %s: %v", want[0], want[1], sent[want[0]])
		}
	}
}
