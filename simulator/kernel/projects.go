package kernel

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// projectCriteria is Project.ListProjectResourcesCriteria.
type projectCriteria int

const (
	anyResources             projectCriteria = iota // null: no account-type condition
	skipProjectResources                            // SkipProjectResources: account type != PROJECT
	listProjectResourcesOnly                        // ListProjectResourcesOnly: account type = PROJECT
)

// ProjectScope is the project dimension of what a list command may show:
// the permitted project accounts and the ListProjectResourcesCriteria that
// AccountManagerImpl.buildACLSearchParameters settles from projectid.
// Departure: the account and domain dimension of the same method (a normal
// user sees only its own account's rows, an admin its own unless listall
// or domainid) is not modelled for rows outside projects; the simulator's
// lists show every non-project row, as they did before projects.
type ProjectScope struct {
	permitted map[string]bool // project accounts the list is limited to; nil: not limited
	criteria  projectCriteria
	caller    string
}

// ProjectScope is AccountManagerImpl.buildACLSearchParameters for
// projectid: a project names that project's account only (after
// canAccessProjectAccount); -1 is every project the caller may see (a
// normal user's projects, listPermittedProjectAccounts; any project for
// the others, ListProjectResourcesOnly); no projectid skips project
// resources (SkipProjectResources) unless an id is asked for. With an id
// and no projectid the Java limits a normal user to its own account
// (permittedAccounts = caller), so a project's row stays hidden from it;
// that is the part of the rule kept here.
func (c *Call) ProjectScope() (ProjectScope, error) { return c.projectScope(c.Params.Get("id")) }

// projectScope is ProjectScope for the id the command hands
// buildACLSearchParameters.
func (c *Call) projectScope(rowID string) (ProjectScope, error) {
	s := ProjectScope{caller: c.Account.ID}
	id := c.Params.Get("projectid")
	if id != "" && c.Params.Get("account") != "" {
		return s, ParamError("Account and projectId can't be specified together")
	}
	switch {
	case id == "" && (rowID == "" || c.Account.Type == 0):
		s.criteria = skipProjectResources
	case id == "-1" && c.Account.Type == 0:
		s.permitted = map[string]bool{}
		for _, m := range c.State.ProjectAccounts {
			if m.AccountID == c.Account.ID {
				if p, ok := model.ByID(c.State.Projects, m.ProjectID); ok {
					s.permitted[p.AccountID] = true
				}
			}
		}
	case id == "-1":
		s.criteria = listProjectResourcesOnly
	case id != "":
		p, ok := model.ByID(c.State.Projects, id)
		if !ok {
			return s, ParamError("Unable to find project by id %s", id)
		}
		if !c.CanAccessProject(p) {
			return s, PermissionDenied("Account %s can't access project id=%d", accountString(c.Account), p.InternalID)
		}
		s.permitted = map[string]bool{p.AccountID: true}
	}
	return s, nil
}

// Admits says a row owned by account owner is in scope: the criteria on
// the owner's type (buildACLSearchBuilder's accountSearch join), then the
// permitted accounts (accountIdIN). A row no account owns (a free public
// address, a system template) is outside the project dimension.
func (s ProjectScope) Admits(st *model.State, owner string) bool {
	if owner == "" {
		return true
	}
	return s.AdmitsType(st, owner) && (s.permitted == nil || s.permitted[owner])
}

// AdmitsType is the criteria alone, for the lists whose Java applies the
// permitted accounts through a filter of their own (listTemplates'
// templatefilter).
func (s ProjectScope) AdmitsType(st *model.State, owner string) bool {
	inProject := st.ProjectOfAccount(owner) != nil
	switch s.criteria {
	case skipProjectResources:
		return !inProject
	case listProjectResourcesOnly:
		return inProject
	}
	return true
}

// Owns says owner is one of the accounts the call acts as
// (QueryManagerImpl.searchForTemplatesInternal's permittedAccounts): the
// permitted project accounts when projectid names projects; any owner for
// an admin's projectid -1, which leaves permittedAccounts empty (the
// criteria keep project rows only); the caller otherwise.
func (s ProjectScope) Owns(owner string) bool {
	switch {
	case s.permitted != nil:
		return s.permitted[owner]
	case s.criteria == listProjectResourcesOnly:
		return true
	}
	return owner == s.caller
}

// CanAccessProject is ProjectManagerImpl.canAccessProjectAccount: the root
// admin always, a domain admin for projects in its domain or below
// (checkAccess(caller, domain)), anyone else when its account is a member.
func (c *Call) CanAccessProject(p *model.Project) bool {
	switch c.Account.Type {
	case 1:
		return true
	case 2:
		return domainWithin(c.State, p.DomainID, c.Account.DomainID)
	}
	return c.State.ProjectMember(p.ID, c.Account.ID) != nil
}

// Owner is AccountManagerImpl.finalizeOwner for the creation commands the
// simulator implements: with projectid, the project's account, once the
// caller may use the project; otherwise the caller (the account/domainid
// pair of an admin acting for another account is not modelled).
func (c *Call) Owner() (*model.Account, error) {
	id := c.Params.Get("projectid")
	if id == "" {
		return c.Account, nil
	}
	if c.Params.Get("account") != "" && c.Params.Get("domainid") != "" {
		return nil, ParamError("ProjectId and account/domainId can't be specified together")
	}
	p, ok := model.ByID(c.State.Projects, id)
	if !ok {
		return nil, ParamError("Unable to find project by id=%s", id)
	}
	if !c.CanAccessProject(p) {
		return nil, PermissionDenied("Account %s is unauthorised to use project id=%d", accountString(c.Account), p.InternalID)
	}
	return c.State.Account(p.AccountID), nil
}

// accountString is AccountVO.toString, as exception texts print a caller:
// "Account [" + ReflectionToStringBuilderUtils.reflectOnlySelectedFields of
// uuid, accountName and id + "]".
func accountString(a *model.Account) string {
	name := strings.ReplaceAll(a.Name, `"`, `\"`)
	return fmt.Sprintf(`Account [{"uuid":"%s","accountName":"%s","id":%d}]`, a.ID, name, a.InternalID)
}
