package vm

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// Affinity group types the simulator's planner implements.
const (
	hostAntiAffinity = "host anti-affinity"
	hostAffinity     = "host affinity"
)

// affinityGroupTypes are the types listAffinityGroupTypes offers a root
// admin (the admin-only ExplicitDedication type and 4.18's non-strict types
// are not simulated).
var affinityGroupTypes = []string{hostAntiAffinity, hostAffinity}

// affinityGroupCommands are the commands of affinitygroups.go (registerCommands).
func affinityGroupCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listAffinityGroupTypes", Sync: listAffinityGroupTypes},
		{Name: "createAffinityGroup", Async: createAffinityGroup},
		{Name: "listAffinityGroups", IDKind: model.KindAffinityGroup, Sync: listAffinityGroups},
		{Name: "deleteAffinityGroup", IDKind: model.KindAffinityGroup, Async: deleteAffinityGroup},
	}
}

// listAffinityGroupTypes is AffinityGroupServiceImpl.listAffinityGroupTypes.
func listAffinityGroupTypes(c *kernel.Call) (any, error) {
	var rows []map[string]any
	for _, t := range affinityGroupTypes {
		rows = append(rows, map[string]any{"type": t})
	}
	start, end := kernel.PageBounds(c.Params, len(rows))
	return kernel.ListBody("affinityGroupType", len(rows), rows[start:end]), nil
}

// affinityGroupByName finds an account's group; names compare
// case-insensitively.
func affinityGroupByName(st *model.State, accountID, name string) *model.AffinityGroup {
	for _, g := range st.AffinityGroups {
		if g.AccountID == accountID && strings.EqualFold(g.Name, name) {
			return g
		}
	}
	return nil
}

// createAffinityGroup creates the group at once (CreateAffinityGroupCmd.create,
// AffinityGroupServiceImpl.createAffinityGroup) and answers it from the job;
// a failed job removes it again.
func createAffinityGroup(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	name, typ := p.Get("name"), p.Get("type")
	known := false
	for _, t := range affinityGroupTypes {
		known = known || t == typ
	}
	if !known {
		return nil, kernel.ParamError("Unable to create affinity group, invalid affinity group type: %s. Valid values are %s",
			typ, strings.Join(affinityGroupTypes, ","))
	}
	owner, err := c.Owner() // AffinityGroupServiceImpl.createAffinityGroup: finalizeOwner with projectid
	if err != nil {
		return nil, err
	}
	if affinityGroupByName(c.State, owner.ID, name) != nil {
		return nil, kernel.ParamError("Unable to create affinity group, a group with name %s already exists.", name)
	}
	id, internal := c.State.NewID(model.KindAffinityGroup)
	desc := p.Get("description")
	g := &model.AffinityGroup{ID: id, InternalID: internal, Name: name, Description: desc, Type: typ,
		AccountID: owner.ID, Created: c.Engine.Now()}
	c.State.AffinityGroups = append(c.State.AffinityGroups, g)
	c.Changed()
	return &kernel.AsyncJob{InstanceType: "AffinityGroup", InstanceID: id, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.user.affinitygroup.CreateAffinityGroupCmd",
		Run:      func() (any, error) { return map[string]any{"affinitygroup": views.AffinityGroupView(c, g)}, nil },
		Fail:     func(*kernel.APIError) { removeAffinityGroup(c.State, g) },
	}, nil
}

func removeAffinityGroup(st *model.State, g *model.AffinityGroup) {
	var keep []*model.AffinityGroup
	for _, other := range st.AffinityGroups {
		if other != g {
			keep = append(keep, other)
		}
	}
	st.AffinityGroups = keep
	for _, vm := range st.VMs {
		vm.AffinityGroupIDs = model.Without(vm.AffinityGroupIDs, g.ID)
	}
}

// listAffinityGroups is QueryManagerImpl.searchForAffinityGroups.
func listAffinityGroups(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.AffinityGroup]{Key: "affinitygroup", ID: (*model.AffinityGroup).UUID,
		Name: func(g *model.AffinityGroup) string { return g.Name }, View: views.AffinityGroupView,
		Owner: func(g *model.AffinityGroup) string { return g.AccountID }}
	p := c.Params
	return l.Run(c, c.State.AffinityGroups, func(g *model.AffinityGroup) bool {
		if !kernel.OptEq(p.Get("type"), g.Type) {
			return false
		}
		if vmID := p.Get("virtualmachineid"); vmID != "" {
			vm, ok := model.ByID(c.State.VMs, vmID)
			return ok && model.ContainsFold(vm.AffinityGroupIDs, g.ID)
		}
		return true
	})
}

// deleteAffinityGroup is AffinityGroupServiceImpl.deleteAffinityGroup: by id
// or name, its VMs leave it. Departure: a group not found is named by the
// UUID sent, where the Java prints its internal id.
func deleteAffinityGroup(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	id, name := p.Get("id"), p.Get("name")
	job := &kernel.AsyncJob{InstanceType: "AffinityGroup", InstanceID: id,
		CmdClass: "org.apache.cloudstack.api.command.user.affinitygroup.DeleteAffinityGroupCmd"}
	job.Run = func() (any, error) {
		var g *model.AffinityGroup
		switch {
		case id != "":
			g, _ = model.ByID(c.State.AffinityGroups, id)
		case name != "":
			g = affinityGroupByName(c.State, c.Account.ID, name)
		default:
			return nil, kernel.ParamError("Either the affinity group Id or group name must be specified to delete the group")
		}
		if g == nil {
			return nil, kernel.ParamError("Unable to find affinity group %s", model.FirstNonEmpty(id, name))
		}
		removeAffinityGroup(c.State, g)
		c.Changed()
		return kernel.Success(), nil
	}
	return job, nil
}
