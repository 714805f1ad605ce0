package simulator

import (
	"strings"
	"time"
)

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
	ACLType           string    `json:"acltype,omitempty"` // Account, Domain
	StartIP           string    `json:"startip,omitempty"` // a Shared network's range
	EndIP             string    `json:"endip,omitempty"`
	Created           time.Time `json:"created"`
}

func (n *Network) uuid() string { return n.ID }

func (st *state) network(id string) *Network { n, _ := byID(st.Networks, id); return n }

func init() {
	register(
		command{name: "listNetworks", idKind: kindNetwork, sync: listNetworks},
	)
}

// listNetworks is NetworkServiceImpl.searchForNetworks (createNetworkSearchCriteria):
// name EQ, keyword name LIKE, type/traffictype/acltype/physicalnetworkid/
// networkofferingid/restartrequired/specifyipranges EQ, vlan as the
// broadcast URI, tags any one key/value pair, then canusefordeploy as
// NetworkModelImpl.canUseForDeploy equals it; ordered by id descending (the
// Filter "id", false): the newest network first. A caller that is not a
// root admin gets issystem=false; the simulator has no system networks, so
// issystem=true lists none. Not modelled: the account/domain/shared scoping
// (every caller is its own account or the root admin), supportedservices,
// forvpc=true and vpcid (no VPCs), associatednetworkid, display.
func listNetworks(c *Call) (any, error) {
	p := c.Params
	if f := p.Get("networkfilter"); f != "" && !containsFold(networkFilters, f) {
		return nil, paramError("Invalid value of networkfilter: %s", f)
	}
	l := lister[*Network]{key: "network", id: (*Network).uuid, name: func(n *Network) string { return n.Name },
		zone: func(n *Network) string { return n.ZoneID }, view: c.networkView}
	newestFirst := make([]*Network, 0, len(c.st.Networks))
	for i := len(c.st.Networks) - 1; i >= 0; i-- {
		newestFirst = append(newestFirst, c.st.Networks[i])
	}
	return l.run(c, newestFirst, func(n *Network) bool {
		typ := p.Get("type")
		return (typ == "" || strings.EqualFold(typ, "all") || strings.EqualFold(typ, n.Type)) &&
			optEq(p.Get("traffictype"), "Guest") && optEq(p.Get("physicalnetworkid"), n.PhysicalNetworkID) &&
			optEq(p.Get("networkofferingid"), n.OfferingID) &&
			(p.Get("vlan") == "" || strings.TrimPrefix(p.Get("vlan"), "vlan://") == n.VLAN) &&
			optEq(p.Get("acltype"), or(n.ACLType, "Account")) && !p.Bool("issystem", false) &&
			!p.Bool("forvpc", false) && p.Get("vpcid") == "" &&
			(!p.Has("canusefordeploy") || p.Bool("canusefordeploy", false) == n.canUseForDeploy()) &&
			(!p.Has("restartrequired") || !p.Bool("restartrequired", false)) &&
			(!p.Has("specifyipranges") || p.Bool("specifyipranges", false) == c.st.networkSpecifiesIPRanges(n)) &&
			c.st.taggedWithAny("Network", n.ID, p.Map("tags"))
	})
}

// networkFilters are Network.NetworkFilter's values as searchForNetworks
// uses them.
var networkFilters = []string{"Account", "Domain", "AccountDomain", "Shared", "All"}

func (st *state) networkSpecifiesIPRanges(n *Network) bool {
	o := st.networkOffering(n.OfferingID)
	return o != nil && o.SpecifyIPRanges
}

// canUseForDeploy is NetworkModelImpl.canUseForDeploy as the simulator's
// networks can be: Allocated, Setup or Implemented (not re-read).
func (n *Network) canUseForDeploy() bool {
	return n.State == networkImplemented || n.State == networkAllocated || n.State == networkSetup
}

// networkView is ApiResponseHelper.createNetworkResponse; the offering's
// fields come from the network's offering.
func (c *Call) networkView(n *Network) map[string]any {
	z, a := c.st.zone(n.ZoneID), c.st.account(n.AccountID)
	d := c.st.domain(a.DomainID)
	o := c.st.networkOffering(n.OfferingID)
	if o == nil {
		o = &NetworkOffering{} // every network has its offering; never nil in a consistent state
	}
	v := map[string]any{"id": n.ID, "name": n.Name, "displaytext": n.DisplayText, "zoneid": z.ID,
		"zonename": z.Name, "physicalnetworkid": n.PhysicalNetworkID, "networkofferingid": n.OfferingID,
		"networkofferingname": o.Name, "networkofferingdisplaytext": o.DisplayText,
		"networkofferingconservemode": o.ConserveMode, "networkofferingavailability": o.Availability, "type": n.Type,
		"state": n.State, "traffictype": "Guest", "broadcastdomaintype": "Vlan",
		"gateway": n.Gateway, "netmask": n.Netmask,
		"cidr": n.CIDR, "dns1": z.DNS1, "networkdomain": n.NetworkDomain, "acltype": or(n.ACLType, "Account"),
		"account": a.Name, "domainid": d.ID, "domain": d.Name, "domainpath": d.displayPath(),
		"issystem": false, "isdefault": false, "ispersistent": false, "canusefordeploy": n.canUseForDeploy(),
		"restartrequired": false, "specifyipranges": o.SpecifyIPRanges, "specifyvlan": o.SpecifyVLAN, "redundantrouter": false,
		"displaynetwork": true, "egressdefaultpolicy": o.EgressDefault, "supportsvmautoscaling": true,
		"strechedl2subnet": false, "hasannotations": false, "internetprotocol": "IPv4", "privatemtu": 1500,
		"publicmtu": 1500, "related": n.ID, "created": csTime(n.Created), "tags": []any{},
		"details": map[string]string{}, "service": o.serviceViews()}
	// An Allocated network has no broadcast URI or VLAN until implemented;
	// createNetworkResponse returns them "only to Root admin" (the Full view).
	if n.VLAN != "" && c.Account.Type == 1 {
		v["broadcasturi"], v["vlan"] = "vlan://"+n.VLAN, n.VLAN
	}
	return v
}
