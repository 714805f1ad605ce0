package simulator

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"
)

// Domain is a CloudStack domain. Path is CloudStack's internal form: "/" for
// ROOT, "/child/" below it.
type Domain struct {
	ID         string    `json:"id"`
	InternalID int64     `json:"internalid"`
	Name       string    `json:"name"`
	Path       string    `json:"path"`
	ParentID   string    `json:"parentid,omitempty"`
	Level      int       `json:"level"`
	Created    time.Time `json:"created"`
}

func (d *Domain) uuid() string { return d.ID }

// displayPath is the path as API responses show it: "ROOT", "ROOT/child".
func (d *Domain) displayPath() string {
	return "ROOT" + strings.TrimSuffix(d.Path, "/")
}

// Account is a CloudStack account; Type 1 is a root admin.
type Account struct {
	ID         string    `json:"id"`
	InternalID int64     `json:"internalid"`
	Name       string    `json:"name"`
	Type       int       `json:"type"`
	DomainID   string    `json:"domainid"`
	State      string    `json:"state"`
	IsDefault  bool      `json:"isdefault"`
	Created    time.Time `json:"created"`
	// RoleID is the default role (roles.go) it was created with; 0 for the
	// role its type maps to.
	RoleID int `json:"roleid,omitempty"`
}

func (a *Account) uuid() string { return a.ID }

// User is a CloudStack user. The password is kept as a salted hash; the API
// keys are kept in clear because signatures are verified with the secret.
type User struct {
	ID           string    `json:"id"`
	InternalID   int64     `json:"internalid"`
	Username     string    `json:"username"`
	PasswordSalt string    `json:"passwordsalt"`
	PasswordHash string    `json:"passwordhash"`
	Firstname    string    `json:"firstname"`
	Lastname     string    `json:"lastname"`
	Email        string    `json:"email,omitempty"`
	Timezone     string    `json:"timezone,omitempty"`
	AccountID    string    `json:"accountid"`
	State        string    `json:"state"`
	APIKey       string    `json:"apikey,omitempty"`
	SecretKey    string    `json:"secretkey,omitempty"`
	IsDefault    bool      `json:"isdefault"`
	Created      time.Time `json:"created"`
}

func (u *User) uuid() string { return u.ID }

func (u *User) setPassword(pw string) {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	u.PasswordSalt = hex.EncodeToString(salt)
	u.PasswordHash = passwordHash(u.PasswordSalt, pw)
}

func (u *User) checkPassword(pw string) bool {
	return subtle.ConstantTimeCompare([]byte(u.PasswordHash), []byte(passwordHash(u.PasswordSalt, pw))) == 1
}

func passwordHash(salt, pw string) string {
	h := sha256.Sum256([]byte(salt + pw))
	return hex.EncodeToString(h[:])
}

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
func seedAccounts(st *state, now time.Time) {
	st.RootAdminRoleID, _ = st.newID(kindRole)
	seedRoles(st)
	did, dint := st.newID(kindDomain)
	st.Domains = append(st.Domains, &Domain{ID: did, InternalID: dint, Name: "ROOT", Path: "/", Created: now})
	st.Counters[kindAccount], st.Counters[kindUser] = 1, 1
	aid, aint := st.newID(kindAccount)
	st.Accounts = append(st.Accounts, &Account{ID: aid, InternalID: aint, Name: "admin", Type: 1,
		DomainID: did, State: accountEnabled, IsDefault: true, Created: now})
	uid, uidn := st.newID(kindUser)
	admin := &User{ID: uid, InternalID: uidn, Username: "admin", Firstname: "admin", Lastname: "cloud",
		AccountID: aid, State: accountEnabled, IsDefault: true, Created: now}
	admin.setPassword("password")
	st.Users = append(st.Users, admin)
}

func (st *state) adminUser() *User {
	for _, u := range st.Users {
		if u.Username == "admin" && u.IsDefault {
			return u
		}
	}
	return nil
}

func (st *state) userByAPIKey(key string) *User {
	if key == "" {
		return nil
	}
	for _, u := range st.Users {
		if subtle.ConstantTimeCompare([]byte(u.APIKey), []byte(key)) == 1 {
			return u
		}
	}
	return nil
}

func (st *state) account(id string) *Account { a, _ := byID(st.Accounts, id); return a }
func (st *state) domain(id string) *Domain   { d, _ := byID(st.Domains, id); return d }

// userActive is ApiServer.verifyRequest's (and verifyUser's) check that both
// the user and its account are enabled before any request is accepted.
func (st *state) userActive(u *User) bool {
	a := st.account(u.AccountID)
	return u.State == accountEnabled && a != nil && a.State == accountEnabled
}

