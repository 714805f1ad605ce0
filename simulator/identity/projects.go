package identity

import (
	"slices"
	"strconv"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// projectCommands are the commands of projects.go (registerCommands).
func projectCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createProject", Async: createProject},
		{Name: "listProjects", IDKind: model.KindProject, Sync: listProjects},
		{Name: "addAccountToProject", Async: addAccountToProject},
	}
}

// createProject is CreateProjectCmd: create() is
// ProjectManagerImpl.createProject (the owner, a unique name in the
// owner's domain, the project's own account "PrjAcct-<name>-<domain id>"
// of type PROJECT, the owner assigned as Admin), execute() is
// enableProject (Active). Not modelled: userid/accountid (a user as the
// owner), the project resource limit, allow.user.create.projects (true,
// its default).
func createProject(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	if (p.Get("account") == "") != (p.Get("domainid") == "") {
		return nil, kernel.ParamError("Account name and domain id must be specified together")
	}
	owner, err := projectOwner(c)
	if err != nil {
		return nil, err
	}
	d := c.State.Domain(owner.DomainID)
	name := p.Get("name")
	for _, other := range c.State.Projects {
		if other.DomainID == owner.DomainID && strings.EqualFold(other.Name, name) { // ProjectDaoImpl.findByNameAndDomain
			return nil, kernel.ParamError("Project with name %s already exists in domain id=%d", name, d.InternalID)
		}
	}
	prj := addProject(c, owner, d, name)
	c.Changed()
	return &kernel.AsyncJob{InstanceType: "Project", InstanceID: prj.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.user.project.CreateProjectCmd",
		Run: func() (any, error) {
			prj.State = model.ProjectActive // ProjectManagerImpl.enableProject
			c.Changed()
			return map[string]any{"project": views.ProjectView(c, prj)}, nil
		},
		Fail: func(*kernel.APIError) { removeProject(c.State, prj) },
	}, nil
}

// projectOwner is createProject's owner: the caller, or for an admin the
// account named with domainid (AccountManagerImpl.finalizeOwner).
func projectOwner(c *kernel.Call) (*model.Account, error) {
	p := c.Params
	if p.Get("account") == "" {
		return c.Account, nil
	}
	for _, a := range c.State.Accounts {
		if strings.EqualFold(a.Name, p.Get("account")) && strings.EqualFold(a.DomainID, p.Get("domainid")) && a.Type != model.AccountTypeProject {
			if !c.Account.IsAdmin() && a.ID != c.Account.ID {
				return nil, kernel.PermissionDenied("Can't create/list resources for account %s in domain %s, permission denied", a.Name, p.Get("domainid"))
			}
			return a, nil
		}
	}
	return nil, kernel.ParamError("Unable to find account %s in domain %s", p.Get("account"), p.Get("domainid"))
}

// addProject persists the project (Disabled until the job enables it), its
// account and the owner's Admin membership (assignAccountToProject).
func addProject(c *kernel.Call, owner *model.Account, d *model.Domain, name string) *model.Project {
	now := c.Engine.Now()
	aid, ainternal := c.State.NewID(model.KindAccount)
	acct := &model.Account{ID: aid, InternalID: ainternal, Name: "PrjAcct-" + name + "-" + strconv.FormatInt(d.InternalID, 10),
		Type: model.AccountTypeProject, DomainID: owner.DomainID, State: model.AccountEnabled, Created: now}
	c.State.Accounts = append(c.State.Accounts, acct)
	id, internal := c.State.NewID(model.KindProject)
	prj := &model.Project{ID: id, InternalID: internal, Name: name, DisplayText: model.FirstNonEmpty(c.Params.Get("displaytext"), name),
		DomainID: owner.DomainID, AccountID: acct.ID, State: "Disabled", Created: now}
	c.State.Projects = append(c.State.Projects, prj)
	c.State.ProjectAccounts = append(c.State.ProjectAccounts,
		&model.ProjectAccount{ProjectID: prj.ID, AccountID: owner.ID, Role: model.ProjectRoleAdmin, Created: now})
	return prj
}

func removeProject(st *model.State, prj *model.Project) {
	st.Projects = slices.DeleteFunc(st.Projects, func(p *model.Project) bool { return p == prj })
	st.ProjectAccounts = slices.DeleteFunc(st.ProjectAccounts, func(m *model.ProjectAccount) bool { return m.ProjectID == prj.ID })
	st.Accounts = slices.DeleteFunc(st.Accounts, func(a *model.Account) bool { return a.ID == prj.AccountID })
}

