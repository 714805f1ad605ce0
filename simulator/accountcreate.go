package simulator

import (
	"fmt"
	"strings"
	"time"
)

func init() {
	register(command{name: "createAccount", sync: createAccount})
}

// createAccount is CreateAccountCmd.execute: validateParams, then
// AccountManagerImpl.createUserAccount, answered as
// createUserAccountResponse(ResponseView.Full). The role check
// (rolePermissions) has let only the root admin, Resource Admin and Domain
// Admin roles through. Not modelled: accountdetails, networkdomain
// validation, external account/user UUIDs, an account name taken by another
// user's account, and checkAccess(caller, domain) (every domain is ROOT: the
// simulator has no createDomain).
func createAccount(c *Call) (any, error) {
	role, err := c.newAccountRole()
	if err != nil {
		return nil, err
	}
	p := c.Params
	d, err := c.newAccountDomain()
	if err != nil {
		return nil, err
	}
	username := p.Get("username")
	if c.st.usernameInDomain(username, d.ID) {
		// validateUsernameInDomain (user.allow.multiple.accounts is false).
		return nil, paramError("The user %s already exists in domain %s", username, domainString(d))
	}
	if err := c.checkRoleEscalation(role); err != nil {
		return nil, err
	}
	name := p.Get("account")
	if name == "" {
		name = username
	}
	a := c.st.addAccount(name, role, d.ID, c.srv.now())
	u := c.st.addUser(a, username, p, c.srv.now())
	u.setPassword(p.Get("password"))
	c.changed()
	return map[string]any{"account": c.accountView(a)}, nil
}

// newAccountRole is CreateAccountCmd.validateParams with getRoleId
// (RoleType.getRoleByAccountType: the default role of accounttype when no
// roleid is given) and getAccountType (RoleType.getAccountTypeByRole).
func (c *Call) newAccountRole() (roleType, error) {
	p := c.Params
	if p.Get("password") == "" {
		return 0, serverParamError("Empty passwords are not allowed")
	}
	if id := p.Get("roleid"); id != "" {
		if r := c.st.roleByUUID(id); r != 0 {
			return r, nil
		}
		// Unreachable while the default roles are the only roles (the
		// validator refuses UUIDs of no role); the text is the simulator's.
		return 0, paramError("Unable to find role with ID %s", id)
	}
	if !p.Has("accounttype") {
		return 0, serverParamError("Neither account type and role ID are not provided")
	}
	if r := roleForAccountType(int(p.Int("accounttype", -1))); r != 0 {
		return r, nil
	}
	// Account.Type.getFromValue finds no type: the text is the simulator's.
	return 0, paramError("Invalid account type %s", p.Get("accounttype"))
}

// newAccountDomain is createUserAccount's domain: ROOT unless domainid names
// another ("The domain ... does not exist; unable to create account").
func (c *Call) newAccountDomain() (*Domain, error) {
	id := c.Params.Get("domainid")
	if id == "" {
		return c.st.rootDomain(), nil
	}
	if d := c.st.domain(id); d != nil {
		return d, nil
	}
	return nil, paramError("The domain %s does not exist; unable to create account", id)
}

// checkRoleEscalation is AccountManagerImpl.checkRoleEscalation over the
// commands the simulator implements: the caller must be able to call every
// command the new account's role can.
func (c *Call) checkRoleEscalation(r roleType) error {
	mine := c.Account.role()
	for _, s := range rolePermissions {
		if r.in(s) && !mine.in(s) {
			return permissionDenied("User of Account %s and domain %s can not create an account with access to more privileges they have themself.",
				c.Account.Name, domainString(c.st.domain(c.Account.DomainID)))
		}
	}
	return nil
}

// domainString stands in for DomainVO.toString (whose 4.22 form was not
// read): the domain's name and path.
func domainString(d *Domain) string {
	return fmt.Sprintf("%s (%s)", d.Name, d.displayPath())
}

func (st *state) rootDomain() *Domain {
	for _, d := range st.Domains {
		if d.Path == "/" {
			return d
		}
	}
	return nil
}

func (st *state) usernameInDomain(username, domainID string) bool {
	for _, u := range st.Users {
		if a := st.account(u.AccountID); a != nil && a.DomainID == domainID && strings.EqualFold(u.Username, username) {
			return true
		}
	}
	return false
}

// addAccount is AccountManagerImpl.createAccount: an enabled account of the
// role's account type.
func (st *state) addAccount(name string, r roleType, domainID string, now time.Time) *Account {
	id, internal := st.newID(kindAccount)
	a := &Account{ID: id, InternalID: internal, Name: name, Type: accountTypeForRole(r), RoleID: int(r),
		DomainID: domainID, State: accountEnabled, Created: now}
	st.Accounts = append(st.Accounts, a)
	return a
}

// addUser is AccountManagerImpl.createUser for the account's first user:
// enabled, without API keys.
func (st *state) addUser(a *Account, username string, p Params, now time.Time) *User {
	id, internal := st.newID(kindUser)
	u := &User{ID: id, InternalID: internal, Username: username, Firstname: p.Get("firstname"),
		Lastname: p.Get("lastname"), Email: p.Get("email"), Timezone: p.Get("timezone"),
		AccountID: a.ID, State: accountEnabled, Created: now}
	st.Users = append(st.Users, u)
	return u
}
