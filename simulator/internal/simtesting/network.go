package simtesting

import (
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// ProjectNetwork creates an isolated network of the default network's
// offering in a project.
func (e *VMEnv) ProjectNetwork(t *testing.T, cs *cloudstack.CloudStackClient, projectID, name string) *cloudstack.CreateNetworkResponse {
	t.Helper()
	own, _, err := e.CS.Network.GetNetworkByID(e.Net)
	if err != nil {
		t.Fatal(err)
	}
	np := cs.Network.NewCreateNetworkParams(name, own.Networkofferingid, e.Zone)
	np.SetProjectid(projectID)
	n, err := cs.Network.CreateNetwork(np)
	if err != nil {
		t.Fatalf("createNetwork in project %s: %v", projectID, err)
	}
	return n
}

// PublicIPs lists the public addresses p selects.
func (e *VMEnv) PublicIPs(t *testing.T, p *cloudstack.ListPublicIpAddressesParams) []*cloudstack.PublicIpAddress {
	t.Helper()
	if p == nil {
		p = e.CS.Address.NewListPublicIpAddressesParams()
	}
	l, err := e.CS.Address.ListPublicIpAddresses(p)
	if err != nil {
		t.Fatal(err)
	}
	return l.PublicIpAddresses
}

// Associate takes a public address for the seeded network.
func (e *VMEnv) Associate(t *testing.T) *cloudstack.AssociateIpAddressResponse {
	t.Helper()
	return e.AssociateTo(t, e.Net)
}

// AssociateTo acquires a public address for network.
func (e *VMEnv) AssociateTo(t *testing.T, network string) *cloudstack.AssociateIpAddressResponse {
	t.Helper()
	p := e.CS.Address.NewAssociateIpAddressParams()
	p.SetNetworkid(network)
	ip, err := e.CS.Address.AssociateIpAddress(p)
	if err != nil {
		t.Fatalf("associateIpAddress on %s: %v", network, err)
	}
	return ip
}

// LbParams are createLoadBalancerRule parameters for a round-robin rule
// from port to 8080 on the address ipID.
func (e *VMEnv) LbParams(ipID, name string, port int) *cloudstack.CreateLoadBalancerRuleParams {
	p := e.CS.LoadBalancer.NewCreateLoadBalancerRuleParams("roundrobin", name, 8080, port)
	if ipID != "" {
		p.SetPublicipid(ipID)
	}
	return p
}
