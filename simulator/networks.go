package simulator

import (
	"strings"
	"time"
)

// PhysicalNetwork is a zone's physical network carrying the guest VLANs.
type PhysicalNetwork struct {
	ID         string `json:"id"`
	InternalID int64  `json:"internalid"`
	Name       string `json:"name"`
	ZoneID     string `json:"zoneid"`
	VLAN       string `json:"vlan"` // guest VLAN range, e.g. "100-200"
}

func (p *PhysicalNetwork) uuid() string { return p.ID }

// Network is a guest network.
type Network struct {
	ID                string    `json:"id"`
	InternalID        int64     `json:"internalid"`
	Name              string    `json:"name"`
	DisplayText       string    `json:"displaytext"`
	ZoneID            string    `json:"zoneid"`
	PhysicalNetworkID string    `json:"physicalnetworkid"`
	OfferingID        string    `json:"networkofferingid"`
	Type              string    `json:"type"`  // Isolated, Shared, L2
	State             string    `json:"state"` // Allocated, Implemented, ...
	Gateway           string    `json:"gateway"`
	Netmask           string    `json:"netmask"`
	CIDR              string    `json:"cidr"`
	VLAN              string    `json:"vlan"`
	NetworkDomain     string    `json:"networkdomain"`
	AccountID         string    `json:"accountid"`
	Created           time.Time `json:"created"`
}

func (n *Network) uuid() string { return n.ID }

// VlanRange is a public IP range of a zone.
type VlanRange struct {
	ID                string `json:"id"`
	InternalID        int64  `json:"internalid"`
	ZoneID            string `json:"zoneid"`
	PhysicalNetworkID string `json:"physicalnetworkid"`
	VLAN              string `json:"vlan"`
	Gateway           string `json:"gateway"`
	Netmask           string `json:"netmask"`
	CIDR              string `json:"cidr"`
	StartIP           string `json:"startip"`
	EndIP             string `json:"endip"`
}

func (v *VlanRange) uuid() string { return v.ID }

// Network offering of the seeded guest network (there is no network offering
// table yet; the id is recorded so the UUID resolves).
const (
	isolatedOfferingName = "DefaultIsolatedNetworkOfferingWithSourceNatService"
	isolatedOfferingText = "Offering for Isolated networks with Source Nat service enabled"
)

// seedNetworks adds advanced.cfg's physical network (guest VLANs 100-200),
// its public range 192.168.2.2-200 and an isolated guest network.
func seedNetworks(st *state, now time.Time) {
	zone := st.Zones[0]
	pid, pint := st.newID(kindPhysicalNetwork)
	st.PhysicalNetworks = append(st.PhysicalNetworks, &PhysicalNetwork{ID: pid, InternalID: pint,
		Name: "Sandbox-pnet", ZoneID: zone.ID, VLAN: "100-200"})
	vid, vint := st.newID(kindVlanRange)
	st.VlanRanges = append(st.VlanRanges, &VlanRange{ID: vid, InternalID: vint, ZoneID: zone.ID,
		PhysicalNetworkID: pid, VLAN: "vlan://50", Gateway: "192.168.2.1", Netmask: "255.255.255.0",
		CIDR: "192.168.2.0/24", StartIP: "192.168.2.2", EndIP: "192.168.2.200"})
	offering, _ := st.newID(kindNetworkOffering)
	nid, nint := st.newID(kindNetwork)
	st.Networks = append(st.Networks, &Network{ID: nid, InternalID: nint, Name: "guest-network",
		DisplayText: "guest-network", ZoneID: zone.ID, PhysicalNetworkID: pid, OfferingID: offering,
		Type: "Isolated", State: "Implemented", Gateway: "10.1.1.1", Netmask: "255.255.255.0",
		CIDR: "10.1.1.0/24", VLAN: "100", NetworkDomain: "cs2cloud.internal",
		AccountID: st.Accounts[0].ID, Created: now})
}

func (st *state) network(id string) *Network { n, _ := byID(st.Networks, id); return n }

func init() {
	register(
		command{name: "listPhysicalNetworks", idKind: kindPhysicalNetwork, sync: listPhysicalNetworks},
		command{name: "listNetworks", idKind: kindNetwork, sync: listNetworks},
		command{name: "listVlanIpRanges", idKind: kindVlanRange, sync: listVlanIpRanges},
	)
}

func listPhysicalNetworks(c *Call) (any, error) {
	l := lister[*PhysicalNetwork]{key: "physicalnetwork", id: (*PhysicalNetwork).uuid,
		name: func(p *PhysicalNetwork) string { return p.Name }, zone: func(p *PhysicalNetwork) string { return p.ZoneID },
		view: func(p *PhysicalNetwork) map[string]any {
			z := c.st.zone(p.ZoneID)
			return map[string]any{"id": p.ID, "name": p.Name, "zoneid": z.ID, "zonename": z.Name,
				"vlan": p.VLAN, "state": "Enabled", "isolationmethods": "VLAN", "broadcastdomainrange": "ZONE"}
		}}
	return l.run(c, c.st.PhysicalNetworks)
}

