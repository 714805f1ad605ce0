package simulator

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// defaultSecurityGroup is SecurityGroupManager.DEFAULT_GROUP_NAME.
const defaultSecurityGroup = "default"

func init() {
	register(
		command{name: "listSecurityGroups", idKind: model.KindSecurityGroup, sync: listSecurityGroups},
		command{name: "createSecurityGroup", sync: createSecurityGroup},
	)
	registerTaggable("SecurityGroup", func(st *model.State, id string) (string, bool) {
		g, ok := model.ByID(st.SecurityGroups, id)
		if !ok {
			return "", false
		}
		return g.AccountID, true
	})
}

// securityGroupByName finds an account's group; names compare
// case-insensitively.
func securityGroupByName(st *model.State, accountID, name string) *model.SecurityGroup {
	for _, g := range st.SecurityGroups {
		if g.AccountID == accountID && strings.EqualFold(g.Name, name) {
			return g
		}
	}
	return nil
}

// ensureDefaultSecurityGroup creates the account's "default" group the first
// time the account's groups are looked at. Departure: CloudStack creates it
// with the account (SecurityGroupManagerImpl.createDefaultSecurityGroup).
func (c *Call) ensureDefaultSecurityGroup() {
	if securityGroupByName(c.st, c.Account.ID, defaultSecurityGroup) == nil {
		c.addSecurityGroup(defaultSecurityGroup, "Default Security Group")
	}
}

func (c *Call) addSecurityGroup(name, desc string) *model.SecurityGroup {
	id, internal := c.st.NewID(model.KindSecurityGroup)
	g := &model.SecurityGroup{ID: id, InternalID: internal, Name: name, Description: desc, AccountID: c.Account.ID,
		Created: c.eng.now()}
	c.st.SecurityGroups = append(c.st.SecurityGroups, g)
	c.changed()
	return g
}

// createSecurityGroup is SecurityGroupManagerImpl.createSecurityGroup.
func createSecurityGroup(c *Call) (any, error) {
	c.ensureDefaultSecurityGroup()
	name := c.Params.Get("name")
	if securityGroupByName(c.st, c.Account.ID, name) != nil {
		return nil, paramError("Unable to create security group, a group with name %s already exists.", name)
	}
	g := c.addSecurityGroup(name, c.Params.Get("description"))
	return map[string]any{"securitygroup": c.securityGroupView(g)}, nil
}

// listSecurityGroups is QueryManagerImpl.searchForSecurityGroups:
// securitygroupname matches exactly.
func listSecurityGroups(c *Call) (any, error) {
	c.ensureDefaultSecurityGroup()
	l := lister[*model.SecurityGroup]{key: "securitygroup", id: (*model.SecurityGroup).UUID,
		keyword: func(g *model.SecurityGroup) []string { return []string{g.Name} }, view: (*Call).securityGroupView}
	p := c.Params
	return l.run(c, c.st.SecurityGroups, func(g *model.SecurityGroup) bool {
		if !optEq(p.Get("securitygroupname"), g.Name) || !taggedWith(c.st, "SecurityGroup", g.ID, p.Map("tags")) {
			return false
		}
		if vmID := p.Get("virtualmachineid"); vmID != "" {
			vm, ok := model.ByID(c.st.VMs, vmID)
			return ok && model.ContainsFold(vm.SecurityGroupIDs, g.ID)
		}
		return true
	})
}

// securityGroupView is SecurityGroupJoinDaoImpl.newSecurityGroupResponse
// (the simulator keeps no rules).
func (c *Call) securityGroupView(g *model.SecurityGroup) map[string]any {
	ids := []string{}
	for _, vm := range c.st.VMs {
		if vm.Removed == nil && model.ContainsFold(vm.SecurityGroupIDs, g.ID) {
			ids = append(ids, vm.ID)
		}
	}
	v := map[string]any{"id": g.ID, "name": g.Name, "ingressrule": []any{}, "egressrule": []any{},
		"tags": c.resourceTagViews("SecurityGroup", g.ID), "virtualmachinecount": len(ids), "virtualmachineids": ids}
	if g.Description != "" {
		v["description"] = g.Description
	}
	c.addOwner(v, g.AccountID)
	return v
}
