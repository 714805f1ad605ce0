package infrastructure_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// TestEmptySimulatorHasOnlyTheRootAdmin: -empty starts with the admin and
// no zone or offerings.
func TestEmptySimulatorHasOnlyTheRootAdmin(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{Empty: true})
	for cmd, key := range map[string]string{"listZones": "listzonesresponse", "listServiceOfferings": "listserviceofferingsresponse",
		"listNetworks": "listnetworksresponse", "listHosts": "listhostsresponse", "listNetworkOfferings": "listnetworkofferingsresponse"} {
		if body := s.Call(map[string]string{"command": cmd}).Inner(t, key); len(body) != 0 {
			t.Errorf("%s: %v", cmd, body)
		}
	}
	users := s.Call(map[string]string{"command": "listUsers"}).Inner(t, "listusersresponse")
	if u := simtesting.Items(t, users, "user"); len(u) != 1 || u[0]["username"] != "admin" {
		t.Fatalf("users: %v", users)
	}
}

// TestZoneDeployedThroughTheAPIRunsAVM: the zone an -empty simulator is given
// through the admin API takes an isolated network and a running VM, which
// implements the network (VLAN from the physical network's range).
func TestZoneDeployedThroughTheAPIRunsAVM(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{Empty: true, Hypervisor: "KVM"})
	cs := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false)
	tz := simtesting.DeployTestZone(t, cs)
	np := cs.Network.NewCreateNetworkParams("net1", tz.Offering, tz.Zone)
	n, err := cs.Network.CreateNetwork(np)
	if err != nil || n.State != "Allocated" || n.Cidr != "10.1.1.0/24" || n.Gateway != "10.1.1.1" || n.Vlan != "" ||
		n.Networkdomain != "cs2cloud.internal" || n.Networkofferingname != "isolated" {
		t.Fatalf("createNetwork: %+v, %v", n, err)
	}
	so := cs.ServiceOffering.NewCreateServiceOfferingParams("small", "small")
	so.SetCpunumber(1)
	so.SetCpuspeed(500)
	so.SetMemory(512)
	offering, err := cs.ServiceOffering.CreateServiceOffering(so)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := cs.Template.ListTemplates(cs.Template.NewListTemplatesParams("all"))
	if err != nil || tmpl.Count != 1 || !tmpl.Templates[0].Isready || tmpl.Templates[0].Zoneid != tz.Zone {
		t.Fatalf("the builtin template is not ready in the zone: %+v, %v", tmpl, err)
	}
	dp := cs.VirtualMachine.NewDeployVirtualMachineParams(offering.Id, tmpl.Templates[0].Id, tz.Zone)
	dp.SetNetworkids([]string{n.Id})
	vm, err := cs.VirtualMachine.DeployVirtualMachine(dp)
	if err != nil || vm.State != "Running" {
		t.Fatalf("deployVirtualMachine: %+v, %v", vm, err)
	}
	nets, err := cs.Network.ListNetworks(&cloudstack.ListNetworksParams{})
	if err != nil || nets.Count != 1 || nets.Networks[0].State != "Implemented" || nets.Networks[0].Vlan != "100" ||
		nets.Networks[0].Broadcasturi != "vlan://100" {
		t.Fatalf("the network was not implemented: %+v, %v", nets, err)
	}
}

