package simulator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/template"
)

func TestCloudStackGoListsOfferingsNetworksOSTypes(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	so, err := cs.ServiceOffering.ListServiceOfferings(cs.ServiceOffering.NewListServiceOfferingsParams())
	if err != nil || so.Count != 4 {
		t.Fatalf("listServiceOfferings = %+v, %v", so, err)
	}
	small, constrained := so.ServiceOfferings[0], so.ServiceOfferings[3]
	if small.Name != "Small Instance" || small.Cpunumber != 1 || small.Cpuspeed != 500 || small.Memory != 512 ||
		!so.ServiceOfferings[2].Iscustomized || !constrained.Iscustomized || constrained.Cpuspeed != 1000 ||
		constrained.Serviceofferingdetails["maxcpunumber"] != "2" || constrained.Serviceofferingdetails["minmemory"] != "512" {
		t.Fatalf("service offerings = %+v", so.ServiceOfferings)
	}
	do, err := cs.DiskOffering.ListDiskOfferings(cs.DiskOffering.NewListDiskOfferingsParams())
	if err != nil || do.Count != 4 || do.DiskOfferings[1].Name != "Medium" || do.DiskOfferings[1].Disksize != 20 ||
		!do.DiskOfferings[3].Iscustomized || do.DiskOfferings[3].Disksize != 0 {
		t.Fatalf("listDiskOfferings = %+v, %v", do, err)
	}
	zones, _ := cs.Zone.ListZones(cs.Zone.NewListZonesParams())
	np := cs.Network.NewListNetworksParams()
	np.SetZoneid(zones.Zones[0].Id)
	np.SetCanusefordeploy(true)
	nets, err := cs.Network.ListNetworks(np)
	if err != nil || nets.Count != 1 {
		t.Fatalf("listNetworks = %+v, %v", nets, err)
	}
	n := nets.Networks[0]
	if n.Name != "guest-network" || n.Cidr != "10.1.1.0/24" || n.Gateway != "10.1.1.1" || n.State != "Implemented" ||
		n.Type != "Isolated" || !n.Canusefordeploy || n.Zonename != "Sandbox-simulator" {
		t.Fatalf("network = %+v", n)
	}
	op := cs.GuestOS.NewListOsTypesParams()
	op.SetDescription("ubuntu")
	os, err := cs.GuestOS.ListOsTypes(op)
	if err != nil || os.Count != 3 || os.OsTypes[1].Description != "Ubuntu 22.04 LTS" || os.OsTypes[1].Oscategoryname != "Ubuntu" {
		t.Fatalf("listOsTypes description=ubuntu = %+v, %v", os, err)
	}
	// The earlier CPIs' default os_type, which CloudStack seeds for XenServer.
	op.SetDescription("Other PV (64-bit)")
	if os, err = cs.GuestOS.ListOsTypes(op); err != nil || os.Count != 1 || os.OsTypes[0].Oscategoryname != "Other" {
		t.Fatalf("listOsTypes description=Other PV (64-bit) = %+v, %v", os, err)
	}
	vr, err := cs.VLAN.ListVlanIpRanges(cs.VLAN.NewListVlanIpRangesParams())
	if err != nil || vr.Count != 1 || vr.VlanIpRanges[0].Startip != "192.168.2.2" || vr.VlanIpRanges[0].Endip != "192.168.2.200" ||
		vr.VlanIpRanges[0].Gateway != "192.168.2.1" {
		t.Fatalf("listVlanIpRanges = %+v, %v", vr, err)
	}
}

func TestInfrastructureLists(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{Hypervisor: "kvm"})
	cs := s.Client()
	clusters, err := cs.Cluster.ListClusters(cs.Cluster.NewListClustersParams())
	if err != nil || clusters.Count != 2 || clusters.Clusters[0].Name != "C0" || clusters.Clusters[0].Hypervisortype != "KVM" {
		t.Fatalf("listClusters = %+v, %v", clusters, err)
	}
	hp := cs.Host.NewListHostsParams()
	hp.SetClusterid(clusters.Clusters[0].Id)
	hosts, err := cs.Host.ListHosts(hp)
	if err != nil || hosts.Count != simulator.SeededHosts["C0"] || hosts.Hosts[0].Hypervisor != "KVM" || hosts.Hosts[0].State != "Up" {
		t.Fatalf("listHosts C0 = %+v, %v", hosts, err)
	}
	pods, err := cs.Pod.ListPods(cs.Pod.NewListPodsParams())
	if err != nil || pods.Count != 1 || pods.Pods[0].Name != "POD0" {
		t.Fatalf("listPods = %+v, %v", pods, err)
	}
	hv, err := cs.Hypervisor.ListHypervisors(cs.Hypervisor.NewListHypervisorsParams())
	if err != nil || hv.Count != 1 || hv.Hypervisors[0].Name != "KVM" {
		t.Fatalf("listHypervisors = %+v, %v", hv, err)
	}
	caps, err := cs.Configuration.ListCapabilities(cs.Configuration.NewListCapabilitiesParams())
	if err != nil || caps.Capabilities.Cloudstackversion != "4.22.0.0" {
		t.Fatalf("listCapabilities = %+v, %v", caps, err)
	}
}

