package network

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// defaultSecurityGroup is SecurityGroupManager.DEFAULT_GROUP_NAME.
const defaultSecurityGroup = "default"

// securityGroupCommands are the commands of securitygroups.go (registerCommands).
func securityGroupCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listSecurityGroups", IDKind: model.KindSecurityGroup, Sync: listSecurityGroups},
		{Name: "createSecurityGroup", Sync: createSecurityGroup},
	}
}

// SecurityGroupOwner is the taggable for SecurityGroup: the account owning the resource a tag names.
func SecurityGroupOwner(st *model.State, id string) (string, bool) {
	g, ok := model.ByID(st.SecurityGroups, id)
	if !ok {
		return "", false
	}
	return g.AccountID, true
}

// SecurityGroupByName finds an account's group; names compare
// case-insensitively.
func SecurityGroupByName(st *model.State, accountID, name string) *model.SecurityGroup {
	for _, g := range st.SecurityGroups {
		if g.AccountID == accountID && strings.EqualFold(g.Name, name) {
			return g
		}
	}
	return nil
}

// EnsureDefaultSecurityGroup creates the account's "default" group the first
// time the account's groups are looked at. Departure: CloudStack creates it
// with the account (SecurityGroupManagerImpl.createDefaultSecurityGroup).
func EnsureDefaultSecurityGroup(c *kernel.Call) {
	if SecurityGroupByName(c.State, c.Account.ID, defaultSecurityGroup) == nil {
		addSecurityGroup(c, defaultSecurityGroup, "Default Security Group")
	}
}

func addSecurityGroup(c *kernel.Call, name, desc string) *model.SecurityGroup {
	id, internal := c.State.NewID(model.KindSecurityGroup)
	g := &model.SecurityGroup{ID: id, InternalID: internal, Name: name, Description: desc, AccountID: c.Account.ID,
		Created: c.Engine.Now()}
	c.State.SecurityGroups = append(c.State.SecurityGroups, g)
	c.Changed()
	return g
}

// createSecurityGroup is SecurityGroupManagerImpl.createSecurityGroup.
func createSecurityGroup(c *kernel.Call) (any, error) {
	EnsureDefaultSecurityGroup(c)
	name := c.Params.Get("name")
	if SecurityGroupByName(c.State, c.Account.ID, name) != nil {
		return nil, kernel.ParamError("Unable to create security group, a group with name %s already exists.", name)
	}
	g := addSecurityGroup(c, name, c.Params.Get("description"))
	return map[string]any{"securitygroup": views.SecurityGroupView(c, g)}, nil
}

// listSecurityGroups is QueryManagerImpl.searchForSecurityGroups:
// securitygroupname matches exactly.
func listSecurityGroups(c *kernel.Call) (any, error) {
	EnsureDefaultSecurityGroup(c)
	l := kernel.Lister[*model.SecurityGroup]{Key: "securitygroup", ID: (*model.SecurityGroup).UUID,
		Keyword: func(g *model.SecurityGroup) []string { return []string{g.Name} }, View: views.SecurityGroupView}
	p := c.Params
	return l.Run(c, c.State.SecurityGroups, func(g *model.SecurityGroup) bool {
		if !kernel.OptEq(p.Get("securitygroupname"), g.Name) || !tag.TaggedWith(c.State, "SecurityGroup", g.ID, p.Map("tags")) {
			return false
		}
		if vmID := p.Get("virtualmachineid"); vmID != "" {
			vm, ok := model.ByID(c.State.VMs, vmID)
			return ok && model.ContainsFold(vm.SecurityGroupIDs, g.ID)
		}
		return true
	})
}