// TestAdminZoneRefusals: the admin API's refusals, with CloudStack's texts.
func TestAdminZoneRefusals(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{Empty: true})
	cs := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false)
	tz := simtesting.DeployTestZone(t, cs)
	cases := []struct {
		name   string
		params map[string]string
		code   int
		CS     int
		text   string
	}{
		{"isolated network with a public CIDR", map[string]string{"command": "createNetwork", "name": "pub",
			"zoneid": tz.Zone, "networkofferingid": tz.Offering, "gateway": "8.8.8.1", "netmask": "255.255.255.0"},
			431, 4350, "Virtual Guest Cidr 8.8.8.0/24 is not RFC 1918 or 6598 compliant"},
		{"isolated network gateway on the network address", map[string]string{"command": "createNetwork", "name": "n0",
			"zoneid": tz.Zone, "networkofferingid": tz.Offering, "gateway": "10.2.0.0", "netmask": "255.255.255.0"},
			431, 4350, "Invalid gateway IP provided. Either the IP is broadcast or network IP."},
		{"start IP without a gateway", map[string]string{"command": "createNetwork", "name": "n0",
			"zoneid": tz.Zone, "networkofferingid": tz.Offering, "startip": "10.2.0.5"},
			431, 4350, "gateway and netmask should be defined when startIP/endIP are passed in"},
		{"unknown offering state", map[string]string{"command": "updateNetworkOffering", "id": tz.Offering,
			"state": "Retired"}, 431, 4350, "Incorrect state value: Retired"},
		{"zone with a public guest CIDR", map[string]string{"command": "createZone", "name": "Z2", "networktype": "Advanced",
			"dns1": "8.8.8.8", "internaldns1": "8.8.8.8", "guestcidraddress": "8.8.0.0/16"},
			431, 4350, "Please enter a valid guest cidr"},
		{"duplicate zone", map[string]string{"command": "createZone", "name": "z1", "networktype": "Advanced",
			"dns1": "8.8.8.8", "internaldns1": "8.8.8.8"},
			431, 4350, "A zone with that name already exists. Please specify a unique zone name."},
		{"basic zone", map[string]string{"command": "createZone", "name": "Z3", "networktype": "Basic",
			"dns1": "8.8.8.8", "internaldns1": "8.8.8.8"}, 432, 4555, ""},
		{"physical network in an enabled zone", map[string]string{"command": "createPhysicalNetwork", "name": "p2",
			"zoneid": tz.Zone}, 531, 4365, ""},
		{"second Public traffic in the zone", map[string]string{"command": "addTrafficType", "physicalnetworkid": tz.Physnet,
			"traffictype": "Public"}, 530, 4250, "This physical network already supports the traffic type: Public"},
		{"pod in the guest subnet", map[string]string{"command": "createPod", "name": "POD1", "zoneid": tz.Zone,
			"gateway": "10.1.1.1", "netmask": "255.255.255.0", "startip": "10.1.1.10", "endip": "10.1.1.20"},
			431, 4350, "The subnet of the pod you are adding conflicts with the subnet of the Guest IP Network. Please specify a different CIDR."},
		{"pod range outside its CIDR", map[string]string{"command": "createPod", "name": "POD1", "zoneid": tz.Zone,
			"gateway": "172.16.16.1", "netmask": "255.255.255.0", "startip": "172.16.17.2"},
			431, 4350, "The start address of the IP range is not in the CIDR subnet."},
		{"pod range over public addresses", map[string]string{"command": "createPod", "name": "POD1", "zoneid": tz.Zone,
			"gateway": "192.168.2.1", "netmask": "255.255.255.0", "startip": "192.168.2.100", "endip": "192.168.2.250"},
			431, 4350, "The Start IP and endIP address range overlap with Public IP :192.168.2.100"},
		{"duplicate pod", map[string]string{"command": "createPod", "name": "pod0", "zoneid": tz.Zone,
			"gateway": "172.16.20.1", "netmask": "255.255.255.0", "startip": "172.16.20.2"},
			431, 4350, "A pod with name: pod0 already exists in zone 1. Please specify a different pod name. "},
		{"public VLAN in the guest range", map[string]string{"command": "createVlanIpRange", "zoneid": tz.Zone,
			"vlan": "150", "gateway": "192.168.3.1", "netmask": "255.255.255.0", "startip": "192.168.3.2", "endip": "192.168.3.9"},
			431, 4350, "The VLAN tag vlan://150 is already being used for dynamic vlan allocation for the guest network in zone Z1"},
		{"public range over the pod's", map[string]string{"command": "createVlanIpRange", "zoneid": tz.Zone,
			"vlan": "51", "gateway": "172.16.15.1", "netmask": "255.255.255.0", "startip": "172.16.15.100", "endip": "172.16.15.250"},
			431, 4350, "The Start IP and EndIP address range overlap with private IP :172.16.15.2:172.16.15.200"},
		{"public range without a start IP", map[string]string{"command": "createVlanIpRange", "zoneid": tz.Zone,
			"vlan": "51", "gateway": "192.168.3.1", "netmask": "255.255.255.0"},
			431, 4350, "StartIP or IPv6 CIDR is missing in the parameters!"},
		{"gateway inside the public range", map[string]string{"command": "createVlanIpRange", "zoneid": tz.Zone,
			"vlan": "51", "gateway": "192.168.3.5", "netmask": "255.255.255.0", "startip": "192.168.3.2", "endip": "192.168.3.9"},
			431, 4350, "The gateway ip should not be the part of the ip range being added."},
		{"cluster of an unknown hypervisor", map[string]string{"command": "addCluster", "zoneid": tz.Zone, "podid": tz.Pod,
			"clustername": "C9", "clustertype": "CloudManaged", "hypervisor": "Hyper-Z"},
			431, 4350, "Unable to resolve Hyper-Z to a supported "},
		{"host of another hypervisor than its cluster", map[string]string{"command": "addHost", "zoneid": tz.Zone,
			"podid": tz.Pod, "clusterid": tz.Cluster, "hypervisor": "XenServer", "url": "http://sim/c0/h9", "username": "root",
			"password": "password"}, 530, 9999, "Unable to add the host: Cannot find the server resources at http://sim/c0/h9"},
		{"host without credentials", map[string]string{"command": "addHost", "zoneid": tz.Zone, "podid": tz.Pod,
			"clusterid": tz.Cluster, "hypervisor": "XenServer", "url": "http://sim/c0/h9"},
			431, 4350, "Username and Password need to be provided."},
		{"zone-wide pool without a hypervisor", map[string]string{"command": "createStoragePool", "zoneid": tz.Zone,
			"name": "ZW", "scope": "zone", "url": "nfs://10.147.28.6:/zw"},
			431, 4350, "Missing parameter hypervisor. Hypervisor type is required to create zone wide primary storage."},
		{"second image store of that name", map[string]string{"command": "addImageStore", "zoneid": tz.Zone,
			"provider": "NFS", "url": "nfs://10.147.28.6:/export/home/sandbox/secondary"}, 431, 4350,
			"The image store with name nfs://10.147.28.6:/export/home/sandbox/secondary already exists, try creating with another name"},
		{"network offering for Public traffic", map[string]string{"command": "createNetworkOffering", "name": "pub",
			"displaytext": "pub", "guestiptype": "Isolated", "traffictype": "Public"},
			431, 4350, "Only traffic type Guest is supported in the current release"},
		{"provider for a service the offering lacks", map[string]string{"command": "createNetworkOffering", "name": "x",
			"displaytext": "x", "guestiptype": "Isolated", "traffictype": "Guest", "supportedservices": "Dhcp",
			"serviceproviderlist[0].service": "Dns", "serviceproviderlist[0].provider": "VirtualRouter"},
			431, 4350, "Service Dns is not enabled for the network offering, can't add a provider to it"},
		{"pod of a zone that is not a UUID", map[string]string{"command": "createPod", "name": "P", "zoneid": "zone-1",
			"gateway": "172.16.16.1", "netmask": "255.255.255.0", "startip": "172.16.16.2"}, 431, 9999,
			"Unable to execute API command createpod due to invalid value. Invalid parameter zoneid value=zone-1 due to " +
				"incorrect long value format, or entity does not exist or due to incorrect parameter annotation for the field in api cmd class."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.Call(c.params).WantError(t, strings.ToLower(c.params["command"])+"response", c.code, c.CS, c.text)
		})
	}
}

