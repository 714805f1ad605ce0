package simulator_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

func TestFaultTimes(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	simtesting.AddFault(t, s, kernel.Fault{Command: "LISTZONES", Times: 2, ErrorCode: 530, ErrorText: "boom"})
	for i := 0; i < 2; i++ {
		s.Call(map[string]string{"command": "listZones"}).WantError(t, "listzonesresponse", 530, 4250, "boom")
	}
	if r := s.Call(map[string]string{"command": "listZones"}); r.Status != 200 {
		t.Fatalf("third call: %s", r.Raw)
	}
	if rules, _ := s.Admin.Faults(); len(rules) != 0 {
		t.Fatalf("exhausted rule still listed: %+v", rules)
	}
	// Other commands are untouched.
	simtesting.AddFault(t, s, kernel.Fault{Command: "listZones", ErrorCode: 533})
	if r := s.Call(map[string]string{"command": "listPods"}); r.Status != 200 {
		t.Fatalf("listPods: %s", r.Raw)
	}
}

func TestFaultProbabilityOneAndOrder(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	simtesting.AddFault(t, s, kernel.Fault{Command: "*", Probability: 1, ErrorCode: 429, ErrorText: "slow down"})
	simtesting.AddFault(t, s, kernel.Fault{Command: "listZones", ErrorCode: 530}) // never reached: the first rule always fires
	for i := 0; i < 3; i++ {
		s.Call(map[string]string{"command": "listZones"}).WantError(t, "listzonesresponse", 429, 4545, "slow down")
	}
	rules, err := s.Admin.Faults()
	if err != nil || len(rules) != 2 || rules[0].Fired != 3 || rules[1].Fired != 0 {
		t.Fatalf("rules = %+v, %v", rules, err)
	}
	if err := s.Admin.ClearFaults(); err != nil {
		t.Fatal(err)
	}
	if r := s.Call(map[string]string{"command": "listZones"}); r.Status != 200 {
		t.Fatalf("after clear: %s", r.Raw)
	}
}

func TestFaultRaw503(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	simtesting.AddFault(t, s, kernel.Fault{Command: "listZones", Raw: true, ErrorCode: 503})
	r := s.Call(map[string]string{"command": "listZones"})
	if r.Status != 503 || !strings.HasPrefix(r.ContentType, "text/plain") || r.Raw != "503 Service Unavailable" {
		t.Fatalf("%d %q %q", r.Status, r.ContentType, r.Raw)
	}
	simtesting.AddFault(t, s, kernel.Fault{Command: "listZones", Raw: true})
	if _, err := s.Client().Zone.ListZones(&cloudstack.ListZonesParams{}); err == nil {
		t.Fatal("cloudstack-go accepted a raw 503")
	}
}

// TestFaultFailsJob: by default an async command's fault fails its job,
// which queryAsyncJobResult then reports; the family rolls back.
func TestFaultFailsJob(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{JobLatency: 10 * time.Millisecond})
	host := simtesting.FirstHost(t, s)["id"].(string)
	simtesting.AddFault(t, s, kernel.Fault{Command: "prepareHostForMaintenance", ErrorCode: 533, ErrorText: "no capacity"})
	r := s.Call(map[string]string{"command": "prepareHostForMaintenance", "id": host})
	job := simtesting.WaitJob(t, s, r.Inner(t, "preparehostformaintenanceresponse")["jobid"].(string))
	res, _ := job["jobresult"].(map[string]any)
	if simtesting.Num(job["jobstatus"]) != 2 || simtesting.Num(job["jobresultcode"]) != 533 || simtesting.Num(res["errorcode"]) != 533 || res["errortext"] != "no capacity" {
		t.Fatalf("failed job = %v", job)
	}
	if state := simtesting.FirstHost(t, s)["resourcestate"]; state != "Enabled" {
		t.Fatalf("host left in %v", state)
	}
	_, err := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false).Host.PrepareHostForMaintenance(
		&cloudstack.PrepareHostForMaintenanceParams{})
	if err == nil {
		t.Fatal("missing id accepted")
	}
}

func TestFaultRequestStageOnAsyncCommand(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	simtesting.AddFault(t, s, kernel.Fault{Command: "prepareHostForMaintenance", ErrorCode: 533, Stage: kernel.StageRequest})
	s.Call(map[string]string{"command": "prepareHostForMaintenance", "id": simtesting.FirstHost(t, s)["id"].(string)}).
		WantError(t, "preparehostformaintenanceresponse", 533, 4325, kernel.DefaultErrorText)
	if jobs := s.Call(map[string]string{"command": "listAsyncJobs"}); jobs.Raw != `{"listasyncjobsresponse":{}}` {
		t.Fatalf("a job was queued: %s", jobs.Raw)
	}
}

func TestFaultPendingAndDelay(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	simtesting.AddFault(t, s, kernel.Fault{Command: "prepareHostForMaintenance", Pending: true})
	r := s.Call(map[string]string{"command": "prepareHostForMaintenance", "id": simtesting.FirstHost(t, s)["id"].(string)})
	jobID := r.Inner(t, "preparehostformaintenanceresponse")["jobid"].(string)
	time.Sleep(20 * time.Millisecond)
	if simtesting.Num(simtesting.QueryJob(t, s, jobID)["jobstatus"]) != 0 {
		t.Fatal("pending job completed")
	}
	simtesting.AddFault(t, s, kernel.Fault{Command: "listZones", Delay: 150 * time.Millisecond})
	start := time.Now()
	if r := s.Call(map[string]string{"command": "listZones"}); r.Status != 200 || time.Since(start) < 150*time.Millisecond {
		t.Fatalf("delayed call: %d after %s", r.Status, time.Since(start))
	}
}

