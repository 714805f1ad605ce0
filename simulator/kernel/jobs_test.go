package kernel_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

func TestAsyncJobLifecycle(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{JobLatency: 50 * time.Millisecond})
	host := simtesting.FirstHost(t, s)
	start := s.Call(map[string]string{"command": "prepareHostForMaintenance", "id": host["id"].(string)}).
		Inner(t, "preparehostformaintenanceresponse")
	jobID, _ := start["jobid"].(string)
	if jobID == "" || len(start) != 1 {
		t.Fatalf("first answer = %v", start)
	}
	done := simtesting.WaitJob(t, s, jobID)
	if simtesting.Num(done["jobstatus"]) != 1 || simtesting.Num(done["jobresultcode"]) != 0 || done["jobresulttype"] != "object" {
		t.Fatalf("done job = %v", done)
	}
	result := done["jobresult"].(map[string]any)["host"].(map[string]any)
	if result["resourcestate"] != "Maintenance" || result["id"] != host["id"] {
		t.Fatalf("job result = %v", result)
	}
	jobs := s.Call(map[string]string{"command": "listAsyncJobs"}).Inner(t, "listasyncjobsresponse")
	if simtesting.Num(jobs["count"]) != 1 || simtesting.Items(t, jobs, "asyncjobs")[0]["jobid"] != jobID {
		t.Fatalf("listAsyncJobs = %v", jobs)
	}
}

// TestJobWrapperMatchesRecordedResponse compares the finished job's keys
// with the deployVirtualMachine job wrapper cloudstack-go recorded from a
// real CloudStack simulator.
func TestJobWrapperMatchesRecordedResponse(t *testing.T) {
	recorded := recordedDeployJob(t)
	s := simtesting.Start(t, simulator.Options{})
	start := s.Call(map[string]string{"command": "prepareHostForMaintenance", "id": simtesting.FirstHost(t, s)["id"].(string)})
	job := simtesting.QueryJob(t, s, start.Inner(t, "preparehostformaintenanceresponse")["jobid"].(string))
	for key, want := range recorded {
		got, ok := job[key]
		if !ok {
			t.Errorf("missing %q (recorded %v)", key, want)
			continue
		}
		if _, isNum := want.(float64); isNum {
			if _, ok := got.(float64); !ok {
				t.Errorf("%q = %v, want a number", key, got)
			}
		}
	}
	for _, key := range []string{"created", "completed"} {
		if _, err := time.Parse("2006-01-02T15:04:05-0700", job[key].(string)); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
}

func recordedDeployJob(t *testing.T) map[string]any {
	t.Helper()
	dir := simtesting.ModuleDir(t, "github.com/apache/cloudstack-go/v2")
	b, err := os.ReadFile(filepath.Join(dir, "test", "testdata", "VirtualMachineService.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixtures map[string]json.RawMessage
	if err := json.Unmarshal(b, &fixtures); err != nil {
		t.Fatal(err)
	}
	var deploy map[string]map[string]any
	if err := json.Unmarshal(fixtures["deployVirtualMachine"], &deploy); err != nil {
		t.Fatal(err)
	}
	wrapper := deploy["deployvirtualmachineresponse"]
	keys := make([]string, 0, len(wrapper))
	for k := range wrapper {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) < 10 {
		t.Fatalf("recorded wrapper has keys %v", keys)
	}
	return wrapper
}

func TestCloudStackGoAsyncClientWaitsForJob(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{JobLatency: 20 * time.Millisecond})
	cs := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false)
	host := simtesting.FirstHost(t, s)["id"].(string)
	h, err := cs.Host.PrepareHostForMaintenance(cs.Host.NewPrepareHostForMaintenanceParams(host))
	if err != nil || h.Resourcestate != "Maintenance" {
		t.Fatalf("prepareHostForMaintenance = %+v, %v", h, err)
	}
	h2, err := cs.Host.CancelHostMaintenance(cs.Host.NewCancelHostMaintenanceParams(host))
	if err != nil || h2.Resourcestate != "Enabled" {
		t.Fatalf("cancelHostMaintenance = %+v, %v", h2, err)
	}
	// A second cancel fails its job (ResourceManagerImpl.cancelMaintenance).
	_, err = cs.Host.CancelHostMaintenance(cs.Host.NewCancelHostMaintenanceParams(host))
	if err == nil {
		t.Fatal("cancel of an enabled host accepted")
	}
}

func TestPendingJobsDoNotBlockRequests(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{JobLatency: time.Hour})
	host := simtesting.FirstHost(t, s)
	start := time.Now()
	r := s.Call(map[string]string{"command": "prepareHostForMaintenance", "id": host["id"].(string)})
	jobID := r.Inner(t, "preparehostformaintenanceresponse")["jobid"].(string)
	pending := simtesting.QueryJob(t, s, jobID)
	if simtesting.Num(pending["jobstatus"]) != 0 || pending["jobresult"] != nil || pending["completed"] != nil ||
		pending["jobinstanceid"] != host["id"] || pending["jobinstancetype"] != "Host" || time.Since(start) > 5*time.Second {
		t.Fatalf("pending job = %v", pending)
	}
	if state := simtesting.FirstHost(t, s)["resourcestate"]; state != "PrepareForMaintenance" {
		t.Fatalf("host during the job: %v", state)
	}
}
