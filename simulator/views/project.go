package views

import (
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// ProjectView is ProjectJoinDaoImpl.newProjectResponse: the project, its
// domain, its owners (the members of role Admin), its own account's name and
// that account's counts and limits (AccountJoinDaoImpl.setResourceLimits,
// running and stopped VMs included; no project counts). Departure: the
// counts are the project account's VMs, CPUs and memory only, every limit
// "Unlimited" (the simulator keeps no limits).
func ProjectView(c *kernel.Call, p *model.Project) map[string]any {
	d := c.State.Domain(p.DomainID)
	v := map[string]any{"id": p.ID, "name": p.Name, "displaytext": p.DisplayText, "state": p.State,
		"created": kernel.CsTime(p.Created), "owner": projectOwners(c.State, p), "tags": []any{}}
	if d != nil {
		v["domainid"], v["domain"], v["domainpath"] = d.ID, d.Name, d.DisplayPath()
	}
	if a := c.State.Account(p.AccountID); a != nil {
		v["projectaccountname"] = a.Name
		for k, val := range resourceUsage(c.State, a.ID) {
			v[k] = val
		}
	}
	return v
}

func projectOwners(st *model.State, p *model.Project) []map[string]any {
	owners := []map[string]any{}
	for _, m := range st.ProjectAccounts {
		if m.ProjectID == p.ID && m.Role == model.ProjectRoleAdmin {
			if a := st.Account(m.AccountID); a != nil {
				owners = append(owners, map[string]any{"account": a.Name, "accountid": a.ID})
			}
		}
	}
	return owners
}

// ownerName is ApiResponseHelper.populateOwner: a project's resource shows
// the project (projectid, project) where another shows its account's name.
func ownerName(c *kernel.Call, v map[string]any, a *model.Account) {
	if p := c.State.ProjectOfAccount(a.ID); p != nil {
		delete(v, "account")
		v["projectid"], v["project"] = p.ID, p.Name
		return
	}
	v["account"] = a.Name
}
