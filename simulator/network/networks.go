package network

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// networkCommands are the commands of networks.go (registerCommands).
func networkCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listNetworks", IDKind: model.KindNetwork, Sync: listNetworks},
	}
}

// listNetworks is NetworkServiceImpl.searchForNetworks (createNetworkSearchCriteria):
// name EQ, keyword name LIKE, type/traffictype/acltype/physicalnetworkid/
// networkofferingid/restartrequired/specifyipranges EQ, vlan as the
// broadcast URI, tags any one key/value pair, then canusefordeploy as
// NetworkModelImpl.canUseForDeploy equals it; ordered by id descending (the
// Filter "id", false): the newest network first. A caller that is not a
// root admin gets issystem=false; the simulator has no system networks, so
// issystem=true lists none; vpcid EQ, forvpc the networks with a VPC (true)
// or without (false). Not modelled: the account/domain/shared scoping
// (every caller is its own account or the root admin), supportedservices,
// associatednetworkid, display.
func listNetworks(c *kernel.Call) (any, error) {
	p := c.Params
	if f := p.Get("networkfilter"); f != "" && !model.ContainsFold(networkFilters, f) {
		return nil, kernel.ParamError("Invalid value of networkfilter: %s", f)
	}
	l := kernel.Lister[*model.Network]{Key: "network", ID: (*model.Network).UUID, Name: func(n *model.Network) string { return n.Name },
		Zone: func(n *model.Network) string { return n.ZoneID }, View: views.NetworkView, Owner: networkOwner}
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
			(!p.Has("forvpc") || p.Bool("forvpc", false) == (n.VPCID != "")) && kernel.OptEq(p.Get("vpcid"), n.VPCID) &&
			(!p.Has("canusefordeploy") || p.Bool("canusefordeploy", false) == n.CanUseForDeploy()) &&
			(!p.Has("restartrequired") || !p.Bool("restartrequired", false)) &&
			(!p.Has("specifyipranges") || p.Bool("specifyipranges", false) == networkSpecifiesIPRanges(c.State, n)) &&
			tag.TaggedWithAny(c.State, "Network", n.ID, p.Map("tags"))
	})
}

// networkOwner is the account a network's project scoping applies to:
// NetworkServiceImpl.searchForNetworks lists the account-specific (ACL
// Account) networks of the permitted accounts, of type PROJECT with a
// projectid and not otherwise (skipProjectNetworks), and adds the
// caller's domain-level (ACL Domain) networks either way, so a Domain
// network has no owner here. Departures: with projectid -1 an admin also
// sees the domain-level networks the Java leaves out (it asks them of
// project accounts only), and a project the caller may not see is a 531
// PermissionDenied where searchForNetworks throws 431 "cannot access
// specified project id".
func networkOwner(n *model.Network) string {
	if n.ACLType == "Domain" {
		return ""
	}
	return n.AccountID
}

// networkFilters are Network.NetworkFilter's values as searchForNetworks
// uses them.
var networkFilters = []string{"Account", "Domain", "AccountDomain", "Shared", "All"}

func networkSpecifiesIPRanges(st *model.State, n *model.Network) bool {
	o := st.NetworkOffering(n.OfferingID)
	return o != nil && o.SpecifyIPRanges
}
