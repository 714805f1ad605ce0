package network_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

func isolatedOffering(t *testing.T, s *simtesting.Sim) string {
	t.Helper()
	return simtesting.Items(t, s.Call(map[string]string{"command": "listNetworkOfferings",
		"name": "DefaultIsolatedNetworkOfferingWithSourceNatService"}).Inner(t, "listnetworkofferingsresponse"),
		"networkoffering")[0]["id"].(string)
}

// publicNetwork is the zone's public network as the root admin lists it
// with issystem=true.
func publicNetwork(t *testing.T, s *simtesting.Sim) map[string]any {
	t.Helper()
	nets := simtesting.Items(t, s.Call(map[string]string{"command": "listNetworks", "issystem": "true"}).
		Inner(t, "listnetworksresponse"), "network")
	if len(nets) != 1 {
		t.Fatalf("system networks = %v", nets)
	}
	return nets[0]
}

// TestZonePublicNetworkAsCloudStackKeepsIt: createZone's
// createDefaultSystemNetworks leaves each zone a nameless Public network of
// the System-Public-Network offering, owned by the system account, which
// listNetworks shows only to a root admin asking issystem=true.
func TestZonePublicNetworkAsCloudStackKeepsIt(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	pub := publicNetwork(t, s)
	if pub["traffictype"] != "Public" || pub["issystem"] != true || pub["state"] != "Setup" ||
		pub["networkofferingname"] != "System-Public-Network" || pub["account"] != "system" ||
		pub["canusefordeploy"] != false || pub["broadcastdomaintype"] != "Vlan" {
		t.Fatalf("public network = %v", pub)
	}
	for _, absent := range []string{"name", "type", "cidr", "gateway", "acltype", "physicalnetworkid"} {
		if _, ok := pub[absent]; ok {
			t.Errorf("public network has %s: %v", absent, pub[absent])
		}
	}
	id := pub["id"].(string)
	// Not among the guest networks, for the admin or for a tenant asking
	// issystem=true (reset to false for a non-root caller).
	for _, n := range simtesting.Items(t, s.Call(map[string]string{"command": "listNetworks"}).Inner(t, "listnetworksresponse"), "network") {
		if n["id"] == id {
			t.Fatal("the public network is listed without issystem=true")
		}
	}
	if body := s.Call(map[string]string{"command": "listNetworks", "id": id}).Inner(t, "listnetworksresponse"); len(body) != 0 {
		t.Fatalf("listNetworks id=<public network> without issystem = %v", body)
	}
	key, secret := simtesting.NewAccount(t, s, "tenant", 0)
	for _, n := range simtesting.Items(t, s.As(key, secret, map[string]string{"command": "listNetworks", "issystem": "true"}).
		Inner(t, "listnetworksresponse"), "network") {
		if n["id"] == id {
			t.Fatal("a tenant lists the public network")
		}
	}
	s.Call(map[string]string{"command": "listNetworks", "issystem": "true", "account": "admin"}).WantError(t,
		"listnetworksresponse", 431, 4350, "System network belongs to system, account and domainId parameters can't be specified")
	// The public range belongs to it (vlan.network_id), with no owner.
	r := simtesting.Items(t, s.Call(map[string]string{"command": "listVlanIpRanges"}).Inner(t, "listvlaniprangesresponse"), "vlaniprange")[0]
	if r["networkid"] != id || r["domainid"] != nil || r["provider"] != nil {
		t.Fatalf("public range = %v", r)
	}
}

