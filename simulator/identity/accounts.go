// Package identity is the identity family of the API (CloudStack's
// api/command/{user,admin}/{account,user,domain,ssh}): domains, accounts,
// users and their keys, the default roles, SSH key pairs.
package identity

import (
	"crypto/rand"
	"encoding/base64"
	"slices"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// NewKey makes an API or secret key the way AccountManagerImpl's
// createUserApiKey/createUserSecretKey do: 64 random bytes (an HmacSHA1
// KeyGenerator key), URL-safe Base64 without padding (86 characters).
func NewKey() string {
	b := make([]byte, 64)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// SeedAccounts creates ROOT and the admin account and user (admin/password),
// with CloudStack's internal ids: the system account and user take id 1.
func SeedAccounts(st *model.State, now time.Time) {
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

// accountCommands are the commands of accounts.go (registerCommands).
func accountCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listDomains", IDKind: model.KindDomain, Sync: listDomains},
		{Name: "listAccounts", IDKind: model.KindAccount, Sync: listAccounts},
		{Name: "listUsers", IDKind: model.KindUser, Sync: listUsers},
		{Name: "getUser", Sync: getUser},
		{Name: "getUserKeys", IDKind: model.KindUser, Sync: getUserKeys},
		{Name: "registerUserKeys", IDKind: model.KindUser, Sync: registerUserKeys},
	}
}

// listDomains is QueryManagerImpl.searchForDomains (DomainJoinDaoImpl renders).
func listDomains(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.Domain]{Key: "domain", ID: (*model.Domain).UUID, Name: func(d *model.Domain) string { return d.Name },
		View: views.DomainView}
	level := c.Params.Int("level", -1)
	return l.Run(c, c.State.Domains, func(d *model.Domain) bool { return level < 0 || int64(d.Level) == level })
}

// listAccounts is QueryManagerImpl.searchForAccounts (AccountJoinDaoImpl
// renders); a project's own account is never listed (type NEQ PROJECT).
func listAccounts(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.Account]{Key: "account", ID: (*model.Account).UUID, Name: func(a *model.Account) string { return a.Name },
		View: views.AccountView}
	p := c.Params
	return l.Run(c, c.State.Accounts, func(a *model.Account) bool {
		return a.Type != model.AccountTypeProject && kernel.OptEq(p.Get("domainid"), a.DomainID) && kernel.OptEq(p.Get("state"), a.State) &&
			(!p.Has("accounttype") || p.Int("accounttype", -1) == int64(a.Type))
	})
}

// listUsers is QueryManagerImpl.searchForUsers (UserAccountJoinDaoImpl renders).
func listUsers(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.User]{Key: "user", ID: (*model.User).UUID, View: views.UserView,
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
	return map[string]any{"user": views.UserView(c, u)}, nil
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
	u.APIKey, u.SecretKey = NewKey(), NewKey()
	c.Changed()
	return map[string]any{"userkeys": map[string]any{"apikey": u.APIKey, "secretkey": u.SecretKey}}, nil
}

// Commands are the family's commands, for the simulator's registration.
func Commands() []kernel.Command {
	return slices.Concat(
		accountCommands(),
		accountCreateCommands(),
		projectCommands(),
		sshKeyCommands(),
	)
}
