package identity_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// projectEnv is a VM environment with a user account "alice" that owns a
// project, and a second user "bob" outside it.
type projectEnv struct {
	*simtesting.VMEnv
	alice, bob *cloudstack.CloudStackClient
	project    *cloudstack.CreateProjectResponse
}

func newProjectEnv(t *testing.T) *projectEnv {
	t.Helper()
	e := &projectEnv{VMEnv: simtesting.NewVMEnv(t, simulator.Options{})}
	key, secret := simtesting.NewAccount(t, e.Sim, "alice", 0)
	e.alice = cloudstack.NewAsyncClient(e.API, key, secret, false)
	key, secret = simtesting.NewAccount(t, e.Sim, "bob", 0)
	e.bob = cloudstack.NewAsyncClient(e.API, key, secret, false)
	p := e.alice.Project.NewCreateProjectParams("project one", "p1")
	prj, err := e.alice.Project.CreateProject(p)
	if err != nil {
		t.Fatalf("createProject: %v", err)
	}
	e.project = prj
	return e
}

func TestCreateProject(t *testing.T) {
	e := newProjectEnv(t)
	prj := e.project
	if prj.Name != "p1" || prj.Displaytext != "project one" || prj.State != "Active" ||
		!strings.HasPrefix(prj.Projectaccountname, "PrjAcct-p1-") || len(prj.Owner) != 1 || prj.Owner[0]["account"] != "alice" {
		t.Fatalf("project = %+v", prj)
	}
	_, err := e.alice.Project.CreateProject(e.alice.Project.NewCreateProjectParams("P1", "P1"))
	simtesting.WantAPIError(t, err, 431, "Project with name P1 already exists in domain id=1")

	count := func(cs *cloudstack.CloudStackClient, listAll bool) int {
		p := cs.Project.NewListProjectsParams()
		p.SetListall(listAll)
		l, err := cs.Project.ListProjects(p)
		if err != nil {
			t.Fatal(err)
		}
		return l.Count
	}
	// listProjectsInternal: members only, unless an admin asks for listall.
	if a, b, admin, all := count(e.alice, false), count(e.bob, true), count(e.CS, false), count(e.CS, true); a != 1 || b != 0 || admin != 0 || all != 1 {
		t.Fatalf("projects seen by alice %d, bob (listall) %d, admin %d, admin listall %d; want 1 0 0 1", a, b, admin, all)
	}
	accounts, err := e.CS.Account.ListAccounts(e.CS.Account.NewListAccountsParams())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range accounts.Accounts {
		if a.Accounttype == 5 {
			t.Fatalf("listAccounts shows the project's account %s", a.Name)
		}
	}
}

