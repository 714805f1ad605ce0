package views

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// DomainView is DomainJoinDaoImpl.newDomainResponse's DomainResponse.
func DomainView(c *kernel.Call, d *model.Domain) map[string]any {
	v := map[string]any{"id": d.ID, "name": d.Name, "level": d.Level, "path": d.DisplayPath(),
		"haschild": hasChildDomain(c.State, d.ID), "state": model.DomainActive, "created": kernel.CsTime(d.Created),
		"hasannotations": false}
	if p := c.State.Domain(d.ParentID); p != nil {
		v["parentdomainid"], v["parentdomainname"] = p.ID, p.Name
	}
	for k, val := range domainUsage(c.State, d) { // details all (the default) or resource
		v[k] = val
	}
	return v
}

func hasChildDomain(st *model.State, id string) bool {
	for _, d := range st.Domains {
		if d.ParentID == id {
			return true
		}
	}
	return false
}

// AccountView is AccountJoinDaoImpl.newAccountResponse's AccountResponse.
func AccountView(c *kernel.Call, a *model.Account) map[string]any {
	d := c.State.Domain(a.DomainID)
	v := map[string]any{"id": a.ID, "name": a.Name, "accounttype": a.Type, "domainid": d.ID,
		"domain": d.Name, "domainpath": d.DisplayPath(), "state": a.State, "isdefault": a.IsDefault,
		"created": kernel.CsTime(a.Created), "groups": []string{}, "iscleanuprequired": false}
	for k, val := range roleFields(c, a) {
		v[k] = val
	}
	for k, val := range projectCounts(resourceUsage(c.State, a.ID)) {
		v[k] = val
	}
	users := []map[string]any{}
	for _, u := range c.State.Users {
		if u.AccountID == a.ID {
			users = append(users, UserView(c, u))
		}
	}
	v["user"] = users
	return v
}

// resourceUsage is AccountJoinDaoImpl.setResourceLimits over the account's
// counts: no limits are set in the simulator, so every limit and what is
// available is "Unlimited", and only the VM, CPU and memory totals count
// anything (the other resource counts stay 0). vmrunning and vmstopped are
// account_view's runningVms and stoppedVms: account_vmstats_view counts
// the account's user VMs not removed, by state.
func resourceUsage(st *model.State, accountID string) map[string]any {
	v := usageOf(st, func(a string) bool { return a == accountID })
	running, stopped := 0, 0
	for _, vm := range st.VMs {
		if vm.AccountID == accountID && vm.Removed == nil {
			switch vm.State {
			case model.VMRunning:
				running++
			case model.VMStopped:
				stopped++
			}
		}
	}
	v["vmrunning"], v["vmstopped"] = running, stopped
	return v
}

// projectCounts are the project limit and count newAccountResponse and
// newDomainResponse add to setResourceLimits' (a project's own response has
// none): no projects are counted, every limit "Unlimited".
func projectCounts(v map[string]any) map[string]any {
	v["projecttotal"], v["projectlimit"], v["projectavailable"] = 0, "Unlimited", "Unlimited"
	return v
}

// domainUsage is DomainJoinDaoImpl.setResourceLimits (and the project counts
// newDomainResponse adds) over the domain's counts, which ResourceLimitManager
// keeps as the sums of its and its subdomains' accounts': every limit
// "Unlimited" as for accounts; no VM state counts (domain_view has none).
func domainUsage(st *model.State, d *model.Domain) map[string]any {
	return projectCounts(usageOf(st, func(accountID string) bool {
		a := st.Account(accountID)
		if a == nil {
			return false
		}
		sub := st.Domain(a.DomainID)
		return sub != nil && strings.HasPrefix(sub.Path, d.Path)
	}))
}

// usageOf is the resource counts and limits setResourceLimits fills, the
// counts summed over the accounts counted.
func usageOf(st *model.State, counted func(accountID string) bool) map[string]any {
	totals := map[string]int64{"vm": 0, "ip": 0, "volume": 0, "snapshot": 0, "template": 0, "network": 0,
		"vpc": 0, "cpu": 0, "memory": 0, "gpu": 0, "primarystorage": 0, "backup": 0,
		"backupstorage": 0, "bucket": 0, "objectstorage": 0}
	for _, vm := range st.VMs {
		if vm.Removed == nil && counted(vm.AccountID) {
			totals["vm"]++
			totals["cpu"] += int64(vm.CPUNumber)
			totals["memory"] += int64(vm.Memory)
		}
	}
	v := map[string]any{"secondarystoragetotal": 0, "secondarystoragelimit": "Unlimited",
		"secondarystorageavailable": "Unlimited"}
	for res, n := range totals {
		v[res+"total"], v[res+"limit"], v[res+"available"] = n, "Unlimited", "Unlimited"
	}
	return v
}

// UserView never includes the secret key: 4.22 only reveals it through
// getUserKeys.
func UserView(c *kernel.Call, u *model.User) map[string]any {
	a := c.State.Account(u.AccountID)
	d := c.State.Domain(a.DomainID)
	v := map[string]any{"id": u.ID, "username": u.Username, "firstname": u.Firstname,
		"lastname": u.Lastname, "created": kernel.CsTime(u.Created), "state": u.State, "account": a.Name,
		"accountid": a.ID, "accounttype": a.Type, "usersource": "native", "domainid": d.ID,
		"domain": d.Name, "iscallerchilddomain": false, "isdefault": u.IsDefault,
		"is2faenabled": false, "is2famandated": false, "apikeyaccess": "Inherit"}
	for k, val := range roleFields(c, a) {
		v[k] = val
	}
	if u.Email != "" {
		v["email"] = u.Email
	}
	if u.Timezone != "" {
		v["timezone"] = u.Timezone
	}
	if u.APIKey != "" {
		v["apikey"] = u.APIKey
	}
	return v
}

// DefaultRoles are the default roles' names and types (the roles rows of
// schema-481to490.sql).
var DefaultRoles = map[model.RoleType]struct{ name, kind string }{
	model.RoleAdmin:         {"Root Admin", "Admin"},
	model.RoleResourceAdmin: {"Resource Admin", "ResourceAdmin"},
	model.RoleDomainAdmin:   {"Domain Admin", "DomainAdmin"},
	model.RoleUser:          {"User", "User"},
}

// RoleUUID is the UUID of a default role (seeded with the root admin).
func RoleUUID(st *model.State, r model.RoleType) string {
	if r == model.RoleAdmin {
		return st.RootAdminRoleID
	}
	return st.RoleIDs[fmt.Sprint(int(r))]
}

// roleFields are the role fields of an account's or user's response
// (AccountJoinDaoImpl / UserAccountJoinDaoImpl: roleid, roletype, rolename).
func roleFields(c *kernel.Call, a *model.Account) map[string]any {
	r := a.Role()
	d := DefaultRoles[r]
	return map[string]any{"roleid": RoleUUID(c.State, r), "roletype": d.kind, "rolename": d.name}
}

// KeyPairView is SSHKeyPairResponse as the key pair commands fill it (the
// public key is not part of it).
func KeyPairView(c *kernel.Call, k *model.SSHKeyPair) map[string]any {
	v := map[string]any{"id": k.ID, "name": k.Name, "fingerprint": k.Fingerprint, "hasannotations": false}
	addOwner(c, v, k.AccountID)
	return v
}
