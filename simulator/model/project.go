package model

import (
	"strings"
	"time"
)

// KindProject is the entity kind of projects' UUIDs.
const KindProject = "project"

// AccountTypeProject is Account.Type.PROJECT: the account a project's
// resources belong to (ProjectManagerImpl.createProject creates one per
// project).
const AccountTypeProject = 5

// Project is a ProjectVO: its own account (project_account_id) owns every
// resource created in it.
type Project struct {
	ID          string    `json:"id"`
	InternalID  int64     `json:"internalid"`
	Name        string    `json:"name"`
	DisplayText string    `json:"displaytext"`
	DomainID    string    `json:"domainid"`
	AccountID   string    `json:"projectaccountid"`
	State       string    `json:"state"`
	Created     time.Time `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (p *Project) UUID() string { return p.ID }

// ProjectAccount is a ProjectAccountVO: an account's membership of a
// project, with its role (ProjectAccount.Role: Admin, Regular).
type ProjectAccount struct {
	ProjectID string    `json:"projectid"`
	AccountID string    `json:"accountid"`
	Role      string    `json:"role"`
	Created   time.Time `json:"created"`
}

// The project roles (ProjectAccount.Role) and the one state the simulator's
// projects are in (Project.State.Active: createProject with
// projectinviterequired false, the default).
const (
	ProjectRoleAdmin   = "Admin"
	ProjectRoleRegular = "Regular"
	ProjectActive      = "Active"
)

// projectTables are the projects family's tables; the state embeds them.
type projectTables struct {
	Projects        []*Project        `json:"projects,omitempty"`
	ProjectAccounts []*ProjectAccount `json:"projectaccounts,omitempty"`
}

// ProjectOfAccount is ProjectDaoImpl.findByProjectAccountId: the project
// whose own account accountID is, or nil.
func (st *State) ProjectOfAccount(accountID string) *Project {
	for _, p := range st.Projects {
		if strings.EqualFold(p.AccountID, accountID) {
			return p
		}
	}
	return nil
}

// ProjectMember is ProjectAccountDaoImpl.findByProjectIdAccountId: the
// account's membership of the project, or nil.
func (st *State) ProjectMember(projectID, accountID string) *ProjectAccount {
	for _, m := range st.ProjectAccounts {
		if strings.EqualFold(m.ProjectID, projectID) && strings.EqualFold(m.AccountID, accountID) {
			return m
		}
	}
	return nil
}