// TestProjectResourcesVisibleOnlyWithProjectID: what is created with
// projectid belongs to the project's account and is listed only with that
// projectid or -1, never without it, even with listall.
func TestProjectResourcesVisibleOnlyWithProjectID(t *testing.T) {
	e := newProjectEnv(t)
	p := e.alice.VirtualMachine.NewDeployVirtualMachineParams(e.Small, e.Template, e.Zone)
	p.SetProjectid(e.project.Id)
	p.SetNetworkids([]string{e.Net})
	// NetworkModelImpl.checkNetworkPermissions: not on the admin's network.
	_, err := e.alice.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 531, "Unable to use network with id= "+e.Net+", permission denied")
	p.SetNetworkids([]string{e.ProjectNetwork(t, e.alice, e.project.Id, "alice-net").Id})
	vm, err := e.alice.VirtualMachine.DeployVirtualMachine(p)
	if err != nil {
		t.Fatalf("deploy in project: %v", err)
	}
	if vm.Projectid != e.project.Id || vm.Project != "p1" || vm.Account != "" {
		t.Fatalf("VM owner: projectid %q project %q account %q", vm.Projectid, vm.Project, vm.Account)
	}
	listVMs := func(cs *cloudstack.CloudStackClient, projectID string, listAll bool) (int, error) {
		lp := cs.VirtualMachine.NewListVirtualMachinesParams()
		if projectID != "" {
			lp.SetProjectid(projectID)
		}
		lp.SetListall(listAll)
		l, err := cs.VirtualMachine.ListVirtualMachines(lp)
		if err != nil {
			return 0, err
		}
		return l.Count, nil
	}
	for _, c := range []struct {
		name    string
		CS      *cloudstack.CloudStackClient
		project string
		listAll bool
		want    int
	}{
		{"alice without projectid", e.alice, "", true, 0},
		{"admin with listall", e.CS, "", true, 0},
		{"alice in the project", e.alice, e.project.Id, false, 1},
		{"alice in every project", e.alice, "-1", false, 1},
		{"admin in the project", e.CS, e.project.Id, false, 1},
		{"admin in every project", e.CS, "-1", false, 1},
		{"bob in every project", e.bob, "-1", false, 0},
	} {
		if n, err := listVMs(c.CS, c.project, c.listAll); err != nil || n != c.want {
			t.Errorf("%s: %d VMs, %v; want %d", c.name, n, err, c.want)
		}
	}
	_, err = listVMs(e.bob, e.project.Id, false)
	simtesting.WantAPIError(t, err, 531, "can't access project id=")

	add := e.alice.Project.NewAddAccountToProjectParams(e.project.Id)
	add.SetAccount("bob")
	if _, err := e.alice.Project.AddAccountToProject(add); err != nil {
		t.Fatalf("addAccountToProject: %v", err)
	}
	if n, err := listVMs(e.bob, e.project.Id, false); err != nil || n != 1 {
		t.Fatalf("bob, a member now: %d VMs, %v", n, err)
	}
	bp := e.bob.VirtualMachine.NewListVirtualMachinesParams()
	bp.SetId(vm.Id)
	if l, err := e.bob.VirtualMachine.ListVirtualMachines(bp); err != nil || l.Count != 0 {
		t.Fatalf("bob by id without projectid: %+v, %v", l, err)
	}
}

func TestProjectOwnsVolumesAndTemplates(t *testing.T) {
	e := newProjectEnv(t)
	vp := e.alice.Volume.NewCreateVolumeParams()
	vp.SetDiskofferingid(e.DiskSmall)
	vp.SetZoneid(e.Zone)
	vp.SetName("pdisk")
	vp.SetProjectid(e.project.Id)
	vol, err := e.alice.Volume.CreateVolume(vp)
	if err != nil || vol.Projectid != e.project.Id {
		t.Fatalf("createVolume in project: %+v, %v", vol, err)
	}
	lv := e.alice.Volume.NewListVolumesParams()
	lv.SetName("pdisk")
	if l, err := e.alice.Volume.ListVolumes(lv); err != nil || l.Count != 0 {
		t.Fatalf("project volume listed without projectid: %+v, %v", l, err)
	}
	lv.SetProjectid(e.project.Id)
	if l, err := e.alice.Volume.ListVolumes(lv); err != nil || l.Count != 1 {
		t.Fatalf("project volume with projectid: %+v, %v", l, err)
	}

	up := e.alice.Template.NewGetUploadParamsForTemplateParams("ptpl", "VHD", "XenServer", "ptpl", e.Zone)
	up.SetOstypeid(firstOSType(t, e.Sim))
	up.SetProjectid(e.project.Id)
	if _, err := e.alice.Template.GetUploadParamsForTemplate(up); err != nil {
		t.Fatalf("getUploadParamsForTemplate in project: %v", err)
	}
	templates := func(filter, projectID string) []string {
		lp := e.alice.Template.NewListTemplatesParams(filter)
		if projectID != "" {
			lp.SetProjectid(projectID)
		}
		l, err := e.alice.Template.ListTemplates(lp)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tpl := range l.Templates {
			names = append(names, tpl.Name)
		}
		return names
	}
	if got := templates("self", ""); len(got) != 0 {
		t.Fatalf("self without projectid: %v", got)
	}
	if got := templates("self", e.project.Id); len(got) != 1 || got[0] != "ptpl" {
		t.Fatalf("self in the project: %v", got)
	}
	// The builtin public template stays executable in the project.
	if got := templates("executable", e.project.Id); len(got) != 1 || got[0] == "ptpl" {
		t.Fatalf("executable in the project: %v", got)
	}
}