func listNetworks(c *Call) (any, error) {
	l := lister[*Network]{key: "network", id: (*Network).uuid, name: func(n *Network) string { return n.Name },
		keyword: func(n *Network) []string { return []string{n.Name, n.DisplayText} },
		zone:    func(n *Network) string { return n.ZoneID }, view: c.networkView}
	p := c.Params
	return l.run(c, c.st.Networks, func(n *Network) bool {
		typ := p.Get("type")
		return (typ == "" || strings.EqualFold(typ, "all") || strings.EqualFold(typ, n.Type)) &&
			optEq(p.Get("traffictype"), "Guest") && optEq(p.Get("physicalnetworkid"), n.PhysicalNetworkID) &&
			optEq(p.Get("networkofferingid"), n.OfferingID) && optEq(p.Get("vlan"), n.VLAN) &&
			optEq(p.Get("acltype"), "Account") && (!p.Bool("issystem", false)) &&
			(!p.Bool("forvpc", false)) && (!p.Bool("canusefordeploy", false) || n.canUseForDeploy()) &&
			(!p.Has("restartrequired") || !p.Bool("restartrequired", false))
	})
}

func (n *Network) canUseForDeploy() bool {
	return n.State == "Implemented" || n.State == "Allocated" || n.State == "Setup"
}

func (c *Call) networkView(n *Network) map[string]any {
	z, a := c.st.zone(n.ZoneID), c.st.account(n.AccountID)
	d := c.st.domain(a.DomainID)
	return map[string]any{"id": n.ID, "name": n.Name, "displaytext": n.DisplayText, "zoneid": z.ID,
		"zonename": z.Name, "physicalnetworkid": n.PhysicalNetworkID, "networkofferingid": n.OfferingID,
		"networkofferingname": isolatedOfferingName, "networkofferingdisplaytext": isolatedOfferingText,
		"networkofferingconservemode": true, "networkofferingavailability": "Required", "type": n.Type,
		"state": n.State, "traffictype": "Guest", "broadcastdomaintype": "Vlan",
		"broadcasturi": "vlan://" + n.VLAN, "vlan": n.VLAN, "gateway": n.Gateway, "netmask": n.Netmask,
		"cidr": n.CIDR, "dns1": z.DNS1, "networkdomain": n.NetworkDomain, "acltype": "Account",
		"account": a.Name, "domainid": d.ID, "domain": d.Name, "domainpath": d.displayPath(),
		"issystem": false, "isdefault": false, "ispersistent": false, "canusefordeploy": n.canUseForDeploy(),
		"restartrequired": false, "specifyipranges": false, "specifyvlan": false, "redundantrouter": false,
		"displaynetwork": true, "egressdefaultpolicy": false, "supportsvmautoscaling": true,
		"strechedl2subnet": false, "hasannotations": false, "internetprotocol": "IPv4", "privatemtu": 1500,
		"publicmtu": 1500, "related": n.ID, "created": csTime(n.Created), "tags": []any{},
		"details": map[string]string{}, "service": isolatedServices()}
}

// isolatedServices lists the services of the default isolated offering, all
// provided by the virtual router.
func isolatedServices() []map[string]any {
	var out []map[string]any
	for _, name := range []string{"Dhcp", "Dns", "UserData", "SourceNat", "StaticNat", "PortForwarding",
		"Firewall", "Lb", "Vpn", "NetworkACL"} {
		out = append(out, map[string]any{"name": name,
			"provider": []map[string]any{{"name": "VirtualRouter"}}})
	}
	return out
}

func listVlanIpRanges(c *Call) (any, error) {
	l := lister[*VlanRange]{key: "vlaniprange", id: (*VlanRange).uuid, zone: func(v *VlanRange) string { return v.ZoneID },
		keyword: func(v *VlanRange) []string { return []string{v.VLAN} }, view: c.vlanRangeView}
	p := c.Params
	return l.run(c, c.st.VlanRanges, func(v *VlanRange) bool {
		return optEq(p.Get("physicalnetworkid"), v.PhysicalNetworkID) &&
			(p.Get("vlan") == "" || strings.TrimPrefix(v.VLAN, "vlan://") == strings.TrimPrefix(p.Get("vlan"), "vlan://")) &&
			p.Bool("forvirtualnetwork", true) && p.Get("networkid") == "" && p.Get("podid") == ""
	})
}

func (c *Call) vlanRangeView(v *VlanRange) map[string]any {
	root := c.st.Domains[0]
	return map[string]any{"id": v.ID, "zoneid": v.ZoneID, "physicalnetworkid": v.PhysicalNetworkID,
		"vlan": v.VLAN, "gateway": v.Gateway, "netmask": v.Netmask, "cidr": v.CIDR, "startip": v.StartIP,
		"endip": v.EndIP, "forvirtualnetwork": true, "forsystemvms": false, "domainid": root.ID,
		"domain": root.Name, "domainpath": root.displayPath(), "provider": "VirtualRouter"}
}
