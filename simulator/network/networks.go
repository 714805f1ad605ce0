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
// Filter "id", false): the newest network first; vpcid EQ, forvpc the
// networks with a VPC (true) or without (false). Networks of system
// offerings (the zones' public networks) are listed only to a root admin
// asking issystem=true ("reset parameter to false if it's specified by a
// non-ROOT user"), and then only they (listSystemNetworks). Not modelled:
// the account/domain/shared scoping (every caller is its own account or
// the root admin), supportedservices, associatednetworkid, display.
func listNetworks(c *kernel.Call) (any, error) {
	p := c.Params
	if f := p.Get("networkfilter"); f != "" && !model.ContainsFold(networkFilters, f) {
		return nil, kernel.ParamError("Invalid value of networkfilter: %s", f)
	}
	if p.Bool("issystem", false) && c.Account.Role() == model.RoleAdmin {
		return listSystemNetworks(c)
	}
	return newestFirstLister().Run(c, newestFirst(c.State.Networks), func(n *model.Network) bool {
		typ := p.Get("type")
		return (typ == "" || strings.EqualFold(typ, "all") || strings.EqualFold(typ, n.Type)) &&
			kernel.OptEq(p.Get("traffictype"), "Guest") && kernel.OptEq(p.Get("physicalnetworkid"), n.PhysicalNetworkID) &&
			kernel.OptEq(p.Get("networkofferingid"), n.OfferingID) &&
			(p.Get("vlan") == "" || strings.TrimPrefix(p.Get("vlan"), "vlan://") == n.VLAN) &&
			kernel.OptEq(p.Get("acltype"), model.Or(n.ACLType, "Account")) &&
			(!p.Has("forvpc") || p.Bool("forvpc", false) == (n.VPCID != "")) && kernel.OptEq(p.Get("vpcid"), n.VPCID) &&
			(!p.Has("canusefordeploy") || p.Bool("canusefordeploy", false) == n.CanUseForDeploy()) &&
			(!p.Has("restartrequired") || !p.Bool("restartrequired", false)) &&
			(!p.Has("specifyipranges") || p.Bool("specifyipranges", false) == networkSpecifiesIPRanges(c.State, n)) &&
			tag.TaggedWithAny(c.State, "Network", n.ID, p.Map("tags"))
	})
}

// listSystemNetworks is searchForNetworks' isSystem branch: account and
// domainid are refused, then the system networks are searched by the same
// criteria, with no ACL type and no account scoping. The simulator's only
// system networks are the zones' public ones (Management, Control and
// Storage networks are not modelled); none can be used for deploy
// (canUseForDeploy), none has a VPC, a guest type or a broadcast URI.
func listSystemNetworks(c *kernel.Call) (any, error) {
	p := c.Params
	if p.Has("account") || p.Has("domainid") {
		return nil, kernel.ParamError("System network belongs to system, account and domainId parameters can't be specified")
	}
	return newestFirstLister().Run(c, newestFirst(c.State.SystemNetworks), func(n *model.Network) bool {
		typ := p.Get("type")
		return (typ == "" || strings.EqualFold(typ, "all")) && kernel.OptEq(p.Get("traffictype"), n.TrafficType) &&
			p.Get("physicalnetworkid") == "" && kernel.OptEq(p.Get("networkofferingid"), n.OfferingID) &&
			p.Get("vlan") == "" && !p.Bool("forvpc", false) && p.Get("vpcid") == "" &&
			(!p.Has("canusefordeploy") || !p.Bool("canusefordeploy", false)) &&
			(!p.Has("restartrequired") || !p.Bool("restartrequired", false)) &&
			(!p.Has("specifyipranges") || p.Bool("specifyipranges", false) == systemSpecifiesIPRanges(c.State, n)) &&
			tag.TaggedWithAny(c.State, "Network", n.ID, p.Map("tags"))
	})
}

func newestFirstLister() kernel.Lister[*model.Network] {
	return kernel.Lister[*model.Network]{Key: "network", ID: (*model.Network).UUID, Name: func(n *model.Network) string { return n.Name },
		Zone: func(n *model.Network) string { return n.ZoneID }, View: views.NetworkView, Owner: networkOwner}
}

// newestFirst is the networks in id descending order (the Filter "id", false).
func newestFirst(networks []*model.Network) []*model.Network {
	out := make([]*model.Network, 0, len(networks))
	for i := len(networks) - 1; i >= 0; i-- {
		out = append(out, networks[i])
	}
	return out
}

func systemSpecifiesIPRanges(st *model.State, n *model.Network) bool {
	o := st.SystemNetworkOffering(n.OfferingID)
	return o != nil && o.SpecifyIPRanges
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
