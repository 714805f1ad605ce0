package simulator

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

func init() {
	kernel.Register(
		kernel.Command{Name: "listNetworks", IDKind: model.KindNetwork, Sync: listNetworks},
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
func listNetworks(c *kernel.Call) (any, error) {
	p := c.Params
	if f := p.Get("networkfilter"); f != "" && !model.ContainsFold(networkFilters, f) {
		return nil, kernel.ParamError("Invalid value of networkfilter: %s", f)
	}
	l := kernel.Lister[*model.Network]{Key: "network", ID: (*model.Network).UUID, Name: func(n *model.Network) string { return n.Name },
		Zone: func(n *model.Network) string { return n.ZoneID }, View: networkView}
	newestFirst := make([]*model.Network, 0, len(c.State.Networks))
	for i := len(c.State.Networks) - 1; i >= 0; i-- {
		newestFirst = append(newestFirst, c.State.Networks[i])
	}
	return l.Run(c, newestFirst, func(n *model.Network) bool {
		typ := p.Get("type")
		return (typ == "" || strings.EqualFold(typ, "all") || strings.EqualFold(typ, n.Type)) &&
			kernel.OptEq(p.Get("traffictype"), "Guest") && kernel.OptEq(p.Get("physicalnetworkid"), n.PhysicalNetworkID) &&
			kernel.OptEq(p.Get("networkofferingid"), n.OfferingID) &&
			(p.Get("vlan") == "" || strings.TrimPrefix(p.Get("vlan"), "vlan://") == n.VLAN) &&
			kernel.OptEq(p.Get("acltype"), model.Or(n.ACLType, "Account")) && !p.Bool("issystem", false) &&
			!p.Bool("forvpc", false) && p.Get("vpcid") == "" &&
			(!p.Has("canusefordeploy") || p.Bool("canusefordeploy", false) == n.CanUseForDeploy()) &&
			(!p.Has("restartrequired") || !p.Bool("restartrequired", false)) &&
			(!p.Has("specifyipranges") || p.Bool("specifyipranges", false) == networkSpecifiesIPRanges(c.State, n)) &&
			taggedWithAny(c.State, "Network", n.ID, p.Map("tags"))
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
func networkView(c *kernel.Call, n *model.Network) map[string]any {
	z, a := c.State.Zone(n.ZoneID), c.State.Account(n.AccountID)
	d := c.State.Domain(a.DomainID)
	o := c.State.NetworkOffering(n.OfferingID)
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
		"publicmtu": 1500, "related": n.ID, "created": kernel.CsTime(n.Created), "tags": []any{},
		"details": map[string]string{}, "service": serviceViews(o)}
	// An Allocated network has no broadcast URI or VLAN until implemented;
	// createNetworkResponse returns them "only to Root admin" (the Full view).
	if n.VLAN != "" && c.Account.Type == 1 {
		v["broadcasturi"], v["vlan"] = "vlan://"+n.VLAN, n.VLAN
	}
	return v
}
