package network

import (
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// Network ACL lists and their rules: NetworkACLServiceImpl and
// NetworkACLManagerImpl.

// networkACLCommands are the commands of networkacls.go (registerCommands).
func networkACLCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createNetworkACLList", Async: createNetworkACLList},
		{Name: "listNetworkACLLists", IDKind: model.KindNetworkACLList, Sync: listNetworkACLLists},
		{Name: "deleteNetworkACLList", IDKind: model.KindNetworkACLList, Async: deleteNetworkACLList},
		{Name: "createNetworkACL", Async: createNetworkACL},
		{Name: "listNetworkACLs", IDKind: model.KindNetworkACLItem, Sync: listNetworkACLs},
		{Name: "deleteNetworkACL", IDKind: model.KindNetworkACLItem, Async: deleteNetworkACL},
		{Name: "replaceNetworkACLList", Async: replaceNetworkACLList},
	}
}

// The global lists (NetworkACL.DEFAULT_DENY and DEFAULT_ALLOW).
const (
	aclDefaultDeny  = "default_deny"
	aclDefaultAllow = "default_allow"
)

// seedDefaultACLs makes the global lists the database is installed with
// (network_acl ids 1 and 2, vpc_id 0), each with an Ingress and an Egress
// rule for all protocols from 0.0.0.0/0, numbered 1 and 2. Departure: the
// rows are the installed schema's as CloudStack's API shows them; the SQL
// itself was not read here.
func seedDefaultACLs(st *model.State, now time.Time) {
	if aclListNamed(st, aclDefaultDeny) != nil {
		return
	}
	for _, d := range []struct{ name, text, action string }{
		{aclDefaultDeny, "Default Network ACL Deny All", "Deny"},
		{aclDefaultAllow, "Default Network ACL Allow All", "Allow"},
	} {
		l := &model.NetworkACLList{Name: d.name, Description: d.text, Display: true}
		l.ID, l.InternalID = st.NewID(model.KindNetworkACLList)
		st.NetworkACLLists = append(st.NetworkACLLists, l)
		for n, traffic := range []string{"Ingress", "Egress"} {
			i := &model.NetworkACLItem{ACLID: l.ID, Number: n + 1, Protocol: "all", CIDRs: []string{allIPv4CIDRs},
				TrafficType: traffic, Action: d.action, State: model.RuleActive, Display: true, Created: now}
			i.ID, i.InternalID = st.NewID(model.KindNetworkACLItem)
			st.NetworkACLItems = append(st.NetworkACLItems, i)
		}
	}
}

func aclListNamed(st *model.State, name string) *model.NetworkACLList {
	for _, l := range st.NetworkACLLists {
		if l.VPCID == "" && l.Name == name {
			return l
		}
	}
	return nil
}

// isDefaultACL is NetworkACLServiceImpl.isDefaultAcl.
func isDefaultACL(l *model.NetworkACLList) bool {
	return l.VPCID == "" && (l.Name == aclDefaultDeny || l.Name == aclDefaultAllow)
}

// createNetworkACLList is CreateNetworkACLListCmd: create
// (NetworkACLServiceImpl.createNetworkACL: the VPC must exist) persists the
// list at once; the job answers it. Without vpcid the list is global
// (vpc_id 0).
func createNetworkACLList(c *kernel.Call) (*kernel.AsyncJob, error) {
	SeedVPCDefaults(c.State, c.Engine.Now())
	p := c.Params
	vpcID := p.Get("vpcid")
	if vpcID != "" && c.State.VPC(vpcID) == nil {
		return nil, kernel.ParamError("Unable to find VPC with ID [%d].", vpcInternalID(c.State, vpcID))
	}
	l := &model.NetworkACLList{Name: p.Get("name"), Description: p.Get("description"), VPCID: vpcID,
		Display: p.Bool("fordisplay", true)}
	l.ID, l.InternalID = c.State.NewID(model.KindNetworkACLList)
	c.State.NetworkACLLists = append(c.State.NetworkACLLists, l)
	c.Changed()
	return &kernel.AsyncJob{InstanceType: "NetworkAcl", InstanceID: l.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.user.network.CreateNetworkACLListCmd",
		Run: func() (any, error) {
			return map[string]any{"networkacllist": views.ACLListView(c, l)}, nil
		}}, nil
}