func TestEmptyListShapes(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	vms, err := s.Client().VirtualMachine.ListVirtualMachines(s.Client().VirtualMachine.NewListVirtualMachinesParams())
	if err != nil || vms.Count != 0 || len(vms.VirtualMachines) != 0 {
		t.Fatalf("listVirtualMachines = %+v, %v", vms, err)
	}
	if r := s.Call(map[string]string{"command": "listVirtualMachines"}); r.Raw != `{"listvirtualmachinesresponse":{}}` {
		t.Fatalf("empty list = %s", r.Raw)
	}
}

func TestPagingAndCount(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	total := len(osCatalogueTypes())
	page := func(p, size int) map[string]any {
		return s.Call(map[string]string{"command": "listOsTypes", "page": fmt.Sprint(p), "pagesize": fmt.Sprint(size)}).
			Inner(t, "listostypesresponse")
	}
	seen := map[string]bool{}
	for p := 1; p <= (total+4)/5; p++ {
		body := page(p, 5)
		if int(simtesting.Num(body["count"])) != total {
			t.Fatalf("page %d count = %v, want %d", p, body["count"], total)
		}
		for _, o := range simtesting.Items(t, body, "ostype") {
			seen[o["id"].(string)] = true
		}
	}
	if len(seen) != total {
		t.Fatalf("pages returned %d distinct OS types, want %d", len(seen), total)
	}
	past := page(100, 5)
	if int(simtesting.Num(past["count"])) != total || past["ostype"] != nil {
		t.Fatalf("page past the end = %v", past)
	}
}

func osCatalogueTypes() []string {
	var out []string
	for _, c := range template.OSCatalogue {
		out = append(out, c.Types...)
	}
	return out
}

func TestNameFilters(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	// Equality (case-insensitive) for offerings...
	so := s.Call(map[string]string{"command": "listServiceOfferings", "name": "small instance"}).Inner(t, "listserviceofferingsresponse")
	if simtesting.Num(so["count"]) != 1 {
		t.Fatalf("name=small instance: %v", so)
	}
	if r := s.Call(map[string]string{"command": "listServiceOfferings", "name": "Small"}); r.Raw != `{"listserviceofferingsresponse":{}}` {
		t.Fatalf("name=Small should not match: %s", r.Raw)
	}
	// ...but keyword is a substring match.
	kw := s.Call(map[string]string{"command": "listServiceOfferings", "keyword": "INSTANCE"}).Inner(t, "listserviceofferingsresponse")
	if simtesting.Num(kw["count"]) != 2 {
		t.Fatalf("keyword=INSTANCE: %v", kw)
	}
	// listVirtualMachines name is the host name, EQ (QueryManagerImpl.
	// searchForUserVMIdsAndCount), case-insensitive as MySQL compares.
	addVMs(s, "cpivm-one", "cpivm-two", "other")
	if r := s.Call(map[string]string{"command": "listVirtualMachines", "name": "CPIVM"}); r.Raw != `{"listvirtualmachinesresponse":{}}` {
		t.Fatalf("name=CPIVM should match no VM: %s", r.Raw)
	}
	vms := s.Call(map[string]string{"command": "listVirtualMachines", "name": "CPIVM-ONE"}).Inner(t, "listvirtualmachinesresponse")
	if simtesting.Num(vms["count"]) != 1 {
		t.Fatalf("name=CPIVM-ONE: %v", vms)
	}
	cs := s.Client()
	p := cs.VirtualMachine.NewListVirtualMachinesParams()
	p.SetName("other")
	got, err := cs.VirtualMachine.ListVirtualMachines(p)
	if err != nil || got.Count != 1 || got.VirtualMachines[0].Name != "other" || got.VirtualMachines[0].Zonename != "Sandbox-simulator" ||
		got.VirtualMachines[0].Nic[0].Ipaddress == "" {
		t.Fatalf("listVirtualMachines name=other = %+v, %v", got, err)
	}
}

// addVMs puts running VMs straight into the store: deployVirtualMachine is
// not part of the simulator yet.
func addVMs(s *simtesting.Sim, names ...string) {
	s.Srv.Mu.Lock()
	defer s.Srv.Mu.Unlock()
	st := s.Srv.State
	for i, name := range names {
		id, internal := st.NewID(model.KindVM)
		nicID, _ := st.NewID(model.KindNIC)
		st.VMs = append(st.VMs, &model.VirtualMachine{ID: id, InternalID: internal, Name: name, DisplayName: name,
			InstanceName: fmt.Sprintf("i-2-%d-VM", internal), State: "Running", ZoneID: st.Zones[0].ID,
			HostID: st.Hosts[0].ID, ServiceOfferingID: st.ServiceOfferings[0].ID, AccountID: st.Accounts[0].ID,
			UserID: st.Users[0].ID, Hypervisor: "XenServer", CPUNumber: 1, CPUSpeed: 500, Memory: 512,
			NICs: []*model.NIC{{ID: nicID, NetworkID: st.Networks[0].ID, IPAddress: fmt.Sprintf("10.1.1.%d", 10+i),
				MACAddress: "02:00:00:00:00:01", IsDefault: true}}, Created: time.Now()})
	}
}
