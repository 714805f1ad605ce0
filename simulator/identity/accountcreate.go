package identity

import (
	"fmt"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// accountCreateCommands are the commands of accountcreate.go (registerCommands).
func accountCreateCommands() []kernel.Command {
	return []kernel.Command{{Name: "createAccount", Sync: createAccount}}
}

// createAccount is CreateAccountCmd.execute: validateParams, then
// AccountManagerImpl.createUserAccount, answered as
// createUserAccountResponse(ResponseView.Full). The role check
// (rolePermissions) has let only the root admin, Resource Admin and Domain
// Admin roles through. Not modelled: accountdetails, networkdomain
// validation, external account/user UUIDs, an account name taken by another
// user's account, and checkAccess(caller, domain) (every domain is ROOT: the
// simulator has no createDomain).
func createAccount(c *kernel.Call) (any, error) {
	role, err := newAccountRole(c)
	if err != nil {
		return nil, err
	}
	p := c.Params
	d, err := newAccountDomain(c)
	if err != nil {
		return nil, err
	}
	username := p.Get("username")
	if usernameInDomain(c.State, username, d.ID) {
		// validateUsernameInDomain (user.allow.multiple.accounts is false).
		return nil, kernel.ParamError("The user %s already exists in domain %s", username, domainString(d))
	}
	if err := checkRoleEscalation(c, role); err != nil {
		return nil, err
	}
	name := p.Get("account")
	if name == "" {
		name = username
	}
	a := addAccount(c.State, name, role, d.ID, c.Engine.Now())
	u := addUser(c.State, a, username, p, c.Engine.Now())
	u.SetPassword(p.Get("password"))
	c.Changed()
	return map[string]any{"account": views.AccountView(c, a)}, nil
}

// newAccountRole is CreateAccountCmd.validateParams with getRoleId
// (RoleType.getRoleByAccountType: the default role of accounttype when no
// roleid is given) and getAccountType (RoleType.getAccountTypeByRole).
func newAccountRole(c *kernel.Call) (model.RoleType, error) {
	p := c.Params
	if p.Get("password") == "" {
		return 0, kernel.ServerParamError("Empty passwords are not allowed")
	}
	if id := p.Get("roleid"); id != "" {
		if r := roleByUUID(c.State, id); r != 0 {
			return r, nil
		}
		// Unreachable while the default roles are the only roles (the
		// validator refuses UUIDs of no role); the text is the simulator's.
		return 0, kernel.ParamError("Unable to find role with ID %s", id)
	}
	if !p.Has("accounttype") {
		return 0, kernel.ServerParamError("Neither account type and role ID are not provided")
	}
	if r := model.RoleForAccountType(int(p.Int("accounttype", -1))); r != 0 {
		return r, nil
	}
	// Account.Type.getFromValue finds no type: the text is the simulator's.
	return 0, kernel.ParamError("Invalid account type %s", p.Get("accounttype"))
}

// newAccountDomain is createUserAccount's domain: ROOT unless domainid names
// another ("The domain ... does not exist; unable to create account").
func newAccountDomain(c *kernel.Call) (*model.Domain, error) {
	id := c.Params.Get("domainid")
	if id == "" {
		return c.State.RootDomain(), nil
	}
	if d := c.State.Domain(id); d != nil {
		return d, nil
	}
	return nil, kernel.ParamError("The domain %s does not exist; unable to create account", id)
}

// checkRoleEscalation is AccountManagerImpl.checkRoleEscalation over the
// commands the simulator implements: the caller must be able to call every
// command the new account's role can.
func checkRoleEscalation(c *kernel.Call, r model.RoleType) error {
	mine := c.Account.Role()
	for _, s := range kernel.RolePermissions {
		if kernel.In(r, s) && !kernel.In(mine, s) {
			return kernel.PermissionDenied("User of Account %s and domain %s can not create an account with access to more privileges they have themself.",
				c.Account.Name, domainString(c.State.Domain(c.Account.DomainID)))
		}
	}
	return nil
}

// domainString stands in for DomainVO.toString (whose 4.22 form was not
// read): the domain's name and path.
func domainString(d *model.Domain) string {
	return fmt.Sprintf("%s (%s)", d.Name, d.DisplayPath())
}

func usernameInDomain(st *model.State, username, domainID string) bool {
	for _, u := range st.Users {
		if a := st.Account(u.AccountID); a != nil && a.DomainID == domainID && strings.EqualFold(u.Username, username) {
			return true
		}
	}
	return false
}

// addAccount is AccountManagerImpl.createAccount: an enabled account of the
// role's account type.
func addAccount(st *model.State, name string, r model.RoleType, domainID string, now time.Time) *model.Account {
	id, internal := st.NewID(model.KindAccount)
	a := &model.Account{ID: id, InternalID: internal, Name: name, Type: accountTypeForRole(r), RoleID: int(r),
		DomainID: domainID, State: model.AccountEnabled, Created: now}
	st.Accounts = append(st.Accounts, a)
	return a
}

// addUser is AccountManagerImpl.createUser for the account's first user:
// enabled, without API keys.
func addUser(st *model.State, a *model.Account, username string, p kernel.Params, now time.Time) *model.User {
	id, internal := st.NewID(model.KindUser)
	u := &model.User{ID: id, InternalID: internal, Username: username, Firstname: p.Get("firstname"),
		Lastname: p.Get("lastname"), Email: p.Get("email"), Timezone: p.Get("timezone"),
		AccountID: a.ID, State: model.AccountEnabled, Created: now}
	st.Users = append(st.Users, u)
	return u
}
