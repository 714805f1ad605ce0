package simulator

import (
	"strings"
	"time"
)

// SecurityGroup is an account's security group. The seeded advanced zone
// has security groups disabled, so deployVirtualMachine refuses them; the
// groups exist all the same, as in CloudStack.
type SecurityGroup struct {
	ID          string    `json:"id"`
	InternalID  int64     `json:"internalid"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	AccountID   string    `json:"accountid"`
	Created     time.Time `json:"created"`
}

func (g *SecurityGroup) uuid() string { return g.ID }

// defaultSecurityGroup is SecurityGroupManager.DEFAULT_GROUP_NAME.
const defaultSecurityGroup = "default"

func init() {
	register(
		command{name: "listSecurityGroups", idKind: kindSecurityGroup, sync: listSecurityGroups},
		command{name: "createSecurityGroup", sync: createSecurityGroup},
	)
	registerTaggable("SecurityGroup", func(st *state, id string) (string, bool) {
		g, ok := byID(st.SecurityGroups, id)
		if !ok {
			return "", false
		}
		return g.AccountID, true
	})
}

// securityGroupByName finds an account's group; names compare
// case-insensitively.
func (st *state) securityGroupByName(accountID, name string) *SecurityGroup {
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
	if c.st.securityGroupByName(c.Account.ID, defaultSecurityGroup) == nil {
		c.addSecurityGroup(defaultSecurityGroup, "Default Security Group")
	}
}

func (c *Call) addSecurityGroup(name, desc string) *SecurityGroup {
	id, internal := c.st.newID(kindSecurityGroup)
	g := &SecurityGroup{ID: id, InternalID: internal, Name: name, Description: desc, AccountID: c.Account.ID,
		Created: c.srv.now()}
	c.st.SecurityGroups = append(c.st.SecurityGroups, g)
	c.changed()
	return g
}

// createSecurityGroup is SecurityGroupManagerImpl.createSecurityGroup.
func createSecurityGroup(c *Call) (any, error) {
	c.ensureDefaultSecurityGroup()
	name := c.Params.Get("name")
	if c.st.securityGroupByName(c.Account.ID, name) != nil {
		return nil, paramError("Unable to create security group, a group with name %s already exists.", name)
	}
	g := c.addSecurityGroup(name, c.Params.Get("description"))
	return map[string]any{"securitygroup": c.securityGroupView(g)}, nil
}

// listSecurityGroups is QueryManagerImpl.searchForSecurityGroups:
// securitygroupname matches exactly.
func listSecurityGroups(c *Call) (any, error) {
	c.ensureDefaultSecurityGroup()
	l := lister[*SecurityGroup]{key: "securitygroup", id: (*SecurityGroup).uuid,
		keyword: func(g *SecurityGroup) []string { return []string{g.Name} }, view: c.securityGroupView}
	p := c.Params
	return l.run(c, c.st.SecurityGroups, func(g *SecurityGroup) bool {
		if !optEq(p.Get("securitygroupname"), g.Name) || !c.st.taggedWith("SecurityGroup", g.ID, p.Map("tags")) {
			return false
		}
		if vmID := p.Get("virtualmachineid"); vmID != "" {
			vm, ok := byID(c.st.VMs, vmID)
			return ok && containsFold(vm.SecurityGroupIDs, g.ID)
		}
		return true
	})
}

// securityGroupView is SecurityGroupJoinDaoImpl.newSecurityGroupResponse
// (the simulator keeps no rules).
func (c *Call) securityGroupView(g *SecurityGroup) map[string]any {
	ids := []string{}
	for _, vm := range c.st.VMs {
		if vm.Removed == nil && containsFold(vm.SecurityGroupIDs, g.ID) {
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
