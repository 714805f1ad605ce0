package spec

import (
	"encoding/json"
	"strings"
	"testing"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// asAccount is the env with the keys of a new account of the given type
// (0 User, 2 Domain Admin) and default role, made through the API as an
// operator does (createAccount, registerUserKeys): production CPIs run with
// an ordinary account's keys, not the root admin's.
func (e *env) asAccount(name string, accountType int, roleType string) (*env, string, string) {
	e.t.Helper()
	c := e.client()
	p := c.Account.NewCreateAccountParams(name+"@example.org", "Bosh", "Director", "pw-"+name, name)
	p.SetAccounttype(accountType)
	a, err := c.Account.CreateAccount(p)
	if err != nil || a.Roletype != roleType || len(a.User) != 1 {
		e.t.Fatalf("createAccount: %+v, %v", a, err)
	}
	keys, err := c.User.RegisterUserKeys(c.User.NewRegisterUserKeysParams(a.User[0].Id))
	if err != nil {
		e.t.Fatal(err)
	}
	u := *e
	u.config = writeJSON(e.t, map[string]any{"cloudstack": map[string]any{
		"endpoint": e.sim.URL, "api_key": keys.Apikey, "secret_access_key": keys.Secretkey, "default_zone": zoneName,
		"job_poll_interval": "50ms", "job_poll_max_interval": "200ms", "request_timeout": "10s",
	}})
	return &u, keys.Apikey, keys.Secretkey
}

// TestLifecycleWithUserRoleKeys runs the CPI's main lifecycle with a User
// account's keys: every command it sends is one the default User role may
// call, and delete_vm copes with the User's refusal to expunge by leaving
// the VM Destroyed. Until the expunge thread removes it (expunge.delay, a
// day by default), that VM still uses its template, which TemplateManagerImpl
// refuses to delete unless forced: delete_stemcell deletes it forced, and
// says so.
func TestLifecycleWithUserRoleKeys(t *testing.T) {
	e, key, secret := newEnv(t, nil).asAccount("bosh", 0, "User")
	vm, stemcell := e.lifecycle(key, secret)
	if s := e.vmState(vm); s != "Destroyed" {
		t.Fatalf("the User's VM is %q after delete_vm", s)
	}
	e.resetCalls()
	r := e.call("delete_stemcell", stemcell).ok(t)
	if !strings.Contains(r.Stderr, "deleting it with forced=true") || e.calls()["deleteTemplate"] != 2 {
		t.Fatalf("delete_stemcell of a template a Destroyed VM uses: calls %v\n%s", e.calls(), r.Stderr)
	}
	c := e.client()
	p := c.Template.NewListTemplatesParams("all")
	p.SetId(stemcell)
	if left, err := c.Template.ListTemplates(p); err != nil || left.Count != 0 {
		t.Fatalf("delete_stemcell left the template: %+v, %v", left, err)
	}
}

// TestLifecycleWithDomainAdminKeys: a Domain Admin may call every command
// the CPI sends and may expunge (AccountManagerImpl.isAdmin), so delete_vm
// expunges and delete_stemcell passes at once.
func TestLifecycleWithDomainAdminKeys(t *testing.T) {
	e, key, secret := newEnv(t, nil).asAccount("boshda", 2, "DomainAdmin")
	vm, stemcell := e.lifecycle(key, secret)
	if s := e.vmState(vm); s != "" && s != "Expunging" {
		t.Fatalf("the Domain Admin's VM is %q after delete_vm", s)
	}
	e.call("delete_stemcell", stemcell).ok(t)
}

// lifecycle runs create_stemcell, create_vm on the account's own network,
// the disk calls and delete_vm with the account's keys, checking that no
// call was refused by the role check and that the keys stay out of the
// CPI's output. It returns the VM and stemcell CIDs.
func (e *env) lifecycle(key, secret string) (vm, stemcell string) {
	t := e.t
	net := e.ownNetwork(key, secret, "bosh-net")
	e.resetCalls()
	stemcell = e.stemcell()
	var result []json.RawMessage
	e.call("create_vm", "agent-acct", stemcell, smallVM, map[string]any{"default": net}, []string{}, boshEnv).
		ok(t).decode(t, &result)
	if len(result) != 2 || json.Unmarshal(result[0], &vm) != nil {
		t.Fatalf("create_vm answered %v", result)
	}
	if v := e.vm(vm); len(v.Nic) != 1 || v.Nic[0].Networkname != "bosh-net" {
		t.Fatalf("the account's VM: %+v", v)
	}
	disk := e.createDisk(3000, map[string]any{"disk_offering": "Custom"}, vm)
	e.attachDisk(vm, disk)
	var snap string
	e.call("snapshot_disk", disk, diskMeta).ok(t).decode(t, &snap)
	e.call("delete_snapshot", snap).ok(t)
	e.call("detach_disk", vm, disk).ok(t)
	e.call("delete_disk", disk).ok(t)
	r := e.call("delete_vm", vm).ok(t)

	reqs, err := e.sim.Admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range reqs {
		if q.Status == 432 {
			t.Errorf("%s was refused to the account's role", q.Command)
		}
	}
	for _, s := range []string{key, secret} {
		if strings.Contains(r.Stdout+r.Stderr, s) {
			t.Fatal("the account's keys reached the CPI's output")
		}
	}
	return vm, stemcell
}

// ownNetwork creates an isolated network as the account (a User may not use
// another account's isolated network: NetworkModelImpl.checkNetworkPermissions)
// and returns the director's manual network on it.
func (e *env) ownNetwork(key, secret, name string) map[string]any {
	e.t.Helper()
	c := csgo.NewClient(e.sim.URL, key, secret, false)
	zone, _, err := c.Zone.GetZoneByName(zoneName)
	if err != nil {
		e.t.Fatal(err)
	}
	offering, _, err := c.NetworkOffering.GetNetworkOfferingByName("DefaultIsolatedNetworkOfferingWithSourceNatService")
	if err != nil {
		e.t.Fatal(err)
	}
	p := c.Network.NewCreateNetworkParams(name, offering.Id, zone.Id)
	p.SetDisplaytext(name)
	p.SetGateway("10.1.1.1")
	p.SetNetmask("255.255.255.0")
	e.inProject(p)
	if _, err := c.Network.CreateNetwork(p); err != nil {
		e.t.Fatal(err)
	}
	n := manualNet("10.1.1.71")
	n["cloud_properties"] = map[string]any{"name": name}
	return n
}
