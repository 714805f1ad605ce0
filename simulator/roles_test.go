package simulator_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// TestEveryCommandHasARoleRow: a command registered without a row would be
// root-admin only by accident, so each needs its Cmd class's answer.
func TestEveryCommandHasARoleRow(t *testing.T) {
	simulator.RegisterCommands()
	for name := range kernel.Registered {
		if _, ok := kernel.RolePermissions[name]; !ok {
			t.Errorf("%s has no row in rolePermissions", name)
		}
	}
	for name := range kernel.RolePermissions {
		if _, ok := kernel.Registered[name]; !ok {
			t.Errorf("rolePermissions names %s, which the simulator does not implement", name)
		}
	}
}

// TestUserRoleRefusedAdminCommand: a User-role account may list zones but
// not hosts; the refusal is the checker's 432 "errorresponse".
func TestUserRoleRefusedAdminCommand(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	key, secret := simtesting.NewAccount(t, s, "tenant", 0)
	tenant := cloudstack.NewClient(s.API, key, secret, false)
	if l, err := tenant.Zone.ListZones(tenant.Zone.NewListZonesParams()); err != nil || l.Count != 1 {
		t.Fatalf("a User lists zones: %+v, %v", l, err)
	}
	_, err := tenant.Host.ListHosts(tenant.Host.NewListHostsParams())
	simtesting.WantAPIError(t, err, 432, "The API [listHosts] does not exist or is not available for the account tenant.")

	r := s.Get(simtesting.Signed(simtesting.V3(map[string]string{"command": "listHosts"}, 60e9), key, secret))
	r.WantError(t, "errorresponse", 432, 9999, "The API [listHosts] does not exist or is not available for the account tenant.")
	// A command the simulator lacks names the gap, whoever calls it.
	r = s.Get(simtesting.Signed(simtesting.V3(map[string]string{"command": "listIsoPermissions"}, 60e9), key, secret))
	r.WantError(t, "errorresponse", 432, kernel.CsUnavailableCmd, "The API command listIsoPermissions is not implemented by the CloudStack simulator")
}

// TestRoleCheckPrecedesSignature: verifyRequest asks commandAvailable before
// it computes the signature, so a badly signed forbidden call is refused as
// unavailable, a badly signed permitted one as unauthenticated.
func TestRoleCheckPrecedesSignature(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	key, _ := simtesting.NewAccount(t, s, "tenant", 0)
	bad := simtesting.Signed(simtesting.V3(map[string]string{"command": "listHosts"}, 60e9), key, "wrong")
	s.Get(bad).WantError(t, "errorresponse", 432, 9999, "")
	bad = simtesting.Signed(simtesting.V3(map[string]string{"command": "listZones"}, 60e9), key, "wrong")
	s.Get(bad).WantError(t, "listzonesresponse", 401, 0, kernel.BadCredentials)
}