// listNetworkACLLists is NetworkACLServiceImpl.listNetworkACLs: id, name
// EQ, keyword in name or description, the lists of vpcid and the global
// ones (vpc_id IN (vpcid, 0)), networkid the network's list; newest first
// (Filter "id", false). Without vpcid: the lists of the caller's VPCs and
// the global ones.
func listNetworkACLLists(c *kernel.Call) (any, error) {
	SeedVPCDefaults(c.State, c.Engine.Now())
	p := c.Params
	if id := p.Get("vpcid"); id != "" && c.State.VPC(id) == nil {
		return nil, kernel.ParamError("Unable to find VPC")
	}
	var tierACL string
	if n := c.State.Network(p.Get("networkid")); p.Get("networkid") != "" {
		tierACL = "-" // no list: a network with none matches nothing
		if n != nil && n.ACLID != "" {
			tierACL = n.ACLID
		}
	}
	l := kernel.Lister[*model.NetworkACLList]{Key: "networkacllist", ID: (*model.NetworkACLList).UUID,
		Name:    func(a *model.NetworkACLList) string { return a.Name },
		Keyword: func(a *model.NetworkACLList) []string { return []string{a.Name, a.Description} }, View: views.ACLListView}
	var newestFirst []*model.NetworkACLList
	for i := len(c.State.NetworkACLLists) - 1; i >= 0; i-- {
		newestFirst = append(newestFirst, c.State.NetworkACLLists[i])
	}
	return l.Run(c, newestFirst, func(a *model.NetworkACLList) bool {
		return (a.VPCID == "" || kernel.OptEq(p.Get("vpcid"), a.VPCID) && c.State.VPC(a.VPCID) != nil) &&
			(tierACL == "" || strings.EqualFold(tierACL, a.ID)) &&
			(!p.Has("fordisplay") || p.Bool("fordisplay", true) == a.Display)
	})
}

// deleteNetworkACLList is NetworkACLServiceImpl.deleteNetworkACL and
// NetworkACLManagerImpl.deleteNetworkACL in the job: a default list cannot
// be removed, nor one a network still uses; its rules go with it.
func deleteNetworkACLList(c *kernel.Call) (*kernel.AsyncJob, error) {
	l, ok := model.ByID(c.State.NetworkACLLists, c.Params.Get("id"))
	job := &kernel.AsyncJob{InstanceType: "NetworkAcl", CmdClass: "org.apache.cloudstack.api.command.user.network.DeleteNetworkACLListCmd"}
	job.Run = func() (any, error) {
		switch {
		case !ok:
			return nil, kernel.ParamError("Unable to find specified ACL")
		case isDefaultACL(l):
			return nil, kernel.ParamError("Default ACL cannot be removed")
		}
		if tiers := tiersUsing(c.State, l.ID); tiers > 0 {
			return nil, kernel.InternalError("ACL is still associated with %d tier(s). Cannot delete network ACL: %s", tiers, l.ID)
		}
		removeACLList(c.State, l)
		c.Changed()
		return kernel.Success(), nil
	}
	return job, nil
}

func tiersUsing(st *model.State, aclID string) int {
	n := 0
	for _, t := range st.Networks {
		if strings.EqualFold(t.ACLID, aclID) {
			n++
		}
	}
	return n
}

// deleteACLListsOf is the ACL step of VpcManagerImpl.cleanupVpcResources.
func deleteACLListsOf(st *model.State, vpcID string) {
	for _, l := range append([]*model.NetworkACLList(nil), st.NetworkACLLists...) {
		if l.VPCID == vpcID {
			removeACLList(st, l)
		}
	}
}

