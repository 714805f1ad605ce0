package simulator

import (
	"crypto/rand"
	"encoding/base64"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// newKey makes an API or secret key the way AccountManagerImpl's
// createUserApiKey/createUserSecretKey do: 64 random bytes (an HmacSHA1
// KeyGenerator key), URL-safe Base64 without padding (86 characters).
func newKey() string {
	b := make([]byte, 64)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// seedAccounts creates ROOT and the admin account and user (admin/password),
// with CloudStack's internal ids: the system account and user take id 1.
func seedAccounts(st *model.State, now time.Time) {
	st.RootAdminRoleID, _ = st.NewID(model.KindRole)
	seedRoles(st)
	did, dint := st.NewID(model.KindDomain)
	st.Domains = append(st.Domains, &model.Domain{ID: did, InternalID: dint, Name: "ROOT", Path: "/", Created: now})
	st.Counters[model.KindAccount], st.Counters[model.KindUser] = 1, 1
	aid, aint := st.NewID(model.KindAccount)
	st.Accounts = append(st.Accounts, &model.Account{ID: aid, InternalID: aint, Name: "admin", Type: 1,
		DomainID: did, State: model.AccountEnabled, IsDefault: true, Created: now})
	uid, uidn := st.NewID(model.KindUser)
	admin := &model.User{ID: uid, InternalID: uidn, Username: "admin", Firstname: "admin", Lastname: "cloud",
		AccountID: aid, State: model.AccountEnabled, IsDefault: true, Created: now}
	admin.SetPassword("password")
	st.Users = append(st.Users, admin)
}

// userActive is ApiServer.verifyRequest's (and verifyUser's) check that both
// the user and its account are enabled before any request is accepted.
func userActive(st *model.State, u *model.User) bool {
	a := st.Account(u.AccountID)
	return u.State == model.AccountEnabled && a != nil && a.State == model.AccountEnabled
}

func init() {
	register(
		command{name: "listDomains", idKind: model.KindDomain, sync: listDomains},
		command{name: "listAccounts", idKind: model.KindAccount, sync: listAccounts},
		command{name: "listUsers", idKind: model.KindUser, sync: listUsers},
		command{name: "getUser", sync: getUser},
		command{name: "getUserKeys", idKind: model.KindUser, sync: getUserKeys},
		command{name: "registerUserKeys", idKind: model.KindUser, sync: registerUserKeys},
	)
}

// listDomains is QueryManagerImpl.searchForDomains (DomainJoinDaoImpl renders).
func listDomains(c *Call) (any, error) {
	l := lister[*model.Domain]{key: "domain", id: (*model.Domain).UUID, name: func(d *model.Domain) string { return d.Name },
		view: (*Call).domainView}
	level := c.Params.Int("level", -1)
	return l.run(c, c.st.Domains, func(d *model.Domain) bool { return level < 0 || int64(d.Level) == level })
}

// listAccounts is QueryManagerImpl.searchForAccounts (AccountJoinDaoImpl renders).
func listAccounts(c *Call) (any, error) {
	l := lister[*model.Account]{key: "account", id: (*model.Account).UUID, name: func(a *model.Account) string { return a.Name },
		view: (*Call).accountView}
	p := c.Params
	return l.run(c, c.st.Accounts, func(a *model.Account) bool {
		return optEq(p.Get("domainid"), a.DomainID) && optEq(p.Get("state"), a.State) &&
			(!p.Has("accounttype") || p.Int("accounttype", -1) == int64(a.Type))
	})
}

// listUsers is QueryManagerImpl.searchForUsers (UserAccountJoinDaoImpl renders).
func listUsers(c *Call) (any, error) {
	l := lister[*model.User]{key: "user", id: (*model.User).UUID, view: (*Call).userView,
		keyword: func(u *model.User) []string { return []string{u.Username, u.Firstname, u.Lastname, u.Email} }}
	p := c.Params
	return l.run(c, c.st.Users, func(u *model.User) bool {
		a := c.st.Account(u.AccountID)
		return optEq(p.Get("username"), u.Username) && optEq(p.Get("state"), u.State) &&
			optEq(p.Get("account"), a.Name) && optEq(p.Get("domainid"), a.DomainID) &&
			(!p.Has("accounttype") || p.Int("accounttype", -1) == int64(a.Type))
	})
}

// getUser is GetUserCmd.execute over AccountService.getUserByApiKey.
func getUser(c *Call) (any, error) {
	u := c.st.UserByAPIKey(c.Params.Get("userapikey"))
	if u == nil {
		return nil, paramError("User with specified API key does not exist")
	}
	return map[string]any{"user": c.userView(u)}, nil
}

// getUserKeys is AccountManagerImpl.getKeys(GetUserKeysCmd).
func getUserKeys(c *Call) (any, error) {
	u, _ := model.ByID(c.st.Users, c.Params.Get("id"))
	keys := map[string]any{}
	if u.APIKey != "" {
		keys["apikey"], keys["secretkey"] = u.APIKey, u.SecretKey
	}
	return map[string]any{"userkeys": keys}, nil
}

// registerUserKeys is AccountManagerImpl.createApiKeyAndSecretKey: the
// user's key pair is replaced and the old pair stops working at once.
func registerUserKeys(c *Call) (any, error) {
	u, _ := model.ByID(c.st.Users, c.Params.Get("id"))
	u.APIKey, u.SecretKey = newKey(), newKey()
	c.changed()
	return map[string]any{"userkeys": map[string]any{"apikey": u.APIKey, "secretkey": u.SecretKey}}, nil
}

func (c *Call) domainView(d *model.Domain) map[string]any {
	v := map[string]any{"id": d.ID, "name": d.Name, "level": d.Level, "path": d.DisplayPath(),
		"haschild": hasChildDomain(c.st, d.ID), "state": model.DomainActive, "created": csTime(d.Created),
		"hasannotations": false}
	if p := c.st.Domain(d.ParentID); p != nil {
		v["parentdomainid"], v["parentdomainname"] = p.ID, p.Name
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

func (c *Call) accountView(a *model.Account) map[string]any {
	d := c.st.Domain(a.DomainID)
	v := map[string]any{"id": a.ID, "name": a.Name, "accounttype": a.Type, "domainid": d.ID,
		"domain": d.Name, "domainpath": d.DisplayPath(), "state": a.State, "isdefault": a.IsDefault,
		"created": csTime(a.Created), "groups": []string{}, "iscleanuprequired": false}
	for k, val := range c.roleFields(a) {
		v[k] = val
	}
	for k, val := range resourceUsage(c.st, a.ID) {
		v[k] = val
	}
	users := []map[string]any{}
	for _, u := range c.st.Users {
		if u.AccountID == a.ID {
			users = append(users, c.userView(u))
		}
	}
	v["user"] = users
	return v
}

// resourceUsage reports an account's resource counts; no limits are set in
// the simulator, so every limit is "Unlimited".
func resourceUsage(st *model.State, accountID string) map[string]any {
	totals := map[string]int64{"vm": 0, "ip": 0, "volume": 0, "snapshot": 0, "template": 0, "network": 0,
		"vpc": 0, "cpu": 0, "memory": 0, "primarystorage": 0, "project": 0}
	for _, vm := range st.VMs {
		if vm.AccountID == accountID && vm.Removed == nil {
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

// userView never includes the secret key: 4.22 only reveals it through
// getUserKeys.
func (c *Call) userView(u *model.User) map[string]any {
	a := c.st.Account(u.AccountID)
	d := c.st.Domain(a.DomainID)
	v := map[string]any{"id": u.ID, "username": u.Username, "firstname": u.Firstname,
		"lastname": u.Lastname, "created": csTime(u.Created), "state": u.State, "account": a.Name,
		"accountid": a.ID, "accounttype": a.Type, "usersource": "native", "domainid": d.ID,
		"domain": d.Name, "iscallerchilddomain": false, "isdefault": u.IsDefault,
		"is2faenabled": false, "is2famandated": false, "apikeyaccess": "Inherit"}
	for k, val := range c.roleFields(a) {
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
