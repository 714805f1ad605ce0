package simulator_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// capabilitiesOf is listCapabilities' capability object.
func capabilitiesOf(t *testing.T, s *simtesting.Sim) map[string]any {
	t.Helper()
	r := s.Call(map[string]string{"command": "listCapabilities"})
	c, _ := r.Inner(t, "listcapabilitiesresponse")["capability"].(map[string]any)
	if c == nil {
		t.Fatalf("listCapabilities: %s", r.Raw)
	}
	return c
}

// TestCloudStackVersionIsTheReleaseServed: the simulator is the release
// Options.CloudStackVersion names: listCapabilities and the hosts report
// its version, listApis lists its commands with that release's response
// fields, and listCapabilities answers the fields that release's listApis
// lists (allowuserforcestopvm from 4.20, extensionspath in 4.22).
func TestCloudStackVersionIsTheReleaseServed(t *testing.T) {
	for _, c := range []struct {
		v              schema.Version
		release        string
		apis           int
		forceStop, ext bool
	}{
		{schema.V419, "4.19.0.0", 754, false, false},
		{schema.V420, "4.20.1.0", 856, true, false},
		{"", "4.22.0.0", 912, true, true},
	} {
		s := simtesting.Start(t, simulator.Options{CloudStackVersion: c.v})
		capability := capabilitiesOf(t, s)
		_, forceStop := capability["allowuserforcestopvm"]
		_, ext := capability["extensionspath"]
		if capability["cloudstackversion"] != c.release || forceStop != c.forceStop || ext != c.ext {
			t.Errorf("%q: listCapabilities = %v", c.v, capability)
		}
		hosts := simtesting.Items(t, s.Call(map[string]string{"command": "listHosts"}).Inner(t, "listhostsresponse"), "host")
		if len(hosts) == 0 || hosts[0]["version"] != c.release {
			t.Errorf("%q: hosts = %v", c.v, hosts)
		}
		apis := s.Call(map[string]string{"command": "listApis"}).Inner(t, "listapisresponse")
		if int(simtesting.Num(apis["count"])) != c.apis {
			t.Errorf("%q: listApis count = %v, want %d", c.v, apis["count"], c.apis)
		}
		fields := responseFields(t, s, "listCapabilities")
		if !fields["cloudstackversion"] || fields["allowuserforcestopvm"] != c.forceStop || fields["extensionspath"] != c.ext {
			t.Errorf("%q: listApis' listCapabilities response fields = %v", c.v, fields)
		}
	}
	if _, err := simulator.New(simulator.Options{CloudStackVersion: "4.21"}); err == nil {
		t.Error("CloudStack 4.21 accepted")
	}
}

// responseFields are the names of the response fields listApis lists for
// the command.
func responseFields(t *testing.T, s *simtesting.Sim, command string) map[string]bool {
	t.Helper()
	api := simtesting.Items(t, s.Call(map[string]string{"command": "listApis", "name": command}).Inner(t, "listapisresponse"), "api")
	if len(api) != 1 {
		t.Fatalf("listApis name=%s: %v", command, api)
	}
	fields := map[string]bool{}
	resp, _ := api[0]["response"].([]any)
	for _, f := range resp {
		name, _ := f.(map[string]any)["name"].(string)
		fields[name] = true
	}
	return fields
}

// TestCommandOfALaterReleaseIsUnknown: listExtensions is a 4.22 command
// (the simulator does not implement it, and says so); on 4.20 it answers
// as a misspelt command does, to a signed request (401) and in a session
// (ApiServer.checkCommandAvailable's 401). A job latency for it is refused
// on 4.20 as for any name the API does not have.
func TestCommandOfALaterReleaseIsUnknown(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	s.Call(map[string]string{"command": "listExtensions"}).WantError(t, "errorresponse", 432, 4555,
		"The API command listExtensions is not implemented by the CloudStack simulator")

	s = simtesting.Start(t, simulator.Options{CloudStackVersion: schema.V420})
	if r := s.Call(map[string]string{"command": "listExtensions"}); r.Status != 401 {
		t.Fatalf("signed listExtensions on 4.20 = %d %s", r.Status, r.Raw)
	}
	r, cookies := login(s, map[string]string{"username": "admin", "password": "password"})
	key := r.Inner(t, "loginresponse")["sessionkey"].(string)
	s.Post(url.Values{"command": {"listExtensions"}, "sessionkey": {key}, "response": {"json"}}, cookies...).
		WantError(t, "errorresponse", 401, 9999, "The given command 'listExtensions' either does not exist, is not available for user.")

	if _, err := simulator.New(simulator.Options{CloudStackVersion: schema.V420, JobLatencyFor: map[string]time.Duration{"listExtensions": 0}}); err == nil {
		t.Error("a job latency for a 4.22 command accepted on 4.20")
	}
}

