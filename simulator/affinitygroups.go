package simulator

import (
	"strings"
	"time"
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

// AffinityGroup is an account's affinity group. Its members are the VMs
// whose AffinityGroupIDs name it.
type AffinityGroup struct {
	ID          string    `json:"id"`
	InternalID  int64     `json:"internalid"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Type        string    `json:"type"`
	AccountID   string    `json:"accountid"`
	Created     time.Time `json:"created"`
}

func (g *AffinityGroup) uuid() string { return g.ID }

func init() {
	register(
		command{name: "listAffinityGroupTypes", sync: listAffinityGroupTypes},
		command{name: "createAffinityGroup", async: createAffinityGroup},
		command{name: "listAffinityGroups", idKind: kindAffinityGroup, sync: listAffinityGroups},
		command{name: "deleteAffinityGroup", idKind: kindAffinityGroup, async: deleteAffinityGroup},
	)
}

// listAffinityGroupTypes is AffinityGroupServiceImpl.listAffinityGroupTypes.
func listAffinityGroupTypes(c *Call) (any, error) {
	var views []map[string]any
	for _, t := range affinityGroupTypes {
		views = append(views, map[string]any{"type": t})
	}
	start, end := pageBounds(c.Params, len(views))
	return listBody("affinityGroupType", len(views), views[start:end]), nil
}

// affinityGroupByName finds an account's group; names compare
// case-insensitively.
func (st *state) affinityGroupByName(accountID, name string) *AffinityGroup {
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
func createAffinityGroup(c *Call) (*asyncJob, error) {
	p := c.Params
	name, typ := p.Get("name"), p.Get("type")
	known := false
	for _, t := range affinityGroupTypes {
		known = known || t == typ
	}
	if !known {
		return nil, paramError("Unable to create affinity group, invalid affinity group type: %s. Valid values are %s",
			typ, strings.Join(affinityGroupTypes, ","))
	}
	if c.st.affinityGroupByName(c.Account.ID, name) != nil {
		return nil, paramError("Unable to create affinity group, a group with name %s already exists.", name)
	}
	id, internal := c.st.newID(kindAffinityGroup)
	desc := p.Get("description")
	g := &AffinityGroup{ID: id, InternalID: internal, Name: name, Description: desc, Type: typ,
		AccountID: c.Account.ID, Created: c.srv.now()}
	c.st.AffinityGroups = append(c.st.AffinityGroups, g)
	c.changed()
	return &asyncJob{instanceType: "AffinityGroup", instanceID: id, created: true,
		cmdClass: "org.apache.cloudstack.api.command.user.affinitygroup.CreateAffinityGroupCmd",
		run:      func() (any, error) { return map[string]any{"affinitygroup": c.affinityGroupView(g)}, nil },
		fail:     func(*APIError) { c.st.removeAffinityGroup(g) },
	}, nil
}

func (st *state) removeAffinityGroup(g *AffinityGroup) {
	var keep []*AffinityGroup
	for _, other := range st.AffinityGroups {
		if other != g {
			keep = append(keep, other)
		}
	}
	st.AffinityGroups = keep
	for _, vm := range st.VMs {
		vm.AffinityGroupIDs = without(vm.AffinityGroupIDs, g.ID)
	}
}

// members are a group's VMs that are not expunged.
func (st *state) members(g *AffinityGroup) []*VirtualMachine {
	var out []*VirtualMachine
	for _, vm := range st.VMs {
		if vm.Removed == nil && containsFold(vm.AffinityGroupIDs, g.ID) {
			out = append(out, vm)
		}
	}
	return out
}

// listAffinityGroups is QueryManagerImpl.searchForAffinityGroups.
func listAffinityGroups(c *Call) (any, error) {
	l := lister[*AffinityGroup]{key: "affinitygroup", id: (*AffinityGroup).uuid,
		name: func(g *AffinityGroup) string { return g.Name }, view: c.affinityGroupView}
	p := c.Params
	return l.run(c, c.st.AffinityGroups, func(g *AffinityGroup) bool {
		if !optEq(p.Get("type"), g.Type) {
			return false
		}
		if vmID := p.Get("virtualmachineid"); vmID != "" {
			vm, ok := byID(c.st.VMs, vmID)
			return ok && containsFold(vm.AffinityGroupIDs, g.ID)
		}
		return true
	})
}

// affinityGroupView is AffinityGroupJoinDaoImpl.newAffinityGroupResponse.
func (c *Call) affinityGroupView(g *AffinityGroup) map[string]any {
	ids := []string{}
	for _, vm := range c.st.members(g) {
		ids = append(ids, vm.ID)
	}
	v := map[string]any{"id": g.ID, "name": g.Name, "type": g.Type, "virtualmachineIds": ids}
	if g.Description != "" {
		v["description"] = g.Description
	}
	c.addOwner(v, g.AccountID)
	return v
}

// deleteAffinityGroup is AffinityGroupServiceImpl.deleteAffinityGroup: by id
// or name, its VMs leave it. Departure: a group not found is named by the
// UUID sent, where the Java prints its internal id.
func deleteAffinityGroup(c *Call) (*asyncJob, error) {
	p := c.Params
	id, name := p.Get("id"), p.Get("name")
	job := &asyncJob{instanceType: "AffinityGroup", instanceID: id,
		cmdClass: "org.apache.cloudstack.api.command.user.affinitygroup.DeleteAffinityGroupCmd"}
	job.run = func() (any, error) {
		var g *AffinityGroup
		switch {
		case id != "":
			g, _ = byID(c.st.AffinityGroups, id)
		case name != "":
			g = c.st.affinityGroupByName(c.Account.ID, name)
		default:
			return nil, paramError("Either the affinity group Id or group name must be specified to delete the group")
		}
		if g == nil {
			return nil, paramError("Unable to find affinity group %s", firstNonEmpty(id, name))
		}
		c.st.removeAffinityGroup(g)
		c.changed()
		return success(), nil
	}
	return job, nil
}