// TestNetworkRulesOfOfferings: a disabled offering takes no network; an
// admin's Shared network may use any range; Shared networks need a gateway.
func TestNetworkRulesOfOfferings(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{Empty: true})
	cs := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false)
	tz := simtesting.DeployTestZone(t, cs)
	op := cs.NetworkOffering.NewCreateNetworkOfferingParams("shared", "Shared", "shared", "Guest")
	op.SetSupportedservices([]string{"Dhcp", "Dns", "UserData"})
	op.SetServiceproviderlist(map[string]string{"Dhcp": "VirtualRouter", "Dns": "VirtualRouter", "UserData": "VirtualRouter"})
	op.SetSpecifyvlan(true)
	op.SetSpecifyipranges(true)
	shared, err := cs.NetworkOffering.CreateNetworkOffering(op)
	if err != nil {
		t.Fatal(err)
	}
	call := func(params map[string]string) simtesting.Response {
		params["command"], params["zoneid"], params["networkofferingid"] = "createNetwork", tz.Zone, shared.Id
		return s.Call(params)
	}
	call(map[string]string{"name": "s1", "gateway": "8.8.8.1", "netmask": "255.255.255.0"}).WantError(t,
		"createnetworkresponse", 431, 4350, "Can't use specified network offering id as its state is not Enabled")
	uo := cs.NetworkOffering.NewUpdateNetworkOfferingParams()
	uo.SetId(shared.Id)
	uo.SetState("Enabled")
	if _, err := cs.NetworkOffering.UpdateNetworkOffering(uo); err != nil {
		t.Fatal(err)
	}
	s.Call(map[string]string{"command": "updateNetworkOffering", "id": shared.Id, "availability": "required"}).WantError(t,
		"updatenetworkofferingresponse", 431, 4350,
		"Availability can be Required only for networkOfferings of type Isolated and with SourceNat enabled")
	call(map[string]string{"name": "s1", "vlan": "300"}).WantError(t, "createnetworkresponse", 431, 4350,
		"Gateway/netmask are required when creating Shared networks.")
	n := call(map[string]string{"name": "s1", "gateway": "8.8.8.1", "netmask": "255.255.255.0", "vlan": "300",
		"startip": "8.8.8.10", "endip": "8.8.8.20"}).Inner(t, "createnetworkresponse")["network"].(map[string]any)
	if n["type"] != "Shared" || n["cidr"] != "8.8.8.0/24" || n["state"] != "Setup" || n["vlan"] != "300" || n["acltype"] != "Domain" {
		t.Fatalf("shared network: %v", n)
	}
}

