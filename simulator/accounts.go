package simulator

import (
	"crypto/rand"
	"encoding/base64"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
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

func init() {
	kernel.Register(
		kernel.Command{Name: "listDomains", IDKind: model.KindDomain, Sync: listDomains},
		kernel.Command{Name: "listAccounts", IDKind: model.KindAccount, Sync: listAccounts},
		kernel.Command{Name: "listUsers", IDKind: model.KindUser, Sync: listUsers},
		kernel.Command{Name: "getUser", Sync: getUser},
		kernel.Command{Name: "getUserKeys", IDKind: model.KindUser, Sync: getUserKeys},
		kernel.Command{Name: "registerUserKeys", IDKind: model.KindUser, Sync: registerUserKeys},
	)
}

// listDomains is QueryManagerImpl.searchForDomains (DomainJoinDaoImpl renders).
func listDomains(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.Domain]{Key: "domain", ID: (*model.Domain).UUID, Name: func(d *model.Domain) string { return d.Name },
		View: domainView}
	level := c.Params.Int("level", -1)
	return l.Run(c, c.State.Domains, func(d *model.Domain) bool { return level < 0 || int64(d.Level) == level })
}

// listAccounts is QueryManagerImpl.searchForAccounts (AccountJoinDaoImpl renders).
func listAccounts(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.Account]{Key: "account", ID: (*model.Account).UUID, Name: func(a *model.Account) string { return a.Name },
		View: accountView}
	p := c.Params
	return l.Run(c, c.State.Accounts, func(a *model.Account) bool {
		return kernel.OptEq(p.Get("domainid"), a.DomainID) && kernel.OptEq(p.Get("state"), a.State) &&
			(!p.Has("accounttype") || p.Int("accounttype", -1) == int64(a.Type))
	})
}

// listUsers is QueryManagerImpl.searchForUsers (UserAccountJoinDaoImpl renders).
func listUsers(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.User]{Key: "user", ID: (*model.User).UUID, View: userView,
		Keyword: func(u *model.User) []string { return []string{u.Username, u.Firstname, u.Lastname, u.Email} }}
	p := c.Params
	return l.Run(c, c.State.Users, func(u *model.User) bool {
		a := c.State.Account(u.AccountID)
		return kernel.OptEq(p.Get("username"), u.Username) && kernel.OptEq(p.Get("state"), u.State) &&
			kernel.OptEq(p.Get("account"), a.Name) && kernel.OptEq(p.Get("domainid"), a.DomainID) &&
			(!p.Has("accounttype") || p.Int("accounttype", -1) == int64(a.Type))
	})
}

// getUser is GetUserCmd.execute over AccountService.getUserByApiKey.
func getUser(c *kernel.Call) (any, error) {
	u := c.State.UserByAPIKey(c.Params.Get("userapikey"))
	if u == nil {
		return nil, kernel.ParamError("User with specified API key does not exist")
	}
	return map[string]any{"user": userView(c, u)}, nil
}

// getUserKeys is AccountManagerImpl.getKeys(GetUserKeysCmd).
func getUserKeys(c *kernel.Call) (any, error) {
	u, _ := model.ByID(c.State.Users, c.Params.Get("id"))
	keys := map[string]any{}
	if u.APIKey != "" {
		keys["apikey"], keys["secretkey"] = u.APIKey, u.SecretKey
	}
	return map[string]any{"userkeys": keys}, nil
}

// registerUserKeys is AccountManagerImpl.createApiKeyAndSecretKey: the
// user's key pair is replaced and the old pair stops working at once.
func registerUserKeys(c *kernel.Call) (any, error) {
	u, _ := model.ByID(c.State.Users, c.Params.Get("id"))
	u.APIKey, u.SecretKey = newKey(), newKey()
	c.Changed()
	return map[string]any{"userkeys": map[string]any{"apikey": u.APIKey, "secretkey": u.SecretKey}}, nil
}

func domainView(c *kernel.Call, d *model.Domain) map[string]any {
	v := map[string]any{"id": d.ID, "name": d.Name, "level": d.Level, "path": d.DisplayPath(),
		"haschild": hasChildDomain(c.State, d.ID), "state": model.DomainActive, "created": kernel.CsTime(d.Created),
		"hasannotations": false}
	if p := c.State.Domain(d.ParentID); p != nil {
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

func accountView(c *kernel.Call, a *model.Account) map[string]any {
	d := c.State.Domain(a.DomainID)
	v := map[string]any{"id": a.ID, "name": a.Name, "accounttype": a.Type, "domainid": d.ID,
		"domain": d.Name, "domainpath": d.DisplayPath(), "state": a.State, "isdefault": a.IsDefault,
		"created": kernel.CsTime(a.Created), "groups": []string{}, "iscleanuprequired": false}
	for k, val := range roleFields(c, a) {
		v[k] = val
	}
	for k, val := range resourceUsage(c.State, a.ID) {
		v[k] = val
	}
	users := []map[string]any{}
	for _, u := range c.State.Users {
		if u.AccountID == a.ID {
			users = append(users, userView(c, u))
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
func userView(c *kernel.Call, u *model.User) map[string]any {
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