// removeACLList is NetworkACLManagerImpl.deleteNetworkACL's rows: the
// list's items, then the list.
func removeACLList(st *model.State, l *model.NetworkACLList) {
	items := st.NetworkACLItems[:0]
	for _, i := range st.NetworkACLItems {
		if i.ACLID != l.ID {
			items = append(items, i)
		}
	}
	st.NetworkACLItems = items
	lists := st.NetworkACLLists[:0]
	for _, other := range st.NetworkACLLists {
		if other != l {
			lists = append(lists, other)
		}
	}
	st.NetworkACLLists = lists
}

// replaceNetworkACLList is NetworkACLServiceImpl.replaceNetworkACL for a
// tier: the network must be in a VPC, the list the VPC's or a default one.
// Departure: the private gateway form (gatewayid) is not modelled.
func replaceNetworkACLList(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	job := &kernel.AsyncJob{InstanceType: "NetworkAcl", CmdClass: "org.apache.cloudstack.api.command.user.network.ReplaceNetworkACLListCmd"}
	n := c.State.Network(p.Get("networkid"))
	l, ok := model.ByID(c.State.NetworkACLLists, p.Get("aclid"))
	job.Run = func() (any, error) {
		switch {
		case n == nil:
			return nil, kernel.ParamError("Unable to find specified Network")
		case !ok:
			return nil, kernel.ParamError("Unable to find specified NetworkACL")
		case n.VPCID == "":
			return nil, kernel.ParamError("Network is not part of a VPC: %s", n.ID)
		case l.VPCID != "" && !strings.EqualFold(l.VPCID, n.VPCID):
			return nil, kernel.ParamError("Network: %d and ACL: %d do not belong to the same VPC", n.InternalID, l.InternalID)
		}
		n.ACLID = l.ID
		c.Changed()
		return kernel.Success(), nil
	}
	return job, nil
}

// aclListFor is the list createAclListIfNeeded finds: aclid's, else the
// network's, made for it when it has none.
func aclListFor(c *kernel.Call) (*model.NetworkACLList, *kernel.APIError) {
	p := c.Params
	if id := p.Get("aclid"); id != "" {
		l, _ := model.ByID(c.State.NetworkACLLists, id)
		return l, nil
	}
	if p.Get("networkid") == "" {
		return nil, kernel.ParamError("Cannot create Network ACL Item. ACL Id or network Id is required")
	}
	n := c.State.Network(p.Get("networkid"))
	if n.VPCID == "" {
		return nil, kernel.ParamError("Network: %s does not belong to VPC", n.ID)
	}
	if n.ACLID == "" {
		return aclListForTier(c, n)
	}
	l, _ := model.ByID(c.State.NetworkACLLists, n.ACLID)
	return l, nil
}

// aclListForTier is createAclListForNetworkAndReturnAclListId: a tier
// without a list gets one of its own, named after the VPC and the tier.
func aclListForTier(c *kernel.Call, n *model.Network) (*model.NetworkACLList, *kernel.APIError) {
	if !Provides(c.State, n, "NetworkACL") {
		return nil, kernel.ParamError("Network Offering does not support NetworkACL service")
	}
	v := c.State.VPC(n.VPCID)
	if v == nil {
		return nil, kernel.ParamError("Unable to find Vpc associated with the Network")
	}
	name := "VPC_" + v.Name + "_Tier_" + n.Name + "_ACL_" + n.ID
	l := &model.NetworkACLList{Name: name, Description: "ACL for " + name, VPCID: v.ID, Display: c.Params.Bool("fordisplay", true)}
	l.ID, l.InternalID = c.State.NewID(model.KindNetworkACLList)
	c.State.NetworkACLLists = append(c.State.NetworkACLLists, l)
	n.ACLID = l.ID
	return l, nil
}