func TestFaultRulesAreChecked(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	for _, f := range []kernel.Fault{{}, {Command: "listZones"}, {Command: "listZones", ErrorCode: 200},
		{Command: "listZones", ErrorCode: 530, Probability: 2}, {Command: "listZones", ErrorCode: 530, Stage: "later"}} {
		if err := s.Admin.AddFault(f); err == nil {
			t.Errorf("rule %+v accepted", f)
		}
	}
	if _, err := simulator.New(simulator.Options{Faults: []kernel.Fault{{Command: "x"}}}); err == nil {
		t.Error("Options.Faults not checked")
	}
}

func TestFaultJSONDelay(t *testing.T) {
	var f kernel.Fault
	if err := f.UnmarshalJSON([]byte(`{"command":"a","delay":"1.5s","errorcode":530}`)); err != nil || f.Delay != 1500*time.Millisecond {
		t.Fatalf("%+v %v", f, err)
	}
	if err := f.UnmarshalJSON([]byte(`{"command":"a","delay":250}`)); err != nil || f.Delay != 250*time.Millisecond {
		t.Fatalf("%+v %v", f, err)
	}
	b, _ := f.MarshalJSON()
	if !strings.Contains(string(b), `"delay":"250ms"`) {
		t.Fatalf("%s", b)
	}
}

func TestFaultOnLogin(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	simtesting.AddFault(t, s, kernel.Fault{Command: "login", ErrorCode: 530})
	r, _ := login(s, map[string]string{"username": "admin", "password": "password"})
	r.WantError(t, "loginresponse", 530, 4250, kernel.DefaultErrorText)
	if r, _ := login(s, map[string]string{"username": "admin", "password": "password"}); r.Status != 200 {
		t.Fatalf("second login: %s", r.Raw)
	}
}

// A lost answer: the command runs, but the client gets no answer.
func TestFaultLostAnswer(t *testing.T) {
	e := simtesting.NewVMEnv(t, simulator.Options{})
	simtesting.AddFault(t, e.Sim, kernel.Fault{Command: "createVolume", Lost: true})
	// A fresh client: its first request opens a new connection, which Go's
	// transport never replays.
	cs := e.Client()
	if _, err := cs.Volume.CreateVolume(e.VolumeParams("lost-1", e.DiskCustom, 1)); err == nil {
		t.Fatal("createVolume answered despite a lost-answer fault")
	}
	p := cs.Volume.NewListVolumesParams()
	p.SetName("lost-1")
	vols, err := cs.Volume.ListVolumes(p)
	if err != nil {
		t.Fatal(err)
	}
	if vols.Count != 1 {
		t.Fatalf("the command ran %d times, want once", vols.Count)
	}
	if rules, _ := e.Admin.Faults(); len(rules) != 0 {
		t.Fatalf("rule not consumed: %+v", rules)
	}
	if err := e.Admin.AddFault(kernel.Fault{Command: "listZones", Lost: true, ErrorCode: 530}); err == nil {
		t.Fatal("a lost answer with an error code was accepted")
	}
}

// Skip lets a test hit the n-th call of a command, e.g. the second
// createTags of a create_vm.
func TestFaultSkip(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	simtesting.AddFault(t, s, kernel.Fault{Command: "listZones", Skip: 2, ErrorCode: 530})
	for i := 0; i < 2; i++ {
		if r := s.Call(map[string]string{"command": "listZones"}); r.Status != 200 {
			t.Fatalf("call %d: %s", i+1, r.Raw)
		}
	}
	s.Call(map[string]string{"command": "listZones"}).WantError(t, "listzonesresponse", 530, 4250, "")
	if r := s.Call(map[string]string{"command": "listZones"}); r.Status != 200 {
		t.Fatalf("fourth call: %s", r.Raw)
	}
}

// TestClearingTheRulesEndsTheirDelays: a request a rule's delay holds goes
// on once the rules are cleared, so a test can hold a request until it has
// done what must come first.
func TestClearingTheRulesEndsTheirDelays(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	simtesting.AddFault(t, s, kernel.Fault{Command: "listZones", Delay: time.Hour})
	query := s.API + "?" + simtesting.Signed(simtesting.V3(map[string]string{"command": "listZones"}, 10*time.Minute), simtesting.Key, simtesting.Secret).Encode()
	// Registered after simtesting.Start's, so it runs first: a request still held
	// when the test fails goes away before the server closes.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, query, nil)
	answered := make(chan int, 1)
	go func() {
		resp, err := s.HTTP.Client().Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	for fired := false; !fired; time.Sleep(5 * time.Millisecond) { // a rule that has fired its one time is dropped
		rules, err := s.Admin.Faults()
		fired = err == nil && len(rules) == 0
	}
	if err := s.Admin.ClearFaults(); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-answered:
		if code != 200 {
			t.Fatalf("the held request answered %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the held request still waits out its delay after the rules were cleared")
	}
}