// listProjects is QueryManagerImpl.listProjectsInternal: a normal user, or
// an admin without listall or domainid, sees the projects its account is a
// member of; a root admin with listall sees all, a domain admin those in
// its domain and below. name and displaytext are EQ, keyword LIKE on both;
// newest first (Filter "id", false). Not modelled: account/username
// filters, isrecursive without listall.
func listProjects(c *kernel.Call) (any, error) {
	p := c.Params
	l := kernel.Lister[*model.Project]{Key: "project", ID: (*model.Project).UUID, Name: func(prj *model.Project) string { return prj.Name },
		Keyword: func(prj *model.Project) []string { return []string{prj.Name, prj.DisplayText} },
		View:    views.ProjectView}
	memberOnly := c.Account.Type == 0 || p.Get("domainid") == "" && !p.Bool("listall", false)
	newestFirst := make([]*model.Project, 0, len(c.State.Projects))
	for i := len(c.State.Projects) - 1; i >= 0; i-- {
		newestFirst = append(newestFirst, c.State.Projects[i])
	}
	return l.Run(c, newestFirst, func(prj *model.Project) bool {
		if memberOnly && c.State.ProjectMember(prj.ID, c.Account.ID) == nil {
			return false
		}
		return kernel.OptEq(p.Get("displaytext"), prj.DisplayText) && kernel.OptEq(p.Get("state"), prj.State) &&
			kernel.OptEq(p.Get("domainid"), prj.DomainID) && (memberOnly || c.Account.Type == 1 || c.CanAccessProject(prj))
	})
}

// addAccountToProject is ProjectManagerImpl.addAccountToProject with
// projectinviterequired false (its default): an Active project, an active
// account of the project's domain, a caller that may modify the project
// (checkAccess with AccessType.ModifyProject: an admin of the domain or
// one of the project's Admin members); an account already a member is a
// success. Not modelled: email invitations, project roles (projectroleid).
func addAccountToProject(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	prj, _ := model.ByID(c.State.Projects, p.Get("projectid"))
	if prj == nil {
		return nil, kernel.ParamError("Unable to find project with specified id")
	}
	if prj.State != model.ProjectActive {
		return nil, kernel.ParamError("Can't add account to the specified project id in state=%s as it's no longer active", prj.State)
	}
	if p.Get("account") == "" {
		return nil, kernel.ParamError("Account information is required for assigning account to the project")
	}
	acct := activeAccount(c.State, p.Get("account"), prj.DomainID)
	if acct == nil {
		return nil, kernel.ParamError("Unable to find account name=%s in specified domain id", p.Get("account"))
	}
	if !canModifyProject(c, prj) {
		return nil, kernel.PermissionDenied("Account %s can't modify project id=%d", c.Account.Name, prj.InternalID) // the text is the simulator's
	}
	role := model.ProjectRoleRegular
	if strings.EqualFold(p.Get("roletype"), model.ProjectRoleAdmin) {
		role = model.ProjectRoleAdmin
	}
	job := &kernel.AsyncJob{InstanceType: "Project", InstanceID: prj.ID,
		CmdClass: "org.apache.cloudstack.api.command.user.account.AddAccountToProjectCmd"}
	job.Run = func() (any, error) {
		if c.State.ProjectMember(prj.ID, acct.ID) == nil {
			c.State.ProjectAccounts = append(c.State.ProjectAccounts,
				&model.ProjectAccount{ProjectID: prj.ID, AccountID: acct.ID, Role: role, Created: c.Engine.Now()})
			c.Changed()
		}
		return kernel.Success(), nil
	}
	return job, nil
}

// activeAccount is AccountDaoImpl.findActiveAccount: by name in a domain,
// never a project's own account.
func activeAccount(st *model.State, name, domainID string) *model.Account {
	for _, a := range st.Accounts {
		if strings.EqualFold(a.Name, name) && a.DomainID == domainID && a.Type != model.AccountTypeProject {
			return a
		}
	}
	return nil
}

// canModifyProject is ProjectManagerImpl.canModifyProjectAccount: the root
// admin, a domain admin of the project's domain, or an Admin member.
func canModifyProject(c *kernel.Call, prj *model.Project) bool {
	if c.Account.Type == 1 || c.Account.Type == 2 {
		return c.CanAccessProject(prj)
	}
	m := c.State.ProjectMember(prj.ID, c.Account.ID)
	return m != nil && m.Role == model.ProjectRoleAdmin
}
