package simulator

import (
	"fmt"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/infrastructure"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/network"
)

// The seeded zone is marvin's setup/dev/advanced.cfg, deployed the way
// deployDataCenter.py deploys it (createZones, createPhysicalNetwork,
// configureProviders, updatePhysicalNetwork, createPods, createClusters,
// createPrimaryStorages, createVlanIpRanges, createSecondaryStorages,
// enableZone), through the functions the admin commands call. Without
// -empty the simulator starts with it; with -empty a harness makes the same
// calls over the API (hack/zone/).

// zoneLayout is one advanced zone of advanced.cfg's shape.
type zoneLayout struct {
	Name, PhysicalNetwork, DNS, GuestCIDR string
	GuestVLANs, Hypervisor                string
	PodGateway, PodStart, PodEnd, Netmask string
	PublicVLAN, PublicGateway             string
	PublicStart, PublicEnd                string
	Clusters                              []clusterLayout
	SecondaryURL                          string
}

type clusterLayout struct {
	Name  string
	Hosts []string // host URLs
	Pools []string // primary storage names, created as nfs://DNS:/export/home/sandbox/<name lowercased>
}

// seededHosts is how many hosts each cluster of the seeded zone has: 13
// mock agents of 4×8000 MHz and 8 GiB hold 208 VMs of its smallest
// offering (Small Instance, 1×500 MHz, 512 MiB: 16 a host, by memory), so
// that 200 VMs of a deployment fit at once.
// Departure: advanced.cfg has two hosts in C0 and one in C1 (48 such VMs).
var seededHosts = map[string]int{"C0": 7, "C1": 6}

// hostURLs are a cluster's simulated agents: http://sim/<cluster>/h<n>.
func hostURLs(cluster string, n int) []string {
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://sim/%s/h%d", strings.ToLower(cluster), i)
	}
	return urls
}

// advancedCfg is advanced.cfg's Sandbox-simulator zone, with seededHosts.
func advancedCfg(hypervisor string) zoneLayout {
	return zoneLayout{Name: "Sandbox-simulator", PhysicalNetwork: "Sandbox-pnet", DNS: "10.147.28.6", GuestCIDR: "10.1.1.0/24", GuestVLANs: "100-200",
		Hypervisor: hypervisor, PodGateway: "172.16.15.1", PodStart: "172.16.15.2", PodEnd: "172.16.15.200",
		Netmask: "255.255.255.0", PublicVLAN: "50", PublicGateway: "192.168.2.1", PublicStart: "192.168.2.2",
		PublicEnd: "192.168.2.200", SecondaryURL: "nfs://10.147.28.6:/export/home/sandbox/secondary",
		Clusters: []clusterLayout{
			{Name: "C0", Hosts: hostURLs("C0", seededHosts["C0"]), Pools: []string{"PS0", "PS1"}},
			{Name: "C1", Hosts: hostURLs("C1", seededHosts["C1"]), Pools: []string{"PS2"}},
		}}
}

// deployZone builds a zone as deployDataCenter does and enables it. Any
// error is a programming error in the layout.
func deployZone(st *model.State, l zoneLayout, now time.Time) *model.Zone {
	z := must(infrastructure.MakeZone(st, infrastructure.ZoneSpec{Name: l.Name, NetworkType: "Advanced", DNS1: l.DNS, InternalDNS1: l.DNS,
		GuestCIDR: l.GuestCIDR}, now))
	pn := must(network.MakePhysicalNetwork(st, network.PhysnetSpec{ZoneID: z.ID, Name: l.PhysicalNetwork,
		IsolationMethods: []string{"VLAN"}}))
	for _, t := range []string{"Guest", "Management", "Public"} {
		must(network.AddTrafficTypeTo(st, pn, t))
	}
	// configureProviders: each provider's element, then the provider.
	for _, name := range []string{"VirtualRouter", "VpcVirtualRouter", "InternalLbVm"} {
		nsp := providerNamed(st, pn.ID, name)
		if e := network.VRElementOf(st, nsp.ID); e != nil {
			e.Enabled = true
		}
		mustOK(network.SetProviderState(st, nsp, model.ProviderEnabled))
	}
	vlans := must(network.NormalizeVnetRanges(pn, l.GuestVLANs))
	pn.Update(model.PhysnetEnabled, vlans)
	pod := must(infrastructure.MakePod(st, infrastructure.PodSpec{ZoneID: z.ID, Name: "POD0", Gateway: l.PodGateway, Netmask: l.Netmask,
		StartIP: l.PodStart, EndIP: l.PodEnd}))
	for _, cl := range l.Clusters {
		c := must(infrastructure.MakeCluster(st, infrastructure.ClusterSpec{ZoneID: z.ID, PodID: pod.ID, Name: cl.Name, Hypervisor: l.Hypervisor,
			ClusterType: "CloudManaged"}))
		for _, url := range cl.Hosts {
			must(infrastructure.MakeHost(st, infrastructure.HostSpec{ZoneID: z.ID, PodID: pod.ID, ClusterID: c.ID, Hypervisor: l.Hypervisor, URL: url,
				Username: "root", Password: "password"}, now))
		}
		for _, name := range cl.Pools {
			must(infrastructure.MakeStoragePool(st, infrastructure.PoolSpec{ZoneID: z.ID, PodID: pod.ID, ClusterID: c.ID, Name: name,
				URL: fmt.Sprintf("nfs://%s:/export/home/sandbox/%s", l.DNS, strings.ToLower(name))}, now))
		}
	}
	must(network.CreateVlanRange(st, network.VlanSpec{ZoneID: z.ID, VLAN: l.PublicVLAN, Gateway: l.PublicGateway,
		Netmask: l.Netmask, StartIP: l.PublicStart, EndIP: l.PublicEnd, ForVirtualNetwork: true}))
	must(infrastructure.MakeImageStore(st, infrastructure.StoreSpec{ZoneID: z.ID, URL: l.SecondaryURL, Provider: "NFS"}, now))
	mustOK(infrastructure.CheckZoneCanBeEnabled(st, z))
	z.Allocation = model.AllocationEnabled
	return z
}

