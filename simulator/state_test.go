package simulator_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

func TestStateSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s1 := simtesting.Start(t, simulator.Options{StatePath: path})
	zone := s1.Call(map[string]string{"command": "listZones"}).Raw
	user := simtesting.Items(t, s1.Call(map[string]string{"command": "listUsers"}).Inner(t, "listusersresponse"), "user")[0]
	keys := s1.Call(map[string]string{"command": "registerUserKeys", "id": user["id"].(string)}).
		Inner(t, "registeruserkeysresponse")["userkeys"].(map[string]any)
	newKey, newSecret := keys["apikey"].(string), keys["secretkey"].(string)
	cs := cloudstack.NewClient(s1.API, newKey, newSecret, false)
	hosts, _ := cs.Host.ListHosts(cs.Host.NewListHostsParams())
	done, err := cs.Host.PrepareHostForMaintenance(cs.Host.NewPrepareHostForMaintenanceParams(hosts.Hosts[0].Id))
	if err != nil {
		t.Fatal(err)
	}
	simtesting.AddFault(t, s1, kernel.Fault{Command: "prepareHostForMaintenance", Pending: true})
	pending, err := cs.Host.PrepareHostForMaintenance(cs.Host.NewPrepareHostForMaintenanceParams(hosts.Hosts[1].Id))
	if err != nil {
		t.Fatal(err)
	}
	s1.Stop()
	if leftovers, _ := filepath.Glob(path + ".tmp*"); len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}

	s2 := simtesting.Serve(t, simulator.Options{StatePath: path})
	cs2 := cloudstack.NewClient(s2.API, newKey, newSecret, false)
	if got := s2.Get(simtesting.Signed(simtesting.V3(map[string]string{"command": "listZones"}, time.Minute), newKey, newSecret)).Raw; got != zone {
		t.Fatalf("zone after restart:\n%s\nbefore:\n%s", got, zone)
	}
	finished, err := cs2.Asyncjob.QueryAsyncJobResult(cs2.Asyncjob.NewQueryAsyncJobResultParams(done.JobID))
	if err != nil || finished.Jobstatus != 1 {
		t.Fatalf("finished job after restart = %+v, %v", finished, err)
	}
	cancelled, err := cs2.Asyncjob.QueryAsyncJobResult(cs2.Asyncjob.NewQueryAsyncJobResultParams(pending.JobID))
	// cleanupLeftOverJobs stores a plain string that reads back as no result.
	if err != nil || cancelled.Jobstatus != 2 || cancelled.Jobresultcode != 530 ||
		len(cancelled.Jobresult) != 0 || cancelled.Jobresulttype != "" || cancelled.Completed == "" {
		t.Fatalf("interrupted job after restart = %+v, %v", cancelled, err)
	}
	s2.Srv.Mu.Lock()
	jobs := s2.Srv.State.Counters[model.KindJob]
	s2.Srv.Mu.Unlock()
	if jobs != 2 {
		t.Fatalf("job counter = %d, want 2", jobs)
	}
	s2.Stop()

	// -admin-keys on restart replaces the stored pair.
	s3 := simtesting.Start(t, simulator.Options{StatePath: path})
	if r := s3.Call(map[string]string{"command": "listZones"}); r.Status != 200 {
		t.Fatalf("preset keys after restart: %s", r.Raw)
	}
}

func TestCorruptStateIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := simulator.New(simulator.Options{StatePath: path}); err == nil {
		t.Fatal("corrupt state accepted")
	}
}

// TestConcurrentClients runs many clients at once; run with -race.
func TestConcurrentClients(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{JobLatency: 1})
	// One host per cluster: CloudStack refuses a second host of a cluster
	// while another is preparing for maintenance (ResourceManagerImpl).
	var hosts []map[string]any
	seen := map[any]bool{}
	for _, h := range simtesting.Items(t, s.Call(map[string]string{"command": "listHosts"}).Inner(t, "listhostsresponse"), "host") {
		if !seen[h["clusterid"]] {
			seen[h["clusterid"]] = true
			hosts = append(hosts, h)
		}
	}
	if len(hosts) < 2 {
		t.Fatalf("hosts in %d clusters: the test needs two", len(hosts))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cs := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false)
			for j := 0; j < 5; j++ {
				if _, err := cs.Zone.ListZones(cs.Zone.NewListZonesParams()); err != nil {
					errs <- err
				}
				if _, err := cs.Host.ListHosts(cs.Host.NewListHostsParams()); err != nil {
					errs <- err
				}
			}
			if i < len(hosts) {
				id := hosts[i]["id"].(string)
				if _, err := cs.Host.PrepareHostForMaintenance(cs.Host.NewPrepareHostForMaintenanceParams(id)); err != nil {
					errs <- err
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestRestartMovesTheVMsOfInterruptedJobs: a restart fails the jobs the
// previous run left pending and puts their VMs back out of the
// transitional state, as AsyncJobManagerImpl.cleanupLeftOverJobs does
// (cleanupResources, cleanupVirtualMachine: OperationFailed): the VM of a
// deploy left Starting is Stopped, a VM left Stopping is Running again.
func TestRestartMovesTheVMsOfInterruptedJobs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	e := simtesting.NewVMEnv(t, simulator.Options{StatePath: path})
	running := e.Deploy(t, e.Params("cpivm-stopping")).Id
	simtesting.AddFault(t, e.Sim, kernel.Fault{Command: "deployVirtualMachine", Pending: true})
	simtesting.AddFault(t, e.Sim, kernel.Fault{Command: "stopVirtualMachine", Pending: true})
	deploy, err := e.Raw.VirtualMachine.DeployVirtualMachine(e.Params("cpivm-starting"))
	if err != nil {
		t.Fatal(err)
	}
	stop, err := e.Raw.VirtualMachine.StopVirtualMachine(e.Raw.VirtualMachine.NewStopVirtualMachineParams(running))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := e.VM(t, deploy.Id).State, e.VM(t, running).State; a != "Starting" || b != "Stopping" {
		t.Fatalf("while the jobs run the VMs are %s and %s", a, b)
	}
	e.Stop()

	e2 := simtesting.NewVMEnv(t, simulator.Options{StatePath: path})
	for vm, want := range map[string]string{deploy.Id: "Stopped", running: "Running"} {
		if got := e2.VM(t, vm).State; got != want {
			t.Errorf("VM %s after the restart is %s, want %s", vm, got, want)
		}
	}
	for _, job := range []string{deploy.JobID, stop.JobID} {
		r, err := e2.Raw.Asyncjob.QueryAsyncJobResult(e2.Raw.Asyncjob.NewQueryAsyncJobResultParams(job))
		if err != nil || r.Jobstatus != 2 || r.Jobresultcode != 530 || len(r.Jobresult) != 0 {
			t.Errorf("interrupted job %s after the restart = %+v, %v", job, r, err)
		}
	}
}
