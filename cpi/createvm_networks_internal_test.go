package cpi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

func vmCloudProps(t *testing.T, raw string) apiv1.VMCloudProps {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	return apiv1.NewVMCloudPropsFromMap(m)
}

func twoNetworks(t *testing.T, defaultCP, otherCP string) apiv1.Networks {
	t.Helper()
	var nets apiv1.Networks
	raw := `{"default":{"type":"manual","ip":"10.1.1.5","netmask":"255.255.255.0","gateway":"10.1.1.1",` +
		`"default":["dns","gateway"],"cloud_properties":` + defaultCP + `},` +
		`"other":{"type":"manual","ip":"10.2.1.5","netmask":"255.255.255.0","gateway":"10.2.1.1","cloud_properties":` + otherCP + `}}`
	if err := json.Unmarshal([]byte(raw), &nets); err != nil {
		t.Fatal(err)
	}
	return nets
}

// TestUndiscoverableNetworkIsNotTheFirstNIC: the first NIC is CloudStack's
// default one; an undiscoverable network gives that place up, even when
// the director made it the default gateway, unless all are undiscoverable.
func TestUndiscoverableNetworkIsNotTheFirstNIC(t *testing.T) {
	for _, c := range []struct{ defaultCP, otherCP, first string }{
		{`{"name":"a"}`, `{"name":"b"}`, "default"},
		{`{"name":"a","undiscoverable":true}`, `{"name":"b"}`, "other"},
		{`{"name":"a","undiscoverable":"true"}`, `{"name":"b","undiscoverable":false}`, "other"},
		{`{"name":"a","undiscoverable":true}`, `{"name":"b","undiscoverable":true}`, "default"},
		{`{"name":"a","undiscoverable":null}`, `{"name":"b"}`, "default"},
	} {
		plan, refs, err := planNetworks(twoNetworks(t, c.defaultCP, c.otherCP))
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		want := map[string]string{"default": "a", "other": "b"}[c.first]
		if plan.nics[0].name != c.first || refs[0] != want {
			t.Errorf("%s / %s: first NIC %s (%s), want %s", c.defaultCP, c.otherCP, plan.nics[0].name, refs[0], c.first)
		}
	}
	if _, _, err := planNetworks(twoNetworks(t, `{"name":"a","undiscoverable":"yes"}`, `{"name":"b"}`)); err == nil ||
		!strings.Contains(err.Error(), `network "default" cloud_properties`) {
		t.Errorf("undiscoverable: yes: %v", err)
	}
}

// TestRoutesBecomeTheNetworksAgentRoutes: the Go CPI's routes, keyed by
// BOSH network, with the network's gateway when none is given.
func TestRoutesBecomeTheNetworksAgentRoutes(t *testing.T) {
	props, err := vmtype.Read(vmCloudProps(t, `{"routes":{"other":[{"cidr":"172.16.0.0/12"},`+
		`{"cidr":"192.168.7.9/24","gateway":"10.2.1.254"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	plan, _, err := planNetworks(twoNetworks(t, `{"name":"a"}`, `{"name":"b"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.addRoutes(props.Routes); err != nil {
		t.Fatal(err)
	}
	nets := plan.agentNetworks()
	want := []route{{Destination: "172.16.0.0", Netmask: "255.240.0.0", Gateway: "10.2.1.1"},
		{Destination: "192.168.7.0", Netmask: "255.255.255.0", Gateway: "10.2.1.254"}}
	if got := nets["other"].Routes; !reflect.DeepEqual(got, want) {
		t.Errorf("routes of other: %+v, want %+v", got, want)
	}
	if got := nets["default"].Routes; got == nil || len(got) != 0 {
		t.Errorf("routes of default: %#v, want an empty list", got)
	}
	raw, _ := json.Marshal(nets["other"].Routes[0])
	if string(raw) != `{"destination":"172.16.0.0","gateway":"10.2.1.1","netmask":"255.240.0.0"}` {
		t.Errorf("a route as the agent reads it: %s", raw)
	}
	for routes, want := range map[string]string{
		`{"public":[{"cidr":"10.3.0.0/16"}]}`:                  `routes name network "public", which is not a manual or dynamic network`,
		`{"other":[{"cidr":"10.3.0.0"}]}`:                      `routes of network "other": cidr "10.3.0.0" is not an IPv4 CIDR`,
		`{"other":[{"cidr":"10.3.0.0/16","gateway":"gw"}]}`:    `gateway "gw" is not an IPv4 address`,
		`{"other":[{"cidr":"fd00::/8","gateway":"10.2.1.1"}]}`: `cidr "fd00::/8" is not an IPv4 CIDR`,
	} {
		props, err := vmtype.Read(vmCloudProps(t, `{"routes":`+routes+`}`))
		if err == nil {
			plan, _, _ := planNetworks(twoNetworks(t, `{"name":"a"}`, `{"name":"b"}`))
			err = plan.addRoutes(props.Routes)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", routes, err, want)
		}
	}
}