// TestCLIRoleRefusal: Debian's CLI sees the refusal as an HTTP 432 and the
// permitted call as usual.
func TestCLIRoleRefusal(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	key, secret := simtesting.NewAccount(t, s, "tenant", 0)
	out, errOut, err := simtesting.RunCLIAs(t, s, key, secret, "listHosts")
	if err == nil || !strings.Contains(errOut, "HTTP 432 response from CloudStack") ||
		!strings.Contains(out, `"errortext": "The API [listHosts] does not exist or is not available for the account tenant."`) {
		t.Fatalf("listHosts: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	out, errOut, err = simtesting.RunCLIAs(t, s, key, secret, "listServiceOfferings")
	if err != nil || !strings.Contains(out, `"serviceoffering"`) {
		t.Fatalf("listServiceOfferings: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}

// TestSessionRoleCheck: a logged-in User is refused the same way.
func TestSessionRoleCheck(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	simtesting.NewAccount(t, s, "tenant", 0)
	r, cookies := login(s, map[string]string{"username": "tenant", "password": "s3cret"})
	lr := r.Inner(t, "loginresponse")
	if lr["type"] != "0" {
		t.Fatalf("login: %s", r.Raw)
	}
	v := url.Values{"command": {"listClusters"}, "sessionkey": {lr["sessionkey"].(string)}, "response": {"json"}}
	s.Post(v, cookie(cookies, "JSESSIONID")).WantError(t, "errorresponse", 432, 9999,
		"The API [listClusters] does not exist or is not available for the account tenant.")
}

// TestCreateAccountRoles: a new account carries its type's default role; a
// User may not create accounts; a Domain Admin may create a User but not a
// root admin (checkRoleEscalation); usernames are unique in a domain.
func TestCreateAccountRoles(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	userKey, userSecret := simtesting.NewAccount(t, s, "tenant", 0)
	daKey, daSecret := simtesting.NewAccount(t, s, "domainadmin", 2)

	l, err := cs.Account.ListAccounts(&cloudstack.ListAccountsParams{})
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{}
	for _, a := range l.Accounts {
		roles[a.Name] = a.Roletype + "/" + a.Rolename
	}
	if roles["admin"] != "Admin/Root Admin" || roles["tenant"] != "User/User" || roles["domainadmin"] != "DomainAdmin/Domain Admin" {
		t.Fatalf("roles = %v", roles)
	}

	tenant := cloudstack.NewClient(s.API, userKey, userSecret, false)
	_, err = tenant.Account.CreateAccount(tenant.Account.NewCreateAccountParams("x@example.org", "X", "Y", "pw", "x"))
	simtesting.WantAPIError(t, err, 432, "The API [createAccount] does not exist or is not available for the account tenant.")

	da := cloudstack.NewClient(s.API, daKey, daSecret, false)
	p := da.Account.NewCreateAccountParams("u@example.org", "U", "V", "pw", "byda")
	p.SetAccounttype(0)
	if _, err := da.Account.CreateAccount(p); err != nil {
		t.Fatalf("a Domain Admin creates a User: %v", err)
	}
	p = da.Account.NewCreateAccountParams("r@example.org", "R", "S", "pw", "rootbyda")
	p.SetAccounttype(1)
	_, err = da.Account.CreateAccount(p)
	simtesting.WantAPIError(t, err, 531, "can not create an account with access to more privileges they have themself.")

	p = cs.Account.NewCreateAccountParams("t@example.org", "T", "U", "pw", "tenant")
	p.SetAccounttype(0)
	_, err = cs.Account.CreateAccount(p)
	simtesting.WantAPIError(t, err, 431, "The user tenant already exists in domain ROOT")

	r := s.Call(map[string]string{"command": "createAccount", "username": "n", "password": "pw",
		"email": "n@example.org", "firstname": "N", "lastname": "O"})
	r.WantError(t, "createaccountresponse", 431, 9999, "Neither account type and role ID are not provided")
}

// TestListApisFollowsTheRole: a User discovers the commands it may call and
// not the others (ApiDiscoveryServiceImpl.listApis through the checker).
func TestListApisFollowsTheRole(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	key, secret := simtesting.NewAccount(t, s, "tenant", 0)
	tenant := cloudstack.NewClient(s.API, key, secret, false)
	l, err := tenant.APIDiscovery.ListApis(tenant.APIDiscovery.NewListApisParams())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range l.Apis {
		seen[a.Name] = true
	}
	if !seen["deployVirtualMachine"] || !seen["listApis"] || seen["listHosts"] || seen["createAccount"] || l.Count != len(l.Apis) {
		t.Fatalf("a User discovers %d APIs: %v", l.Count, seen)
	}
	p := tenant.APIDiscovery.NewListApisParams()
	p.SetName("listHosts")
	_, err = tenant.APIDiscovery.ListApis(p)
	simtesting.WantAPIError(t, err, 530, "Api Discovery plugin was unable to find an api by that name or process any apis")
}

// TestKeyPairsAreListedToTheirAccount: listSSHKeyPairs answers the caller's
// own key pairs (SshKeyPairServiceImpl.listSshKeyPairs through
// buildACLSearchParameters); an admin sees another account's with listall.
func TestKeyPairsAreListedToTheirAccount(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	admin := s.Client()
	if _, err := admin.SSH.CreateSSHKeyPair(admin.SSH.NewCreateSSHKeyPairParams("bosh")); err != nil {
		t.Fatal(err)
	}
	key, secret := simtesting.NewAccount(t, s, "keyed", 0)
	tenant := cloudstack.NewClient(s.API, key, secret, false)
	named := func(c *cloudstack.CloudStackClient, listAll bool) int {
		p := c.SSH.NewListSSHKeyPairsParams()
		p.SetName("bosh")
		if listAll {
			p.SetListall(true)
		}
		l, err := c.SSH.ListSSHKeyPairs(p)
		if err != nil {
			t.Fatal(err)
		}
		return l.Count
	}
	if n := named(tenant, false); n != 0 {
		t.Fatalf("a User sees %d key pairs of the admin's", n)
	}
	if _, err := tenant.SSH.CreateSSHKeyPair(tenant.SSH.NewCreateSSHKeyPairParams("bosh")); err != nil {
		t.Fatal(err)
	}
	if own, all := named(admin, false), named(admin, true); own != 1 || all != 2 {
		t.Fatalf("the admin sees %d of its own and %d with listall", own, all)
	}
	if n := named(tenant, true); n != 1 {
		t.Fatalf("a User sees %d with listall", n)
	}
}
