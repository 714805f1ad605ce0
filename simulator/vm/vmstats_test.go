package vm_test

import (
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

var vmStatFields = []string{"cpuused", "networkkbsread", "networkkbswrite", "diskkbsread", "diskkbswrite",
	"diskioread", "diskiowrite", "memorykbs", "memoryintfreekbs", "memorytargetkbs"}

func (e *vmEnv) vmRow(t *testing.T, id string) map[string]any {
	t.Helper()
	return simtesting.Items(t, e.Call(map[string]string{"command": "listVirtualMachines", "id": id}).
		Inner(t, "listvirtualmachinesresponse"), "virtualmachine")[0]
}

// TestVMStatisticsAbsentBeforeTheFirstCollection: UserVmJoinDaoImpl shows
// statistics only once StatsCollector has some for the VM; its first run is
// DEFAULT_INITIAL_DELAY after start.
func TestVMStatisticsAbsentBeforeTheFirstCollection(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{VMStatsInterval: time.Hour, VMStatsInitialDelay: time.Hour})}
	vm := e.Deploy(t, e.Params("cpivm-nostats"))
	row := e.vmRow(t, vm.Id)
	for _, f := range vmStatFields {
		if _, ok := row[f]; ok {
			t.Errorf("%s before the first collection: %v", f, row[f])
		}
	}
	if row["state"] != "Running" {
		t.Fatalf("vm = %v", row)
	}
}

// TestVMStatisticsOnceCollectedWhileRunning: each collection records the
// Running VMs' statistics (the mock agent's: 10 % CPU, 32768 and 16384 KB
// on the network, accumulated); a VM that was Stopped at every collection
// has none.
func TestVMStatisticsOnceCollectedWhileRunning(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{VMStatsInterval: 10 * time.Millisecond, VMStatsInitialDelay: 10 * time.Millisecond})}
	stopped := e.Params("cpivm-stopped")
	stopped.SetStartvm(false)
	idle := e.Deploy(t, stopped)
	running := e.Deploy(t, e.Params("cpivm-stats"))
	var row map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for {
		row = e.vmRow(t, running.Id)
		if simtesting.Num(row["networkkbsread"]) >= 2*32768 { // two collections since both VMs exist
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no second collection after 10s: %v", row)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, f := range vmStatFields {
		if _, ok := row[f]; !ok {
			t.Errorf("no %s once collected", f)
		}
	}
	if row["cpuused"] != "10%" || int(simtesting.Num(row["networkkbsread"]))%32768 != 0 ||
		simtesting.Num(row["networkkbswrite"]) != simtesting.Num(row["networkkbsread"])/2 || row["diskkbsread"] != 0.0 {
		t.Fatalf("statistics = %v", row)
	}
	if _, ok := e.vmRow(t, idle.Id)["cpuused"]; ok {
		t.Fatal("a VM Stopped at every collection has statistics")
	}
}

// TestVMStatsIntervalIsTheSetting: -vm-stats-interval presets
// vm.stats.interval (Config.VmStatsInterval, milliseconds).
func TestVMStatsIntervalIsTheSetting(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{VMStatsInterval: 1500 * time.Millisecond})
	if c := simtesting.ListSettings(t, s.Client(), "vm.stats.interval"); len(c) != 1 || c[0].Value != "1500" || c[0].Defaultvalue != "60000" {
		t.Fatalf("vm.stats.interval = %+v", c)
	}
}

// TestAccountsCountRunningAndStoppedVMs: account_view's runningVms and
// stoppedVms (account_vmstats_view), for accounts and projects alike; the
// domain shows its counts and limits (DomainJoinDaoImpl.setResourceLimits).
func TestAccountsCountRunningAndStoppedVMs(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	stopped := e.Params("cpivm-off")
	stopped.SetStartvm(false)
	e.Deploy(t, stopped)
	e.Deploy(t, e.Params("cpivm-on"))
	accts, err := e.CS.Account.ListAccounts(e.CS.Account.NewListAccountsParams())
	if err != nil || accts.Count != 1 || accts.Accounts[0].Vmrunning != 1 || accts.Accounts[0].Vmstopped != 1 ||
		accts.Accounts[0].Vmtotal != 2 {
		t.Fatalf("listAccounts = %+v, %v", accts, err)
	}
	p, err := e.CS.Project.CreateProject(e.CS.Project.NewCreateProjectParams("p", "p"))
	if err != nil {
		t.Fatal(err)
	}
	inProject := e.Params("cpivm-project")
	inProject.SetProjectid(p.Id)
	inProject.SetNetworkids([]string{e.ProjectNetwork(t, e.CS, p.Id, "pnet").Id})
	e.Deploy(t, inProject)
	lp := e.CS.Project.NewListProjectsParams()
	lp.SetId(p.Id)
	projects, err := e.CS.Project.ListProjects(lp)
	if err != nil || projects.Count != 1 || projects.Projects[0].Vmrunning != 1 || projects.Projects[0].Vmstopped != 0 {
		t.Fatalf("listProjects = %+v, %v", projects, err)
	}
	row := simtesting.Items(t, e.Call(map[string]string{"command": "listProjects", "id": p.Id}).Inner(t, "listprojectsresponse"), "project")[0]
	if _, ok := row["projecttotal"]; ok {
		t.Fatalf("a project shows project counts: %v", row)
	}
	domains, err := e.CS.Domain.ListDomains(e.CS.Domain.NewListDomainsParams())
	if err != nil || domains.Count != 1 || domains.Domains[0].Vmtotal != 3 || domains.Domains[0].Vmlimit != "Unlimited" ||
		domains.Domains[0].Cpuavailable != "Unlimited" {
		t.Fatalf("listDomains = %+v, %v", domains, err)
	}
}

// TestManagementServersMetricsForTheRootAdminOnly: ListMgmtsMetricsCmd is
// authorized for the Admin role only; another role's call is the role
// checker's 432 (ApiServer.commandAvailable: UnavailableCommandException).
func TestManagementServersMetricsForTheRootAdminOnly(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	ms, err := cs.Management.ListManagementServersMetrics(cs.Management.NewListManagementServersMetricsParams())
	if err != nil || ms.Count != 1 || ms.ManagementServersMetrics[0].Version != "4.22.0.0" ||
		ms.ManagementServersMetrics[0].State != "Up" || ms.ManagementServersMetrics[0].Agentscount == 0 {
		t.Fatalf("listManagementServersMetrics = %+v, %v", ms, err)
	}
	p := cs.Management.NewListManagementServersMetricsParams()
	p.SetKeyword("4.20")
	if none, err := cs.Management.ListManagementServersMetrics(p); err != nil || none.Count != 0 {
		t.Fatalf("keyword 4.20 = %+v, %v", none, err)
	}
	key, secret := simtesting.NewAccount(t, s, "tenant", 0)
	tenant := cloudstack.NewClient(s.API, key, secret, false)
	_, err = tenant.Management.ListManagementServersMetrics(tenant.Management.NewListManagementServersMetricsParams())
	simtesting.WantAPIError(t, err, 432, "The API [listManagementServersMetrics] does not exist or is not available for the account tenant.")
}