// TestProviderNeedsItsElementEnabled: updateNetworkServiceProvider
// state=Enabled fails in the job until configureVirtualRouterElement
// enabled its element.
func TestProviderNeedsItsElementEnabled(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{Empty: true})
	cs := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false)
	z, err := cs.Zone.CreateZone(cs.Zone.NewCreateZoneParams("10.147.28.6", "10.147.28.6", "Z1", "Advanced"))
	if err != nil {
		t.Fatal(err)
	}
	pn, err := cs.Network.CreatePhysicalNetwork(cs.Network.NewCreatePhysicalNetworkParams("p", z.Id))
	if err != nil {
		t.Fatal(err)
	}
	lp := cs.Network.NewListNetworkServiceProvidersParams()
	lp.SetPhysicalnetworkid(pn.Id)
	all, err := cs.Network.ListNetworkServiceProviders(lp)
	if err != nil || all.Count != 9 || all.NetworkServiceProviders[0].Name != "Netris" {
		t.Fatalf("default providers, newest first: %+v, %v", all, err)
	}
	provider := func(name string) string {
		lp.SetName(name)
		nsps, err := cs.Network.ListNetworkServiceProviders(lp)
		if err != nil || nsps.Count != 1 {
			t.Fatalf("provider %s: %+v, %v", name, nsps, err)
		}
		return nsps.NetworkServiceProviders[0].Id
	}
	upp := cs.Network.NewUpdateNetworkServiceProviderParams(provider("VpcVirtualRouter"))
	upp.SetState("Enabled")
	_, err = cs.Network.UpdateNetworkServiceProvider(upp)
	if err == nil || !strings.Contains(err.Error(), "Provider is not ready, cannot Enable the provider, please configure the provider first") {
		t.Fatalf("enabling an unconfigured provider: %v", err)
	}
	ep := cs.Router.NewListVirtualRouterElementsParams()
	ep.SetNspid(provider("VirtualRouter"))
	els, _ := cs.Router.ListVirtualRouterElements(ep)
	_, err = cs.InternalLB.ConfigureInternalLoadBalancerElement(
		cs.InternalLB.NewConfigureInternalLoadBalancerElementParams(true, els.VirtualRouterElements[0].Id))
	if err == nil || !strings.Contains(err.Error(), "Can't find InternalLbVm element with network service provider id") {
		t.Fatalf("configuring a virtual router's element as an internal load balancer's: %v", err)
	}
	ip := cs.InternalLB.NewListInternalLoadBalancerElementsParams()
	ip.SetNspid(provider("InternalLbVm"))
	ilbEls, err := cs.InternalLB.ListInternalLoadBalancerElements(ip)
	if err != nil || ilbEls.Count != 1 || ilbEls.InternalLoadBalancerElements[0].Enabled {
		t.Fatalf("listInternalLoadBalancerElements: %+v, %v", ilbEls, err)
	}
	uz := cs.Zone.NewUpdateZoneParams(z.Id)
	uz.SetAllocationstate("Enabled")
	_, err = cs.Zone.UpdateZone(uz)
	if err == nil || !strings.Contains(err.Error(), "Cannot enable this Zone since: Unable to find the default physical network with traffic=Management in the specified zone id") {
		t.Fatalf("enabling a zone without traffic types: %v", err)
	}
}

