package spec

import (
	"strings"
	"testing"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// specProject is the CloudStack project cpi.json names in these tests.
const specProject = "bosh-spec"

// newProjectEnv is newEnv with cloudstack.project set to a project the
// CPI's account owns, holding a guest-network of its own: CloudStack
// shows a project's resources, networks included, only to queries in it.
func newProjectEnv(t *testing.T, edit func(cfg map[string]any), simArgs ...string) *env {
	t.Helper()
	e := newEnv(t, func(cfg map[string]any) {
		section(cfg, "cloudstack")["project"] = specProject
		if edit != nil {
			edit(cfg)
		}
	}, simArgs...)
	c := e.asyncClient()
	prj, err := c.Project.CreateProject(c.Project.NewCreateProjectParams(specProject, specProject))
	if err != nil {
		t.Fatalf("createProject: %v", err)
	}
	np := c.Network.NewListNetworksParams()
	np.SetName("guest-network")
	nets, err := c.Network.ListNetworks(np)
	if err != nil || nets.Count != 1 {
		t.Fatalf("the account's guest-network: %+v, %v", nets, err)
	}
	own := nets.Networks[0]
	cp := c.Network.NewCreateNetworkParams(own.Name, own.Networkofferingid, own.Zoneid)
	cp.SetDisplaytext(own.Displaytext)
	cp.SetGateway(own.Gateway)
	cp.SetNetmask(own.Netmask)
	cp.SetProjectid(prj.Id)
	if _, err := c.Network.CreateNetwork(cp); err != nil {
		t.Fatalf("createNetwork in the project: %v", err)
	}
	e.project = prj.Id
	e.resetCalls() // the setup's own calls are outside the project
	return e
}

// projectLookups is what a CPI call spends on cloudstack.project: one
// listProjects, when cpi.json names a project.
func (e *env) projectLookups() int {
	if e.project != "" {
		return 1
	}
	return 0
}

// inProject scopes a read-back to the env's project, when it has one.
func (e *env) inProject(p interface{ SetProjectid(string) }) {
	if e.project != "" {
		p.SetProjectid(e.project)
	}
}

func TestProjectVMLifecycle(t *testing.T) {
	e := newProjectEnv(t, nil)
	createVMV2WithManualNetworkAndEphemeralDisk(t, e)
	e.projectOnEveryCommand()
}

func TestProjectVMWithTwoNICsAVipAndAnAffinityGroup(t *testing.T) {
	e := newProjectEnv(t, nil)
	createVMWithTwoNICsAVipAndAnAffinityGroup(t, e)
	e.projectOnEveryCommand()
}

func TestProjectOpenStackKVMStemcellLifecycle(t *testing.T) {
	for _, publish := range []string{"upload", "webdav"} {
		t.Run(publish, func(t *testing.T) {
			e := newProjectEnv(t, configDriveBy(publish), "-hypervisor", "KVM")
			openStackKVMStemcellLifecycle(t, e)
			e.projectOnEveryCommand()
		})
	}
}

func TestProjectLBsLifecycle(t *testing.T) {
	e := newProjectEnv(t, nil)
	lbsLifecycle(t, e)
	e.projectOnEveryCommand()
}

func TestProjectDiskAndSnapshotLifecycle(t *testing.T) {
	e := newProjectEnv(t, nil)
	diskLifecycle(t, e)
	e.projectOnEveryCommand()
}

// projectOnEveryCommand: every command in the simulator's log whose 4.22
// schema takes projectid carried the project's, the CPI's calls and the
// read-backs of the env's helpers alike (createProject and the test's own
// setup are before the log was cleared, or take no projectid).
func (e *env) projectOnEveryCommand() {
	e.t.Helper()
	reqs, err := e.sim.Admin.Requests()
	if err != nil {
		e.t.Fatal(err)
	}
	checked := 0
	for _, r := range reqs {
		api, ok := schema.Lookup(r.Command)
		if !ok {
			continue // the secondary storage VM's upload, not an API command
		}
		if _, takes := api.Param("projectid"); !takes || r.Command == "createProject" {
			continue
		}
		checked++
		if r.Params["projectid"] != e.project {
			e.t.Errorf("%s sent without the project's projectid (%q): %v", r.Command, r.Params["projectid"], r.Params)
		}
	}
	if checked == 0 {
		e.t.Fatal("no command that takes projectid in the simulator's log")
	}
}

func TestProjectStemcells(t *testing.T) {
	c := imageCases[0]
	for publish, edit := range map[string]func(map[string]any){"upload": nil, "webdav": webdavConfig} {
		t.Run(publish, func(t *testing.T) {
			e := newProjectEnv(t, edit, "-hypervisor", c.hypervisor)
			stemcellPublishAndDelete(t, e, c)
			e.projectOnEveryCommand()
		})
	}
}

// TestProjectResourcesAreVisibleOnlyInTheProject: what the CPI makes with
// cloudstack.project belongs to the project; the admin API lists it only
// with projectid (listall does not cross into projects), and an account
// outside the project may not look in it.
func TestProjectResourcesAreVisibleOnlyInTheProject(t *testing.T) {
	e := newProjectEnv(t, nil)
	stemcell := e.stemcell()
	vm := e.createVM(stemcell, "10.1.1.80")
	disk := e.createDisk(1024, map[string]any{}, vm)
	e.attachDisk(vm, disk)
	var snap string
	e.call("snapshot_disk", disk, diskMeta).ok(t).decode(t, &snap)

	if got := e.vm(vm); got.Projectid != e.project || got.Project != specProject {
		t.Fatalf("VM %s belongs to project %q (%q), want %s", vm, got.Project, got.Projectid, e.project)
	}
	inside := e.ids()
	for _, id := range []string{vm, disk, snap, stemcell} {
		if !inside[id] {
			t.Errorf("%s is not listed in the project", id)
		}
	}
	project := e.project
	e.project = "" // what an admin's listall=true queries see outside projects
	for id := range e.ids() {
		if id == vm || id == disk || id == snap || id == stemcell {
			t.Errorf("%s is listed outside the project", id)
		}
	}
	e.project = project

	c := e.client()
	key, secret := userKeys(t, c, "outsider")
	outsider := csgo.NewClient(e.sim.URL, key, secret, false)
	p := outsider.VirtualMachine.NewListVirtualMachinesParams()
	p.SetProjectid(e.project)
	if _, err := outsider.VirtualMachine.ListVirtualMachines(p); err == nil || !strings.Contains(err.Error(), "can't access project") {
		t.Fatalf("an account outside the project listing its VMs: %v", err)
	}
	// Once a member, the user sees the VM in the project and only there.
	add := e.asyncClient().Project.NewAddAccountToProjectParams(e.project)
	add.SetAccount("outsider")
	if _, err := e.asyncClient().Project.AddAccountToProject(add); err != nil {
		t.Fatalf("addAccountToProject: %v", err)
	}
	if l, err := outsider.VirtualMachine.ListVirtualMachines(p); err != nil || l.Count != 1 || l.VirtualMachines[0].Id != vm {
		t.Fatalf("a member listing the project's VMs: %+v, %v", l, err)
	}
	mine := outsider.VirtualMachine.NewListVirtualMachinesParams()
	mine.SetListall(true)
	if l, err := outsider.VirtualMachine.ListVirtualMachines(mine); err != nil || l.Count != 0 {
		t.Fatalf("a member listing without projectid: %+v, %v", l, err)
	}
}

// asyncClient is the CPI's account through cloudstack-go, waiting for jobs.
func (e *env) asyncClient() *csgo.CloudStackClient {
	return csgo.NewAsyncClient(e.sim.URL, apiKey, secretKey, false)
}

// ids are the ids of the VMs, volumes, snapshots and own templates the
// env's helpers list.
func (e *env) ids() map[string]bool {
	e.t.Helper()
	out := map[string]bool{}
	for _, v := range e.vms() {
		out[v.Id] = true
	}
	for _, v := range e.volumes() {
		out[v.Id] = true
	}
	for _, s := range e.snapshots() {
		out[s.Id] = true
	}
	for _, tpl := range e.ourTemplates() {
		out[tpl.Id] = true
	}
	return out
}

// userKeys creates a User-role account and returns its API keys.
func userKeys(t *testing.T, c *csgo.CloudStackClient, name string) (key, secret string) {
	t.Helper()
	p := c.Account.NewCreateAccountParams(name+"@example.org", "Out", "Sider", "s3cret", name)
	p.SetAccounttype(0)
	a, err := c.Account.CreateAccount(p)
	if err != nil {
		t.Fatalf("createAccount: %v", err)
	}
	keys, err := c.User.RegisterUserKeys(c.User.NewRegisterUserKeysParams(a.User[0].Id))
	if err != nil {
		t.Fatalf("registerUserKeys: %v", err)
	}
	return keys.Apikey, keys.Secretkey
}

// TestBadProjectIsAClearError: a project CloudStack does not show the
// account fails the call naming cloudstack.project, before anything is
// created; info needs no CloudStack and still answers.
func TestBadProjectIsAClearError(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) { section(cfg, "cloudstack")["project"] = "no-such-project" })
	e.call("info").ok(t)
	e.resetCalls()
	e.call("create_disk", 1024, map[string]any{}, nil).failed(t, "CloudError", `cloudstack.project "no-such-project"`)
	calls := e.calls()
	if calls["createVolume"] != 0 || calls["listProjects"] != 1 {
		t.Fatalf("calls after a bad project: %v", calls)
	}
	e.resetCalls()
	for method, args := range map[string][]any{
		"create_stemcell": {writeImage(t, bzippedVHD(t)), stemcellMF("cloudstack", "xen", "vhdx")},
		"create_vm":       {"agent-x", "tpl", smallVM, map[string]any{"default": manualNet("10.1.1.90")}, []string{}, boshEnv},
	} {
		if r := e.call(method, args...); r.Error == nil || !strings.Contains(r.Error.Message, `cloudstack.project "no-such-project"`) {
			t.Errorf("%s with a bad project: %s", method, r.Stdout)
		}
	}
	for cmd := range e.calls() { // lookups outside projects (zones, OS types) may come first; nothing is made
		if !strings.HasPrefix(cmd, "list") {
			t.Errorf("a call with a bad project sent %s", cmd)
		}
	}
}
