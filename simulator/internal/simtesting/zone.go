package simtesting

import (
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// TestZone is what deployTestZone built.
type TestZone struct {
	Zone, Physnet, Pod, Cluster, Offering string
}

// DeployTestZone deploys a one-cluster advanced zone on an -empty simulator
// through cloudstack-go, in marvin's deployDataCenter order, checking the
// answers' shapes on the way.
func DeployTestZone(t *testing.T, cs *cloudstack.CloudStackClient) TestZone {
	t.Helper()
	var tz TestZone
	zp := cs.Zone.NewCreateZoneParams("10.147.28.6", "10.147.28.6", "Z1", "Advanced")
	zp.SetGuestcidraddress("10.1.1.0/24")
	z, err := cs.Zone.CreateZone(zp)
	if err != nil || z.Allocationstate != "Disabled" || z.Networktype != "Advanced" || z.Guestcidraddress != "10.1.1.0/24" ||
		z.Zonetoken == "" {
		t.Fatalf("createZone: %+v, %v", z, err)
	}
	tz.Zone = z.Id
	pp := cs.Network.NewCreatePhysicalNetworkParams("Z1-pnet", z.Id)
	pp.SetIsolationmethods([]string{"VLAN"})
	pn, err := cs.Network.CreatePhysicalNetwork(pp)
	if err != nil || pn.State != "Disabled" || pn.Isolationmethods != "VLAN" || pn.Broadcastdomainrange != "ZONE" {
		t.Fatalf("createPhysicalNetwork: %+v, %v", pn, err)
	}
	tz.Physnet = pn.Id
	for _, traffic := range []string{"Guest", "Management", "Public"} {
		tt, err := cs.Usage.AddTrafficType(cs.Usage.NewAddTrafficTypeParams(pn.Id, traffic))
		if err != nil || tt.Traffictype != traffic || tt.Physicalnetworkid != pn.Id {
			t.Fatalf("addTrafficType %s: %+v, %v", traffic, tt, err)
		}
	}
	lp := cs.Network.NewListNetworkServiceProvidersParams()
	lp.SetPhysicalnetworkid(pn.Id)
	lp.SetName("VirtualRouter")
	lp.SetState("Disabled")
	nsps, err := cs.Network.ListNetworkServiceProviders(lp)
	if err != nil || nsps.Count != 1 {
		t.Fatalf("listNetworkServiceProviders: %+v, %v", nsps, err)
	}
	ep := cs.Router.NewListVirtualRouterElementsParams()
	ep.SetNspid(nsps.NetworkServiceProviders[0].Id)
	els, err := cs.Router.ListVirtualRouterElements(ep)
	if err != nil || els.Count != 1 || els.VirtualRouterElements[0].Enabled {
		t.Fatalf("listVirtualRouterElements: %+v, %v", els, err)
	}
	el, err := cs.Router.ConfigureVirtualRouterElement(cs.Router.NewConfigureVirtualRouterElementParams(true, els.VirtualRouterElements[0].Id))
	if err != nil || !el.Enabled {
		t.Fatalf("configureVirtualRouterElement: %+v, %v", el, err)
	}
	upp := cs.Network.NewUpdateNetworkServiceProviderParams(nsps.NetworkServiceProviders[0].Id)
	upp.SetState("Enabled")
	if up, err := cs.Network.UpdateNetworkServiceProvider(upp); err != nil || up.State != "Enabled" || up.Name != "VirtualRouter" {
		t.Fatalf("updateNetworkServiceProvider: %+v, %v", up, err)
	}
	upn := cs.Network.NewUpdatePhysicalNetworkParams(pn.Id)
	upn.SetState("Enabled")
	upn.SetVlan("100-200")
	if pn2, err := cs.Network.UpdatePhysicalNetwork(upn); err != nil || pn2.State != "Enabled" || pn2.Vlan != "100-200" {
		t.Fatalf("updatePhysicalNetwork: %+v, %v", pn2, err)
	}
	podp := cs.Pod.NewCreatePodParams("POD0", z.Id)
	podp.SetGateway("172.16.15.1")
	podp.SetNetmask("255.255.255.0")
	podp.SetStartip("172.16.15.2")
	podp.SetEndip("172.16.15.200")
	pod, err := cs.Pod.CreatePod(podp)
	if err != nil || pod.Allocationstate != "Enabled" || pod.Gateway != "172.16.15.1" || pod.Startip[0] != "172.16.15.2" {
		t.Fatalf("createPod: %+v, %v", pod, err)
	}
	tz.Pod = pod.Id
	cl, err := cs.Cluster.AddCluster(cs.Cluster.NewAddClusterParams("C0", "CloudManaged", "KVM", pod.Id, z.Id))
	if err != nil || cl.Hypervisortype != "KVM" || cl.Podid != pod.Id || cl.Clustertype != "CloudManaged" {
		t.Fatalf("addCluster: %+v, %v", cl, err)
	}
	tz.Cluster = cl.Id
	hp := cs.Host.NewAddHostParams("KVM", pod.Id, "http://sim/c0/h0", z.Id)
	hp.SetClusterid(cl.Id)
	hp.SetUsername("root")
	hp.SetPassword("password")
	h, err := cs.Host.AddHost(hp)
	if err != nil || h.State != "Up" || h.Resourcestate != "Enabled" || h.Clusterid != cl.Id || h.Ipaddress != "172.16.15.3" {
		t.Fatalf("addHost: %+v, %v", h, err)
	}
	sp := cs.Pool.NewCreateStoragePoolParams("PS0", "nfs://10.147.28.6:/export/home/sandbox/primary0", z.Id)
	sp.SetPodid(pod.Id)
	sp.SetClusterid(cl.Id)
	pool, err := cs.Pool.CreateStoragePool(sp)
	if err != nil || pool.State != "Up" || pool.Scope != "CLUSTER" || pool.Type != "NetworkFilesystem" ||
		pool.Ipaddress != "10.147.28.6" || pool.Path != "/export/home/sandbox/primary0" || pool.Hypervisor != "KVM" {
		t.Fatalf("createStoragePool: %+v, %v", pool, err)
	}
	vp := cs.VLAN.NewCreateVlanIpRangeParams()
	vp.SetZoneid(z.Id)
	vp.SetForvirtualnetwork(true)
	vp.SetVlan("50")
	vp.SetGateway("192.168.2.1")
	vp.SetNetmask("255.255.255.0")
	vp.SetStartip("192.168.2.2")
	vp.SetEndip("192.168.2.200")
	vlan, err := cs.VLAN.CreateVlanIpRange(vp)
	if err != nil || vlan.Vlan != "vlan://50" || vlan.Physicalnetworkid != pn.Id || !vlan.Forvirtualnetwork {
		t.Fatalf("createVlanIpRange: %+v, %v", vlan, err)
	}
	ip := cs.ImageStore.NewAddImageStoreParams("NFS")
	ip.SetZoneid(z.Id)
	ip.SetUrl("nfs://10.147.28.6:/export/home/sandbox/secondary")
	store, err := cs.ImageStore.AddImageStore(ip)
	if err != nil || store.Zoneid != z.Id || store.Protocol != "nfs" || store.Providername != "NFS" || store.Scope != "ZONE" {
		t.Fatalf("addImageStore: %+v, %v", store, err)
	}
	uz := cs.Zone.NewUpdateZoneParams(z.Id)
	uz.SetAllocationstate("Enabled")
	if z2, err := cs.Zone.UpdateZone(uz); err != nil || z2.Allocationstate != "Enabled" {
		t.Fatalf("updateZone: %+v, %v", z2, err)
	}
	tz.Offering = CreateIsolatedOffering(t, cs)
	return tz
}

// CreateIsolatedOffering creates and enables an isolated network offering
// with source NAT and returns its id.
func CreateIsolatedOffering(t *testing.T, cs *cloudstack.CloudStackClient) string {
	t.Helper()
	services := []string{"Dhcp", "Dns", "UserData", "SourceNat", "StaticNat", "PortForwarding", "Firewall", "Lb"}
	op := cs.NetworkOffering.NewCreateNetworkOfferingParams("isolated", "Isolated", "isolated", "Guest")
	op.SetSupportedservices(services)
	providers := map[string]string{}
	for _, s := range services {
		providers[s] = "VirtualRouter"
	}
	op.SetServiceproviderlist(providers)
	o, err := cs.NetworkOffering.CreateNetworkOffering(op)
	if err != nil || o.State != "Disabled" || o.Availability != "Optional" || !o.Conservemode || o.Guestiptype != "Isolated" ||
		len(o.Service) != len(services)+1 { // Gateway comes with SourceNat
		t.Fatalf("createNetworkOffering: %+v, %v", o, err)
	}
	uo := cs.NetworkOffering.NewUpdateNetworkOfferingParams()
	uo.SetId(o.Id)
	uo.SetState("Enabled")
	if o2, err := cs.NetworkOffering.UpdateNetworkOffering(uo); err != nil || o2.State != "Enabled" {
		t.Fatalf("updateNetworkOffering: %+v, %v", o2, err)
	}
	return o.Id
}

// ListSettings lists the global settings, those named name when it is not
// empty.
func ListSettings(t *testing.T, cs *cloudstack.CloudStackClient, name string) []*cloudstack.Configuration {
	t.Helper()
	p := cs.Configuration.NewListConfigurationsParams()
	if name != "" {
		p.SetName(name)
	}
	r, err := cs.Configuration.ListConfigurations(p)
	if err != nil {
		t.Fatal(err)
	}
	return r.Configurations
}