// TestZoneScriptsBuildTheSeededZone runs hack/zone/deploy.sh (Debian's
// cloudstack CLI and a login session) against an -empty simulator and
// compares the result with the seeded zone, ids and times aside. The only
// difference: the seeded guest network is already implemented.
func TestZoneScriptsBuildTheSeededZone(t *testing.T) {
	if _, err := os.Stat(simtesting.CloudstackCLI); err != nil {
		t.Fatal("Debian's cloudstack CLI is missing: apt-get install cs")
	}
	empty := simtesting.Start(t, simulator.Options{Empty: true})
	seeded := simtesting.Start(t, simulator.Options{})
	cmd := exec.Command("bash", filepath.Join("..", "..", "hack", "zone", "deploy.sh"))
	cmd.Env = append(simtesting.EnvWithout("CLOUDSTACK_", "ZONE_OUT="), "CLOUDSTACK_ENDPOINT="+empty.API,
		"ZONE_OUT="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy.sh: %v\n%s", err, out)
	} else if strings.Contains(string(out), simtesting.Secret) {
		t.Fatalf("deploy.sh printed the secret key:\n%s", out)
	}
	// Re-running changes nothing.
	cmd = exec.Command("bash", cmd.Args[1])
	cmd.Env = append(simtesting.EnvWithout("CLOUDSTACK_", "ZONE_OUT="), "CLOUDSTACK_ENDPOINT="+empty.API, "ZONE_OUT="+t.TempDir())
	before := len(mustRequests(t, empty))
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "created") {
		t.Fatalf("second deploy.sh: %v\n%s", err, out)
	}
	for _, r := range mustRequests(t, empty)[before:] {
		if !strings.HasPrefix(r.Command, "list") && r.Command != "login" && r.Command != "logout" && r.Command != "getUserKeys" {
			t.Errorf("the second run sent %s", r.Command)
		}
	}
	for _, list := range []string{"listZones", "listPhysicalNetworks", "listPods", "listClusters", "listHosts",
		"listStoragePools", "listImageStores", "listVlanIpRanges", "listNetworkOfferings", "listServiceOfferings",
		"listDiskOfferings", "listTemplates", "listNetworkServiceProviders", "listVirtualRouterElements",
		"listInternalLoadBalancerElements"} {
		params := map[string]string{"command": list}
		if list == "listTemplates" {
			params["templatefilter"] = "all"
		}
		key := strings.ToLower(list) + "response"
		got, want := normalized(t, empty.Call(params).Inner(t, key)), normalized(t, seeded.Call(params).Inner(t, key))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s differs:\n deployed %v\n   seeded %v", list, got, want)
		}
	}
	nets := simtesting.Items(t, empty.Call(map[string]string{"command": "listNetworks"}).Inner(t, "listnetworksresponse"), "network")
	if len(nets) != 1 || nets[0]["name"] != "guest-network" || nets[0]["state"] != "Allocated" || nets[0]["cidr"] != "10.1.1.0/24" {
		t.Fatalf("guest network: %v", nets)
	}
}