// TestLBCIDRListIsUpdatedFrom422: updateLoadBalancerRule's cidrlist exists
// from 4.22 (UpdateLoadBalancerRuleCmd, since = "4.22"): 4.22 stores and
// validates it; 4.20's command has no such parameter, so the list stays
// as createLoadBalancerRule made it and an invalid one is not even read.
func TestLBCIDRListIsUpdatedFrom422(t *testing.T) {
	for _, c := range []struct {
		v       schema.Version
		updated bool
	}{{schema.V420, false}, {schema.V422, true}} {
		e := simtesting.NewVMEnv(t, simulator.Options{CloudStackVersion: c.v})
		ip := e.Associate(t)
		create := e.LbParams(ip.Id, "web", 80)
		create.SetCidrlist([]string{"10.0.0.0/8"})
		lb, err := e.CS.LoadBalancer.CreateLoadBalancerRule(create)
		if err != nil {
			t.Fatal(err)
		}
		up := e.CS.LoadBalancer.NewUpdateLoadBalancerRuleParams(lb.Id)
		up.SetCidrlist([]string{"192.168.0.0/16", "172.16.0.0/12"})
		got, err := e.CS.LoadBalancer.UpdateLoadBalancerRule(up)
		want := map[bool]string{false: "10.0.0.0/8", true: "192.168.0.0/16,172.16.0.0/12"}[c.updated]
		if err != nil || got.Cidrlist != want {
			t.Errorf("%s: updateLoadBalancerRule cidrlist = %+v, %v; want %q", c.v, got, err, want)
		}
		bad := e.CS.LoadBalancer.NewUpdateLoadBalancerRuleParams(lb.Id)
		bad.SetCidrlist([]string{"10.0.0.0/99"})
		if _, err := e.CS.LoadBalancer.UpdateLoadBalancerRule(bad); (err == nil) == c.updated {
			t.Errorf("%s: an invalid CIDR list: %v", c.v, err)
		}
	}
}

// TestVersionInCapabilitiesFollowsTheSetting: from 4.21,
// expose.cloudstack.version.api.list.capabilities (dynamic, default true)
// hides cloudstackversion when false; 4.20 has no such setting and always
// shows the version.
func TestVersionInCapabilitiesFollowsTheSetting(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	update := map[string]string{"command": "updateConfiguration", "name": "expose.cloudstack.version.api.list.capabilities",
		"value": "false"}
	s.Call(update).Inner(t, "updateconfigurationresponse")
	if v, ok := capabilitiesOf(t, s)["cloudstackversion"]; ok {
		t.Fatalf("cloudstackversion %v shown with the setting false", v)
	}
	update["value"] = "true"
	s.Call(update).Inner(t, "updateconfigurationresponse")
	if v := capabilitiesOf(t, s)["cloudstackversion"]; v != "4.22.0.0" {
		t.Fatalf("cloudstackversion = %v with the setting true", v)
	}

	old := simtesting.Start(t, simulator.Options{CloudStackVersion: schema.V420})
	update["value"] = "false"
	old.Call(update).WantError(t, "updateconfigurationresponse", 431, 4350,
		"Config parameter with name expose.cloudstack.version.api.list.capabilities doesn't exist")
	cs := cloudstack.NewClient(old.API, simtesting.Key, simtesting.Secret, false)
	l, err := cs.Configuration.ListConfigurations(&cloudstack.ListConfigurationsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range l.Configurations {
		if row.Name == "expose.cloudstack.version.api.list.capabilities" {
			t.Fatal("4.20 lists the setting")
		}
	}
	if v := capabilitiesOf(t, old)["cloudstackversion"]; v != "4.20.1.0" {
		t.Fatalf("4.20 cloudstackversion = %v", v)
	}
}
