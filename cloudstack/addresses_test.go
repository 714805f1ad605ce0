package cloudstack_test

import (
	"testing"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/simtest"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// TestAcquirePublicIPOnATierTakesItForTheVPC: CloudStack refuses a tier's
// networkid in associateIpAddress, so an address for a VM on a tier is
// taken for the tier's VPC, no tier's until static NAT names one; on a
// network of its own the address is the network's.
func TestAcquirePublicIPOnATierTakesItForTheVPC(t *testing.T) {
	sim, ops, zone := opsSim(t)
	offs, err := ops.VPC.ListVPCOfferings(ops.VPC.NewListVPCOfferingsParams())
	if err != nil || offs.Count == 0 {
		t.Fatalf("listVPCOfferings: %v", err)
	}
	vpc, err := ops.VPC.CreateVPC(ops.VPC.NewCreateVPCParams("10.2.0.0/16", "v", "v", offs.VPCOfferings[0].Id, zone))
	if err != nil {
		t.Fatal(err)
	}
	tierOffering, _, err := ops.NetworkOffering.GetNetworkOfferingByName("DefaultIsolatedNetworkOfferingForVpcNetworks")
	if err != nil {
		t.Fatal(err)
	}
	p := ops.Network.NewCreateNetworkParams("tier", tierOffering.Id, zone)
	p.SetVpcid(vpc.Id)
	p.SetGateway("10.2.1.1")
	p.SetNetmask("255.255.255.0")
	tier, err := ops.Network.CreateNetwork(p)
	if err != nil {
		t.Fatal(err)
	}
	guest, _, err := ops.Network.GetNetworkByName("guest-network")
	if err != nil {
		t.Fatal(err)
	}

	c, _ := newClient(t, sim.URL, nil)
	for _, n := range []struct {
		network        cloudstack.Network
		ip, vpc, onNet string
	}{
		{cloudstack.Network{ID: tier.Id, VPCID: vpc.Id}, "192.168.2.50", vpc.Id, ""},
		{cloudstack.Network{ID: guest.Id}, "192.168.2.51", "", guest.Id},
	} {
		addr, err := c.AcquirePublicIP(n.network, n.ip)
		if err != nil || addr.VPCID != n.vpc || addr.NetworkID != n.onNet {
			t.Fatalf("AcquirePublicIP(%+v) = %+v, %v", n.network, addr, err)
		}
		got, _, err := ops.Address.GetPublicIpAddressByID(addr.ID)
		if err != nil || got.Ipaddress != n.ip || got.Vpcid != n.vpc || got.Associatednetworkid != n.onNet {
			t.Fatalf("CloudStack has %+v, %v for %s", got, err, n.ip)
		}
	}
}

// opsSim is an in-process simulator, a cloudstack-go client on it that
// waits for jobs, and the id of its zone.
func opsSim(t *testing.T) (*simtest.Sim, *csgo.CloudStackClient, string) {
	t.Helper()
	sim := simtest.Serve(t, simulator.Options{AdminAPIKey: apiKey, AdminSecretKey: secretKey})
	ops := csgo.NewAsyncClient(sim.URL, apiKey, secretKey, false)
	zones, err := ops.Zone.ListZones(ops.Zone.NewListZonesParams())
	if err != nil || zones.Count == 0 {
		t.Fatalf("listZones: %v", err)
	}
	return sim, ops, zones.Zones[0].Id
}