// isolatedOfferingSpec is DefaultIsolatedNetworkOfferingWithSourceNatService,
// which CloudStack creates at installation
// (ConfigurationServerImpl.createDefaultNetworkOfferings), as createNetworkOffering
// takes it.
func isolatedOfferingSpec() network.OfferingSpec {
	vr := []string{"VirtualRouter"}
	providers := map[string][]string{}
	services := []string{"Dhcp", "Dns", "UserData", "SourceNat", "StaticNat", "PortForwarding", "Firewall", "Lb", "Vpn"}
	for _, s := range services {
		providers[s] = vr
	}
	return network.OfferingSpec{Name: "DefaultIsolatedNetworkOfferingWithSourceNatService",
		DisplayText: "Offering for Isolated networks with Source Nat service enabled", GuestType: "Isolated",
		TrafficType: "Guest", Availability: "Required", Services: services, Providers: providers,
		ConserveMode: true, EgressDefault: false, Enable: true}
}

// vpcTierOfferingSpec is DefaultIsolatedNetworkOfferingForVpcNetworks
// (NetworkOrchestrator.configure, #5: the VPC virtual router's services,
// Optional, conserve mode off), as createNetworkOffering takes it; its
// NetworkACL service makes it forvpc.
func vpcTierOfferingSpec() network.OfferingSpec {
	services := []string{"Dhcp", "Dns", "UserData", "NetworkACL", "Lb", "SourceNat", "StaticNat", "PortForwarding", "Vpn"}
	providers := map[string][]string{}
	for _, s := range services {
		providers[s] = []string{"VpcVirtualRouter"}
	}
	return network.OfferingSpec{Name: "DefaultIsolatedNetworkOfferingForVpcNetworks",
		DisplayText: "Offering for Isolated VPC networks with Source Nat service enabled", GuestType: "Isolated",
		TrafficType: "Guest", Availability: "Optional", Services: services, Providers: providers,
		EgressDefault: false, Enable: true}
}

// seedZone deploys advanced.cfg's zone, the default isolated and VPC tier
// offerings and the admin's guest network, implemented (VLAN 100 and a source NAT
// address), as the stock simulator's zone has after its first VM.
func seedZone(st *model.State, hypervisor string, now time.Time) {
	z := deployZone(st, advancedCfg(hypervisor), now)
	o := must(network.MakeNetworkOffering(st, isolatedOfferingSpec(), now))
	must(network.MakeNetworkOffering(st, vpcTierOfferingSpec(), now))
	n := must(network.MakeNetwork(st, network.Spec{Name: "guest-network", DisplayText: "guest-network", OfferingID: o.ID,
		ZoneID: z.ID, Account: st.Accounts[0]}, now))
	mustOK(network.ImplementNetwork(st, n))
}

func providerNamed(st *model.State, physnetID, name string) *model.NetworkServiceProvider {
	for _, n := range st.Providers {
		if n.PhysicalNetworkID == physnetID && n.Name == name {
			return n
		}
	}
	return nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("simulator: seeding the zone: %v", err))
	}
	return v
}

func mustOK(err *kernel.APIError) {
	if err != nil {
		panic(fmt.Sprintf("simulator: seeding the zone: %v", err))
	}
}
