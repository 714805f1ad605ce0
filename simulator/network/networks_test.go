package network_test

import (
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// TestListNetworksAsSearchForNetworks: newest first (id descending), name
// EQ, keyword on the name only, canusefordeploy compared both ways, and an
// unknown networkfilter refused.
func TestListNetworksAsSearchForNetworks(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	second := e.AddNetwork(t, "second-network", "10.1.2.0/24", "10.1.2.1")
	e.Srv.Mu.Lock()
	e.Srv.State.Network(second).DisplayText = "described elsewhere"
	e.Srv.Mu.Unlock()
	list := func(set func(p *cloudstack.ListNetworksParams)) (*cloudstack.ListNetworksResponse, error) {
		p := e.CS.Network.NewListNetworksParams()
		set(p)
		return e.CS.Network.ListNetworks(p)
	}
	all, err := list(func(*cloudstack.ListNetworksParams) {})
	if err != nil || all.Count != 2 || all.Networks[0].Id != second || all.Networks[1].Id != e.Net {
		t.Fatalf("listNetworks = %+v, %v; want the new network first", all, err)
	}
	if l, err := list(func(p *cloudstack.ListNetworksParams) { p.SetName("second") }); err != nil || l.Count != 0 {
		t.Fatalf("name=second (EQ) = %+v, %v", l, err)
	}
	if l, err := list(func(p *cloudstack.ListNetworksParams) { p.SetKeyword("SECOND") }); err != nil || l.Count != 1 {
		t.Fatalf("keyword=SECOND = %+v, %v", l, err)
	}
	if l, err := list(func(p *cloudstack.ListNetworksParams) { p.SetKeyword("elsewhere") }); err != nil || l.Count != 0 {
		t.Fatalf("keyword on the display text = %+v, %v", l, err)
	}
	if l, err := list(func(p *cloudstack.ListNetworksParams) { p.SetCanusefordeploy(false) }); err != nil || l.Count != 0 {
		t.Fatalf("canusefordeploy=false = %+v, %v; every network here can be used", l, err)
	}
	_, err = list(func(p *cloudstack.ListNetworksParams) { p.SetNetworkfilter("Mine") })
	simtesting.WantAPIError(t, err, 431, "Invalid value of networkfilter: Mine")
}

// TestNetworkVLANOnlyForTheRootAdmin: ApiResponseHelper.createNetworkResponse
// returns the broadcast URI and VLAN in the Full view only.
func TestNetworkVLANOnlyForTheRootAdmin(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	e.Deploy(t, e.Params("implements-the-network"))
	tenant, _ := e.AddTenant(t, "tenant")
	p := e.CS.Network.NewListNetworksParams()
	p.SetId(e.Net)
	admin, err := e.CS.Network.ListNetworks(p)
	if err != nil || admin.Count != 1 || admin.Networks[0].Vlan == "" || admin.Networks[0].Broadcasturi == "" {
		t.Fatalf("the root admin's network = %+v, %v", admin, err)
	}
	user, err := tenant.Network.ListNetworks(p)
	if err != nil || user.Count != 1 || user.Networks[0].Vlan != "" || user.Networks[0].Broadcasturi != "" {
		t.Fatalf("a user's network = %+v, %v", user, err)
	}
}
