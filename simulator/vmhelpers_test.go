package simulator

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// vmEnv is a simulator with the ids VM tests need and cloudstack-go clients:
// cs waits for jobs, raw returns job ids.
type vmEnv struct {
	*testSim
	cs, raw                          *cloudstack.CloudStackClient
	zone, small, medium, custom, net string
	template                         string
	diskSmall, diskCustom            string
}

func newVMEnv(t *testing.T, opts Options) *vmEnv {
	t.Helper()
	s := startSim(t, opts)
	e := &vmEnv{testSim: s, cs: cloudstack.NewAsyncClient(s.api, testKey, testSecret, false), raw: s.client()}
	s.srv.Mu.Lock()
	st := s.srv.State
	e.zone, e.net = st.Zones[0].ID, st.Networks[0].ID
	e.small, e.medium, e.custom = st.ServiceOfferings[0].ID, st.ServiceOfferings[1].ID, st.ServiceOfferings[2].ID
	e.diskSmall, e.diskCustom = st.DiskOfferings[0].ID, st.DiskOfferings[3].ID
	s.srv.Mu.Unlock()
	e.template = testTemplateID(t, s.srv)
	return e
}

// params are deployVirtualMachine parameters for a Small Instance VM.
func (e *vmEnv) params(name string) *cloudstack.DeployVirtualMachineParams {
	p := e.cs.VirtualMachine.NewDeployVirtualMachineParams(e.small, e.template, e.zone)
	if name != "" {
		p.SetName(name)
	}
	return p
}

// deploy deploys and waits; it fails the test on errors.
func (e *vmEnv) deploy(t *testing.T, p *cloudstack.DeployVirtualMachineParams) *cloudstack.DeployVirtualMachineResponse {
	t.Helper()
	vm, err := e.cs.VirtualMachine.DeployVirtualMachine(p)
	if err != nil {
		t.Fatalf("deployVirtualMachine: %v", err)
	}
	return vm
}

func (e *vmEnv) vm(t *testing.T, id string) *cloudstack.VirtualMachine {
	t.Helper()
	p := e.cs.VirtualMachine.NewListVirtualMachinesParams()
	p.SetId(id)
	l, err := e.cs.VirtualMachine.ListVirtualMachines(p)
	if err != nil || l.Count != 1 {
		t.Fatalf("listVirtualMachines id=%s: %+v, %v", id, l, err)
	}
	return l.VirtualMachines[0]
}

func (e *vmEnv) volumes(t *testing.T, vmID string) []*cloudstack.Volume {
	t.Helper()
	p := e.cs.Volume.NewListVolumesParams()
	p.SetVirtualmachineid(vmID)
	l, err := e.cs.Volume.ListVolumes(p)
	if err != nil {
		t.Fatal(err)
	}
	return l.Volumes
}

// addNetwork adds a second isolated guest network to the state (there is no
// createNetwork yet).
func (e *vmEnv) addNetwork(t *testing.T, name, cidr, gateway string) string {
	t.Helper()
	e.srv.Mu.Lock()
	defer e.srv.Mu.Unlock()
	st := e.srv.State
	first := st.Networks[0]
	id, internal := st.NewID(model.KindNetwork)
	n := *first
	n.ID, n.InternalID, n.Name, n.DisplayText, n.CIDR, n.Gateway, n.VLAN = id, internal, name, name, cidr, gateway, "101"
	st.Networks = append(st.Networks, &n)
	return id
}

// wantAPIError checks a synchronous CloudStack error as cloudstack-go
// reports it.
func wantAPIError(t *testing.T, err error, code int, text string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %d %q", code, text)
	}
	prefix := fmt.Sprintf("CloudStack API error %d (", code)
	if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), text) {
		t.Fatalf("error %q, want %d containing %q", err, code, text)
	}
}

// wantJobError checks a failed job as cloudstack-go's async client reports
// it: "Undefined error: <jobresult>".
func wantJobError(t *testing.T, err error, code int, text string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want job failure %d %q", code, text)
	}
	raw, ok := strings.CutPrefix(err.Error(), "Undefined error: ")
	var res struct {
		ErrorCode int    `json:"errorcode"`
		ErrorText string `json:"errortext"`
	}
	if !ok || json.Unmarshal([]byte(raw), &res) != nil {
		t.Fatalf("error %q is not a failed job", err)
	}
	if res.ErrorCode != code || !strings.Contains(res.ErrorText, text) {
		t.Fatalf("job failed with %d %q, want %d containing %q", res.ErrorCode, res.ErrorText, code, text)
	}
}

// waitJobDone polls a job with cloudstack-go until it leaves jobstatus 0.
func (e *vmEnv) waitJobDone(t *testing.T, jobID string) *cloudstack.QueryAsyncJobResultResponse {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		j, err := e.raw.Asyncjob.QueryAsyncJobResult(e.raw.Asyncjob.NewQueryAsyncJobResultParams(jobID))
		if err != nil {
			t.Fatal(err)
		}
		if j.Jobstatus != 0 {
			return j
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("job %s still pending", jobID)
	return nil
}

// customParams deploys the Custom offering with the given CPU and memory.
func (e *vmEnv) customParams(name string, cpu, speed, mem int) *cloudstack.DeployVirtualMachineParams {
	p := e.params(name)
	p.SetServiceofferingid(e.custom)
	p.SetDetails(map[string]string{"cpuNumber": fmt.Sprint(cpu), "cpuSpeed": fmt.Sprint(speed), "memory": fmt.Sprint(mem)})
	return p
}