func init() {
	register(
		command{name: "listDomains", idKind: kindDomain, sync: listDomains},
		command{name: "listAccounts", idKind: kindAccount, sync: listAccounts},
		command{name: "listUsers", idKind: kindUser, sync: listUsers},
		command{name: "getUser", sync: getUser},
		command{name: "getUserKeys", idKind: kindUser, sync: getUserKeys},
		command{name: "registerUserKeys", idKind: kindUser, sync: registerUserKeys},
	)
}

// listDomains is QueryManagerImpl.searchForDomains (DomainJoinDaoImpl renders).
func listDomains(c *Call) (any, error) {
	l := lister[*Domain]{key: "domain", id: (*Domain).uuid, name: func(d *Domain) string { return d.Name },
		view: c.domainView}
	level := c.Params.Int("level", -1)
	return l.run(c, c.st.Domains, func(d *Domain) bool { return level < 0 || int64(d.Level) == level })
}

// listAccounts is QueryManagerImpl.searchForAccounts (AccountJoinDaoImpl renders).
func listAccounts(c *Call) (any, error) {
	l := lister[*Account]{key: "account", id: (*Account).uuid, name: func(a *Account) string { return a.Name },
		view: c.accountView}
	p := c.Params
	return l.run(c, c.st.Accounts, func(a *Account) bool {
		return optEq(p.Get("domainid"), a.DomainID) && optEq(p.Get("state"), a.State) &&
			(!p.Has("accounttype") || p.Int("accounttype", -1) == int64(a.Type))
	})
}

// listUsers is QueryManagerImpl.searchForUsers (UserAccountJoinDaoImpl renders).
func listUsers(c *Call) (any, error) {
	l := lister[*User]{key: "user", id: (*User).uuid, view: c.userView,
		keyword: func(u *User) []string { return []string{u.Username, u.Firstname, u.Lastname, u.Email} }}
	p := c.Params
	return l.run(c, c.st.Users, func(u *User) bool {
		a := c.st.account(u.AccountID)
		return optEq(p.Get("username"), u.Username) && optEq(p.Get("state"), u.State) &&
			optEq(p.Get("account"), a.Name) && optEq(p.Get("domainid"), a.DomainID) &&
			(!p.Has("accounttype") || p.Int("accounttype", -1) == int64(a.Type))
	})
}

// getUser is GetUserCmd.execute over AccountService.getUserByApiKey.
func getUser(c *Call) (any, error) {
	u := c.st.userByAPIKey(c.Params.Get("userapikey"))
	if u == nil {
		return nil, paramError("User with specified API key does not exist")
	}
	return map[string]any{"user": c.userView(u)}, nil
}

// getUserKeys is AccountManagerImpl.getKeys(GetUserKeysCmd).
func getUserKeys(c *Call) (any, error) {
	u, _ := byID(c.st.Users, c.Params.Get("id"))
	keys := map[string]any{}
	if u.APIKey != "" {
		keys["apikey"], keys["secretkey"] = u.APIKey, u.SecretKey
	}
	return map[string]any{"userkeys": keys}, nil
}

// registerUserKeys is AccountManagerImpl.createApiKeyAndSecretKey: the
// user's key pair is replaced and the old pair stops working at once.
func registerUserKeys(c *Call) (any, error) {
	u, _ := byID(c.st.Users, c.Params.Get("id"))
	u.APIKey, u.SecretKey = newKey(), newKey()
	c.changed()
	return map[string]any{"userkeys": map[string]any{"apikey": u.APIKey, "secretkey": u.SecretKey}}, nil
}

func (c *Call) domainView(d *Domain) map[string]any {
	v := map[string]any{"id": d.ID, "name": d.Name, "level": d.Level, "path": d.displayPath(),
		"haschild": c.st.hasChildDomain(d.ID), "state": domainActive, "created": csTime(d.Created),
		"hasannotations": false}
	if p := c.st.domain(d.ParentID); p != nil {
		v["parentdomainid"], v["parentdomainname"] = p.ID, p.Name
	}
	return v
}

func (st *state) hasChildDomain(id string) bool {
	for _, d := range st.Domains {
		if d.ParentID == id {
			return true
		}
	}
	return false
}

func (c *Call) accountView(a *Account) map[string]any {
	d := c.st.domain(a.DomainID)
	v := map[string]any{"id": a.ID, "name": a.Name, "accounttype": a.Type, "domainid": d.ID,
		"domain": d.Name, "domainpath": d.displayPath(), "state": a.State, "isdefault": a.IsDefault,
		"created": csTime(a.Created), "groups": []string{}, "iscleanuprequired": false}
	for k, val := range c.roleFields(a) {
		v[k] = val
	}
	for k, val := range c.st.resourceUsage(a.ID) {
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
func (st *state) resourceUsage(accountID string) map[string]any {
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
func (c *Call) userView(u *User) map[string]any {
	a := c.st.account(u.AccountID)
	d := c.st.domain(a.DomainID)
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
