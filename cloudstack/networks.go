package cloudstack

import (
	"fmt"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// Network is a guest network a VM can have a NIC on.
type Network struct {
	ID      string
	Name    string
	ZoneID  string
	CIDR    string
	Gateway string
	Netmask string
	DNS     []string
	VPCID   string // a VPC tier's VPC
	// UserData says the network's offering provides the UserData service:
	// without it no metadata service answers its VMs' agents.
	UserData bool
}

// FindNetworks resolves guest networks of a zone by id or exact name in
// one listNetworks call.
func (c *Client) FindNetworks(zoneID string, refs []string) (map[string]Network, error) {
	networks, err := c.zoneNetworks(zoneID)
	if err != nil {
		return nil, err
	}
	found := map[string]Network{}
	for _, ref := range refs {
		n, err := exactlyOne(networks, ref, func(n *csgo.Network) (string, string) { return n.Id, n.Name },
			"networks in zone "+zoneID)
		if err != nil {
			return nil, err
		}
		if n == nil {
			return nil, fmt.Errorf("CloudStack has no network %q in zone %s", ref, zoneID)
		}
		found[ref] = toNetwork(*n)
	}
	return found, nil
}

// serviceUserData is the network service (Network.Service.UserData) that
// serves user data and metadata to a network's VMs.
const serviceUserData = "UserData"

// listPageSize is CloudStack's usual default.page.size.
const listPageSize = 500

// zoneNetworks pages through a zone's networks: a zone can have more than
// one page of them.
func (c *Client) zoneNetworks(zoneID string) ([]*csgo.Network, error) {
	var all []*csgo.Network
	for page := 1; ; page++ {
		p := c.cs.Network.NewListNetworksParams()
		if err := c.inProject(p); err != nil {
			return nil, err
		}
		p.SetZoneid(zoneID)
		p.SetListall(true)
		p.SetPage(page)
		p.SetPagesize(listPageSize)
		resp, err := c.cs.Network.ListNetworks(p)
		if err != nil {
			return nil, c.fail("listNetworks", err)
		}
		all = append(all, resp.Networks...)
		if len(resp.Networks) < listPageSize || len(all) >= resp.Count {
			return all, nil
		}
	}
}

func toNetwork(n *csgo.Network) Network {
	net := Network{ID: n.Id, Name: n.Name, ZoneID: n.Zoneid, CIDR: n.Cidr, Gateway: n.Gateway, Netmask: n.Netmask,
		VPCID: n.Vpcid}
	for _, s := range n.Service {
		net.UserData = net.UserData || s.Name == serviceUserData
	}
	for _, d := range []string{n.Dns1, n.Dns2} {
		if d != "" {
			net.DNS = append(net.DNS, d)
		}
	}
	return net
}