// TestPublicAddressNetworkAndVLANByView: createIPAddressResponse names the
// zone's public network to everyone (no networkname: it has none) and the
// VLAN range only in the root admin's Full view.
func TestPublicAddressNetworkAndVLANByView(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	public := publicNetwork(t, s)["id"]
	key, secret := simtesting.NewAccount(t, s, "tenant", 0)
	net := s.As(key, secret, map[string]string{"command": "createNetwork", "name": "t", "displaytext": "t",
		"networkofferingid": isolatedOffering(t, s), "zoneid": simtesting.ZoneID(t, s, "Sandbox-simulator")}).
		Inner(t, "createnetworkresponse")["network"].(map[string]any)
	job := s.As(key, secret, map[string]string{"command": "associateIpAddress", "networkid": net["id"].(string)}).
		Inner(t, "associateipaddressresponse")["jobid"].(string)
	ip := simtesting.WaitJob(t, s, job)["jobresult"].(map[string]any)["ipaddress"].(map[string]any)
	check := func(who string, row map[string]any, full bool) {
		t.Helper()
		if row["networkid"] != public || row["associatednetworkid"] != net["id"] {
			t.Errorf("%s: networkid %v associatednetworkid %v, want %v and %v", who, row["networkid"],
				row["associatednetworkid"], public, net["id"])
		}
		if _, named := row["networkname"]; named {
			t.Errorf("%s: networkname %v for the nameless public network", who, row["networkname"])
		}
		_, hasVlan := row["vlanid"]
		_, hasVlanName := row["vlanname"]
		if hasVlan != full || hasVlanName != full {
			t.Errorf("%s: vlanid %v vlanname %v, want them only in the Full view", who, row["vlanid"], row["vlanname"])
		}
		if row["physicalnetworkid"] == nil {
			t.Errorf("%s: no physicalnetworkid", who)
		}
	}
	// The job ran as the tenant's: the Restricted view.
	check("tenant's associateIpAddress", ip, false)
	list := map[string]string{"command": "listPublicIpAddresses", "id": ip["id"].(string)}
	check("tenant's listPublicIpAddresses", simtesting.Items(t, s.As(key, secret, list).Inner(t, "listpublicipaddressesresponse"),
		"publicipaddress")[0], false)
	check("admin's listPublicIpAddresses", simtesting.Items(t, s.Call(list).Inner(t, "listpublicipaddressesresponse"),
		"publicipaddress")[0], true)
}

// TestOlderStateGainsItsPublicNetwork: a state saved before the public
// network was kept gets it at start, and its ranges their network_id.
func TestOlderStateGainsItsPublicNetwork(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	first := simtesting.Start(t, simulator.Options{StatePath: path})
	if err := first.Srv.Close(); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "systemnetworks")
	delete(doc, "systemnetworkofferings")
	for _, r := range doc["vlanranges"].([]any) {
		delete(r.(map[string]any), "networkid")
	}
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s := simtesting.Start(t, simulator.Options{StatePath: path})
	pub := publicNetwork(t, s)
	r := simtesting.Items(t, s.Call(map[string]string{"command": "listVlanIpRanges"}).Inner(t, "listvlaniprangesresponse"), "vlaniprange")[0]
	if r["networkid"] != pub["id"] {
		t.Fatalf("range networkid %v, public network %v", r["networkid"], pub["id"])
	}
}

// TestNetworkServiceCapabilities: createNetworkResponse lists each service
// but Gateway with its provider element's capabilities, adjusted from the
// offering (createNetworkOffering's defaults: a shared LB, per-account
// source NAT, no redundant router).
func TestNetworkServiceCapabilities(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	n := simtesting.Items(t, s.Call(map[string]string{"command": "listNetworks"}).Inner(t, "listnetworksresponse"), "network")[0]
	caps := map[string]map[string]map[string]any{}
	for _, svc := range n["service"].([]any) {
		sv := svc.(map[string]any)
		caps[sv["name"].(string)] = map[string]map[string]any{}
		for _, c := range sv["capability"].([]any) {
			cm := c.(map[string]any)
			caps[sv["name"].(string)][cm["name"].(string)] = cm
		}
	}
	if _, ok := caps["Gateway"]; ok {
		t.Fatal("Gateway is listed")
	}
	want := []struct {
		svc, name, value string
		canChoose        bool
	}{
		{"Lb", "SupportedLBIsolation", "shared", true},
		{"Lb", "SupportedLbAlgorithms", "roundrobin,leastconn,source", false},
		{"Lb", "InlineMode", "false", false},
		{"SourceNat", "SupportedSourceNatTypes", "peraccount", true},
		{"SourceNat", "RedundantRouter", "false", true},
		{"StaticNat", "AssociatePublicIP", "false", false},
		{"Firewall", "SupportedProtocols", "tcp,udp,icmp", false},
		{"Dns", "AllowDnsSuffixModification", "true", false},
	}
	for _, w := range want {
		c := caps[w.svc][w.name]
		if c == nil || c["value"] != w.value || c["canchooseservicecapability"] != w.canChoose {
			t.Errorf("%s %s = %v, want %q (can choose %v)", w.svc, w.name, c, w.value, w.canChoose)
		}
	}
	var stickiness []map[string]any
	if err := json.Unmarshal([]byte(caps["Lb"]["SupportedStickinessMethods"]["value"].(string)), &stickiness); err != nil ||
		len(stickiness) != 3 || stickiness[0]["methodname"] != "LbCookie" {
		t.Fatalf("stickiness methods = %v, %v", stickiness, err)
	}
}