// TestZoneScriptsMakeALoopbackSharedNetwork runs hack/zone/deploy.sh with
// SHARED_NETWORK, as the e2e harness does where it can make no network
// namespace: the admin's Shared network in 127.1.1.0/24 on
// DefaultSharedNetworkOffering takes a VM at a static loopback address, and
// the metadata service answers for it (the offering has UserData).
func TestZoneScriptsMakeALoopbackSharedNetwork(t *testing.T) {
	if _, err := os.Stat(simtesting.CloudstackCLI); err != nil {
		t.Fatal("Debian's cloudstack CLI is missing: apt-get install cs")
	}
	s := simtesting.Start(t, simulator.Options{Empty: true})
	cmd := exec.Command("bash", filepath.Join("..", "..", "hack", "zone", "deploy.sh"))
	cmd.Env = append(simtesting.EnvWithout("CLOUDSTACK_", "ZONE_OUT=", "SHARED_NETWORK"), "CLOUDSTACK_ENDPOINT="+s.API,
		"ZONE_OUT="+t.TempDir(), "SHARED_NETWORK=loopback-network", "SHARED_NETWORK_GATEWAY=127.1.1.1",
		"SHARED_NETWORK_NETMASK=255.255.255.0", "SHARED_NETWORK_START=127.1.1.2", "SHARED_NETWORK_END=127.1.1.254")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy.sh: %v\n%s", err, out)
	}
	cs := s.Client()
	lp := cs.Network.NewListNetworksParams()
	lp.SetName("loopback-network")
	lp.SetListall(true)
	nets, err := cs.Network.ListNetworks(lp)
	if err != nil || nets.Count != 1 {
		t.Fatalf("listNetworks: %+v, %v", nets, err)
	}
	n := nets.Networks[0]
	if n.Type != "Shared" || n.Cidr != "127.1.1.0/24" || n.Gateway != "127.1.1.1" ||
		n.Networkofferingname != "DefaultSharedNetworkOffering" {
		t.Fatalf("the Shared network: %+v", n)
	}
	so, err := cs.ServiceOffering.ListServiceOfferings(&cloudstack.ListServiceOfferingsParams{})
	if err != nil || so.Count == 0 {
		t.Fatalf("listServiceOfferings: %+v, %v", so, err)
	}
	tmpl, err := cs.Template.ListTemplates(cs.Template.NewListTemplatesParams("all"))
	if err != nil || tmpl.Count == 0 {
		t.Fatalf("listTemplates: %+v, %v", tmpl, err)
	}
	dp := cs.VirtualMachine.NewDeployVirtualMachineParams(so.ServiceOfferings[0].Id, tmpl.Templates[0].Id, n.Zoneid)
	dp.SetNetworkids([]string{n.Id})
	dp.SetIpaddress("127.1.1.10")
	dp.SetUserdata(base64.StdEncoding.EncodeToString([]byte("settings")))
	vm, err := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false).VirtualMachine.DeployVirtualMachine(dp)
	if err != nil || vm.State != "Running" || len(vm.Nic) != 1 || vm.Nic[0].Ipaddress != "127.1.1.10" {
		t.Fatalf("deployVirtualMachine: %+v, %v", vm, err)
	}
	resp, err := s.HTTP.Client().Get(s.HTTP.URL + "/metadata/" + vm.Id + "/latest/user-data")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || string(b) != "settings" {
		t.Fatalf("the metadata service: %d %q", resp.StatusCode, b)
	}
}

func mustRequests(t *testing.T, s *simtesting.Sim) []kernel.LoggedRequest {
	t.Helper()
	reqs, err := s.Admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// volatileKey names the fields that differ between two deployments.
var volatileKey = regexp.MustCompile(`id$|^created$|^zonetoken$|^name$|^lastpinged$|^related$|^ipaddress$`)

// normalized drops ids, times and generated names from an answer.
func normalized(t *testing.T, v any) any {
	t.Helper()
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for k, val := range x {
				if volatileKey.MatchString(k) && !(k == "name" && !isGenerated(val)) {
					delete(x, k)
					continue
				}
				x[k] = walk(val)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return x
	}
	return walk(out)
}

// isGenerated: host names are SimulatedAgent.<uuid>.
func isGenerated(v any) bool {
	s, _ := v.(string)
	return strings.HasPrefix(s, "SimulatedAgent.")
}

// TestOnlyOneRequiredNetworkOffering: the seeded default isolated offering
// is Required, so no other offering may become Required.
func TestOnlyOneRequiredNetworkOffering(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	id := simtesting.CreateIsolatedOffering(t, cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false))
	s.Call(map[string]string{"command": "updateNetworkOffering", "id": id, "availability": "Required"}).WantError(t,
		"updatenetworkofferingresponse", 431, 4350, "System already has network offering id=2 with availability Required") // id 1: System-Public-Network
}

// TestHostWithoutAClusterGetsAStandaloneOne: discoverHosts names the
// cluster after the URL when none is given.
func TestHostWithoutAClusterGetsAStandaloneOne(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{Empty: true})
	tz := simtesting.DeployTestZone(t, cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false))
	body := s.Call(map[string]string{"command": "addHost", "zoneid": tz.Zone, "podid": tz.Pod, "hypervisor": "KVM",
		"url": "http://10.0.0.9", "username": "root"}).Inner(t, "addhostresponse")
	hosts := simtesting.Items(t, body, "host")
	if len(hosts) != 1 || hosts[0]["clustername"] != "Standalone-http://10.0.0.9" || hosts[0]["ipaddress"] != "10.0.0.9" ||
		hosts[0]["hypervisor"] != "KVM" {
		t.Fatalf("addHost: %v", body)
	}
}