// firstOSType is the id of the first OS type.
func firstOSType(t *testing.T, s *simtesting.Sim) string {
	t.Helper()
	s.Srv.Mu.Lock()
	defer s.Srv.Mu.Unlock()
	return s.Srv.State.OSTypes[0].ID
}

// TestCLIProjects: Debian's CLI creates a project and lists a project's VMs.
func TestCLIProjects(t *testing.T) {
	e := simtesting.NewVMEnv(t, simulator.Options{})
	out, errOut, err := simtesting.RunCLI(t, e.Sim, simtesting.Secret, "createProject", "name=cli", "displaytext=from the CLI")
	if err != nil || !strings.Contains(out, `"state": "Active"`) {
		t.Fatalf("createProject: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	l, err := e.CS.Project.ListProjects(e.CS.Project.NewListProjectsParams())
	if err != nil || l.Count != 1 {
		t.Fatalf("listProjects: %+v, %v", l, err)
	}
	p := e.Params("")
	p.SetProjectid(l.Projects[0].Id)
	p.SetNetworkids([]string{e.ProjectNetwork(t, e.CS, l.Projects[0].Id, "cli-net").Id})
	e.Deploy(t, p)
	out, errOut, err = simtesting.RunCLI(t, e.Sim, simtesting.Secret, "listVirtualMachines", "listall=true")
	if err != nil || strings.Contains(out, `"count"`) {
		t.Fatalf("listVirtualMachines without projectid: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	out, errOut, err = simtesting.RunCLI(t, e.Sim, simtesting.Secret, "listVirtualMachines", "projectid="+l.Projects[0].Id)
	if err != nil || !strings.Contains(out, `"count": 1`) || !strings.Contains(out, `"project": "cli"`) {
		t.Fatalf("listVirtualMachines projectid: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}

// TestProjectMembershipIsChecked: an account outside a project may neither
// create in it (finalizeOwner) nor add members to it (ModifyProject).
func TestProjectMembershipIsChecked(t *testing.T) {
	e := newProjectEnv(t)
	vp := e.bob.Volume.NewCreateVolumeParams()
	vp.SetDiskofferingid(e.DiskSmall)
	vp.SetZoneid(e.Zone)
	vp.SetProjectid(e.project.Id)
	_, err := e.bob.Volume.CreateVolume(vp)
	simtesting.WantAPIError(t, err, 531, `Account [{"uuid":`)
	simtesting.WantAPIError(t, err, 531, `"accountName":"bob"`)
	simtesting.WantAPIError(t, err, 531, "is unauthorised to use project id=")
	add := e.bob.Project.NewAddAccountToProjectParams(e.project.Id)
	add.SetAccount("bob")
	_, err = e.bob.Project.AddAccountToProject(add)
	simtesting.WantAPIError(t, err, 531, "can't modify project")
	add.SetAccount("nobody")
	_, err = e.alice.Project.AddAccountToProject(add)
	simtesting.WantAPIError(t, err, 431, "Unable to find account name=nobody in specified domain id")

	// checkProjectNetworkPermissions: a project's network serves its
	// members' own VMs too, and nobody else's.
	pnet := e.ProjectNetwork(t, e.alice, e.project.Id, "shared-by-members")
	dp := e.bob.VirtualMachine.NewDeployVirtualMachineParams(e.Small, e.Template, e.Zone)
	dp.SetNetworkids([]string{pnet.Id})
	_, err = e.bob.VirtualMachine.DeployVirtualMachine(dp)
	simtesting.WantAPIError(t, err, 531, "Unable to use network with id= "+pnet.Id+", permission denied")
	if _, err := e.alice.VirtualMachine.DeployVirtualMachine(dp); err != nil {
		t.Fatalf("a member's own VM on the project's network: %v", err)
	}
}

// TestProjectScopesEveryListTheCPIUses: for each list command the CPI
// calls, a row created in a project is listed with its projectid (and
// -1) and not without, even with listall.
func TestProjectScopesEveryListTheCPIUses(t *testing.T) {
	e := simtesting.NewVMEnv(t, simulator.Options{})
	cs := e.CS
	prj, err := cs.Project.CreateProject(cs.Project.NewCreateProjectParams("scoped", "scoped"))
	if err != nil {
		t.Fatal(err)
	}
	pnet := e.ProjectNetwork(t, cs, prj.Id, "pnet")
	if pnet.Projectid != prj.Id || pnet.Project != "scoped" || pnet.Account != "" {
		t.Fatalf("createNetwork in the project: %+v", pnet)
	}
	ap := cs.Address.NewAssociateIpAddressParams()
	ap.SetNetworkid(pnet.Id)
	ap.SetProjectid(prj.Id)
	ip, err := cs.Address.AssociateIpAddress(ap)
	if err != nil {
		t.Fatalf("associateIpAddress: %v", err)
	}
	gp := cs.AffinityGroup.NewCreateAffinityGroupParams("pgroup", "host anti-affinity")
	gp.SetProjectid(prj.Id)
	group, err := cs.AffinityGroup.CreateAffinityGroup(gp)
	if err != nil {
		t.Fatalf("createAffinityGroup: %v", err)
	}
	kp := cs.SSH.NewCreateSSHKeyPairParams("pkey")
	kp.SetProjectid(prj.Id)
	key, err := cs.SSH.CreateSSHKeyPair(kp)
	if err != nil {
		t.Fatalf("createSSHKeyPair: %v", err)
	}
	dp := e.Params("pvm")
	dp.SetNetworkids([]string{pnet.Id})
	dp.SetProjectid(prj.Id)
	dp.SetKeypair("pkey")
	vm := e.Deploy(t, dp)
	if _, err := cs.Resourcetags.CreateTags(cs.Resourcetags.NewCreateTagsParams([]string{vm.Id}, "UserVm", map[string]string{"k": "v"})); err != nil {
		t.Fatalf("createTags: %v", err)
	}
	vp := cs.Volume.NewListVolumesParams()
	vp.SetVirtualmachineid(vm.Id)
	vp.SetProjectid(prj.Id)
	vols, err := cs.Volume.ListVolumes(vp)
	if err != nil || vols.Count == 0 {
		t.Fatalf("the project VM's volumes: %+v, %v", vols, err)
	}
	snap, err := cs.Snapshot.CreateSnapshot(cs.Snapshot.NewCreateSnapshotParams(vols.Volumes[0].Id))
	if err != nil {
		t.Fatalf("createSnapshot: %v", err)
	}
	lp := cs.LoadBalancer.NewCreateLoadBalancerRuleParams("roundrobin", "plb", 80, 80)
	lp.SetPublicipid(ip.Id)
	lb, err := cs.LoadBalancer.CreateLoadBalancerRule(lp)
	if err != nil {
		t.Fatalf("createLoadBalancerRule: %v", err)
	}
	iso, err := e.IsoUploadParams(t, "piso", map[string]string{"projectid": prj.Id})
	if err != nil {
		t.Fatalf("getUploadParamsForIso: %v", err)
	}

	for _, c := range []struct {
		what string
		id   string
		list func(projectID string) ([]string, error)
	}{
		{"networks", pnet.Id, func(pid string) ([]string, error) {
			p := cs.Network.NewListNetworksParams()
			scope(p, pid)
			l, err := cs.Network.ListNetworks(p)
			return idsOf(l.Networks, func(x *cloudstack.Network) string { return x.Id }), err
		}},
		{"public IPs", ip.Id, func(pid string) ([]string, error) {
			p := cs.Address.NewListPublicIpAddressesParams()
			scope(p, pid)
			l, err := cs.Address.ListPublicIpAddresses(p)
			return idsOf(l.PublicIpAddresses, func(x *cloudstack.PublicIpAddress) string { return x.Id }), err
		}},
		{"affinity groups", group.Id, func(pid string) ([]string, error) {
			p := cs.AffinityGroup.NewListAffinityGroupsParams()
			scope(p, pid)
			l, err := cs.AffinityGroup.ListAffinityGroups(p)
			return idsOf(l.AffinityGroups, func(x *cloudstack.AffinityGroup) string { return x.Id }), err
		}},
		{"SSH key pairs", key.Id, func(pid string) ([]string, error) {
			p := cs.SSH.NewListSSHKeyPairsParams()
			scope(p, pid)
			l, err := cs.SSH.ListSSHKeyPairs(p)
			return idsOf(l.SSHKeyPairs, func(x *cloudstack.SSHKeyPair) string { return x.Id }), err
		}},
		{"tags", vm.Id, func(pid string) ([]string, error) {
			p := cs.Resourcetags.NewListTagsParams()
			scope(p, pid)
			l, err := cs.Resourcetags.ListTags(p)
			return idsOf(l.Tags, func(x *cloudstack.Tag) string { return x.Resourceid }), err
		}},
		{"snapshots", snap.Id, func(pid string) ([]string, error) {
			p := cs.Snapshot.NewListSnapshotsParams()
			scope(p, pid)
			l, err := cs.Snapshot.ListSnapshots(p)
			return idsOf(l.Snapshots, func(x *cloudstack.Snapshot) string { return x.Id }), err
		}},
		{"load balancer rules", lb.Id, func(pid string) ([]string, error) {
			p := cs.LoadBalancer.NewListLoadBalancerRulesParams()
			scope(p, pid)
			l, err := cs.LoadBalancer.ListLoadBalancerRules(p)
			return idsOf(l.LoadBalancerRules, func(x *cloudstack.LoadBalancerRule) string { return x.Id }), err
		}},
		{"ISOs", iso.Id, func(pid string) ([]string, error) {
			p := cs.ISO.NewListIsosParams()
			p.SetIsofilter("self")
			scope(p, pid)
			l, err := cs.ISO.ListIsos(p)
			return idsOf(l.Isos, func(x *cloudstack.Iso) string { return x.Id }), err
		}},
	} {
		for _, pid := range []string{"", prj.Id, "-1"} {
			ids, err := c.list(pid)
			if err != nil {
				t.Fatalf("%s with projectid %q: %v", c.what, pid, err)
			}
			if listed := slices.Contains(ids, c.id); listed != (pid != "") {
				t.Errorf("%s with projectid %q: %s listed %v, want %v", c.what, pid, c.id, listed, pid != "")
			}
		}
	}
	// An id lifts SkipProjectResources for an admin (buildACLSearchParameters
	// gets it), except for key pairs, whose search hands it no id.
	byID := cs.VirtualMachine.NewListVirtualMachinesParams()
	byID.SetId(vm.Id)
	if l, err := cs.VirtualMachine.ListVirtualMachines(byID); err != nil || l.Count != 1 {
		t.Errorf("the admin's listVirtualMachines id= without projectid: %+v, %v", l, err)
	}
	keyByID := cs.SSH.NewListSSHKeyPairsParams()
	keyByID.SetId(key.Id)
	if l, err := cs.SSH.ListSSHKeyPairs(keyByID); err != nil || l.Count != 0 {
		t.Errorf("the admin's listSSHKeyPairs id= without projectid: %+v, %v", l, err)
	}
}

// scope sets listall and, when given, projectid.
func scope(p interface {
	SetListall(bool)
	SetProjectid(string)
}, projectID string) {
	p.SetListall(true)
	if projectID != "" {
		p.SetProjectid(projectID)
	}
}

func idsOf[T any](rows []T, id func(T) string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, id(r))
	}
	return out
}
