package simulator

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

func init() {
	register(
		command{name: "listNetworks", idKind: model.KindNetwork, sync: listNetworks},
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
	if f := p.Get("networkfilter"); f != "" && !model.ContainsFold(networkFilters, f) {
		return nil, paramError("Invalid value of networkfilter: %s", f)
	}
	l := lister[*model.Network]{key: "network", id: (*model.Network).UUID, name: func(n *model.Network) string { return n.Name },
		zone: func(n *model.Network) string { return n.ZoneID }, view: (*Call).networkView}
	newestFirst := make([]*model.Network, 0, len(c.st.Networks))
	for i := len(c.st.Networks) - 1; i >= 0; i-- {
		newestFirst = append(newestFirst, c.st.Networks[i])
	}
	return l.run(c, newestFirst, func(n *model.Network) bool {
		typ := p.Get("type")
		return (typ == "" || strings.EqualFold(typ, "all") || strings.EqualFold(typ, n.Type)) &&
			optEq(p.Get("traffictype"), "Guest") && optEq(p.Get("physicalnetworkid"), n.PhysicalNetworkID) &&
			optEq(p.Get("networkofferingid"), n.OfferingID) &&
			(p.Get("vlan") == "" || strings.TrimPrefix(p.Get("vlan"), "vlan://") == n.VLAN) &&
			optEq(p.Get("acltype"), model.Or(n.ACLType, "Account")) && !p.Bool("issystem", false) &&
			!p.Bool("forvpc", false) && p.Get("vpcid") == "" &&
			(!p.Has("canusefordeploy") || p.Bool("canusefordeploy", false) == n.CanUseForDeploy()) &&
			(!p.Has("restartrequired") || !p.Bool("restartrequired", false)) &&
			(!p.Has("specifyipranges") || p.Bool("specifyipranges", false) == networkSpecifiesIPRanges(c.st, n)) &&
			taggedWithAny(c.st, "Network", n.ID, p.Map("tags"))
	})
}

// networkFilters are Network.NetworkFilter's values as searchForNetworks
// uses them.
var networkFilters = []string{"Account", "Domain", "AccountDomain", "Shared", "All"}

func networkSpecifiesIPRanges(st *model.State, n *model.Network) bool {
	o := st.NetworkOffering(n.OfferingID)
	return o != nil && o.SpecifyIPRanges
}

// networkView is ApiResponseHelper.createNetworkResponse; the offering's
// fields come from the network's offering.
func (c *Call) networkView(n *model.Network) map[string]any {
	z, a := c.st.Zone(n.ZoneID), c.st.Account(n.AccountID)
	d := c.st.Domain(a.DomainID)
	o := c.st.NetworkOffering(n.OfferingID)
	if o == nil {
		o = &model.NetworkOffering{} // every network has its offering; never nil in a consistent state
	}
	v := map[string]any{"id": n.ID, "name": n.Name, "displaytext": n.DisplayText, "zoneid": z.ID,
		"zonename": z.Name, "physicalnetworkid": n.PhysicalNetworkID, "networkofferingid": n.OfferingID,
		"networkofferingname": o.Name, "networkofferingdisplaytext": o.DisplayText,
		"networkofferingconservemode": o.ConserveMode, "networkofferingavailability": o.Availability, "type": n.Type,
		"state": n.State, "traffictype": "Guest", "broadcastdomaintype": "Vlan",
		"gateway": n.Gateway, "netmask": n.Netmask,
		"cidr": n.CIDR, "dns1": z.DNS1, "networkdomain": n.NetworkDomain, "acltype": model.Or(n.ACLType, "Account"),
		"account": a.Name, "domainid": d.ID, "domain": d.Name, "domainpath": d.DisplayPath(),
		"issystem": false, "isdefault": false, "ispersistent": false, "canusefordeploy": n.CanUseForDeploy(),
		"restartrequired": false, "specifyipranges": o.SpecifyIPRanges, "specifyvlan": o.SpecifyVLAN, "redundantrouter": false,
		"displaynetwork": true, "egressdefaultpolicy": o.EgressDefault, "supportsvmautoscaling": true,
		"strechedl2subnet": false, "hasannotations": false, "internetprotocol": "IPv4", "privatemtu": 1500,
		"publicmtu": 1500, "related": n.ID, "created": csTime(n.Created), "tags": []any{},
		"details": map[string]string{}, "service": serviceViews(o)}
	// An Allocated network has no broadcast URI or VLAN until implemented;
	// createNetworkResponse returns them "only to Root admin" (the Full view).
	if n.VLAN != "" && c.Account.Type == 1 {
		v["broadcasturi"], v["vlan"] = "vlan://"+n.VLAN, n.VLAN
	}
	return v
}
