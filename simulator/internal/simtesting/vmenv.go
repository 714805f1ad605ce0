package simtesting

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/template"
)

// VMEnv is a simulator with the ids VM tests need and cloudstack-go clients:
// CS waits for jobs, Raw returns job ids.
type VMEnv struct {
	*Sim
	CS, Raw                          *cloudstack.CloudStackClient
	Zone, Small, Medium, Custom, Net string
	Template                         string
	DiskSmall, DiskCustom            string
}

// NewVMEnv starts a simulator and reads the ids of the seeded zone.
func NewVMEnv(t *testing.T, opts simulator.Options) *VMEnv {
	t.Helper()
	s := Start(t, opts)
	e := &VMEnv{Sim: s, CS: cloudstack.NewAsyncClient(s.API, Key, Secret, false), Raw: s.Client()}
	s.Srv.Mu.Lock()
	st := s.Srv.State
	e.Zone, e.Net = st.Zones[0].ID, st.Networks[0].ID
	e.Small, e.Medium, e.Custom = st.ServiceOfferings[0].ID, st.ServiceOfferings[1].ID, st.ServiceOfferings[2].ID
	e.DiskSmall, e.DiskCustom = st.DiskOfferings[0].ID, st.DiskOfferings[3].ID
	s.Srv.Mu.Unlock()
	e.Template = TemplateID(t, s.Srv)
	return e
}

// Params are deployVirtualMachine parameters for a Small Instance VM.
func (e *VMEnv) Params(name string) *cloudstack.DeployVirtualMachineParams {
	p := e.CS.VirtualMachine.NewDeployVirtualMachineParams(e.Small, e.Template, e.Zone)
	if name != "" {
		p.SetName(name)
	}
	return p
}

// Deploy deploys and waits; it fails the test on errors.
func (e *VMEnv) Deploy(t *testing.T, p *cloudstack.DeployVirtualMachineParams) *cloudstack.DeployVirtualMachineResponse {
	t.Helper()
	vm, err := e.CS.VirtualMachine.DeployVirtualMachine(p)
	if err != nil {
		t.Fatalf("deployVirtualMachine: %v", err)
	}
	return vm
}

// VM is a VM as listVirtualMachines shows it.
func (e *VMEnv) VM(t *testing.T, id string) *cloudstack.VirtualMachine {
	t.Helper()
	p := e.CS.VirtualMachine.NewListVirtualMachinesParams()
	p.SetId(id)
	l, err := e.CS.VirtualMachine.ListVirtualMachines(p)
	if err != nil || l.Count != 1 {
		t.Fatalf("listVirtualMachines id=%s: %+v, %v", id, l, err)
	}
	return l.VirtualMachines[0]
}

// Volumes are the volumes of a VM.
func (e *VMEnv) Volumes(t *testing.T, vmID string) []*cloudstack.Volume {
	t.Helper()
	p := e.CS.Volume.NewListVolumesParams()
	p.SetVirtualmachineid(vmID)
	l, err := e.CS.Volume.ListVolumes(p)
	if err != nil {
		t.Fatal(err)
	}
	return l.Volumes
}

// AddNetwork adds a second isolated guest network to the state (there is no
// createNetwork yet).
func (e *VMEnv) AddNetwork(t *testing.T, name, cidr, gateway string) string {
	t.Helper()
	e.Srv.Mu.Lock()
	defer e.Srv.Mu.Unlock()
	st := e.Srv.State
	first := st.Networks[0]
	id, internal := st.NewID(model.KindNetwork)
	n := *first
	n.ID, n.InternalID, n.Name, n.DisplayText, n.CIDR, n.Gateway, n.VLAN = id, internal, name, name, cidr, gateway, "101"
	st.Networks = append(st.Networks, &n)
	return id
}

// WantAPIError checks a synchronous CloudStack error as cloudstack-go
// reports it.
func WantAPIError(t *testing.T, err error, code int, text string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %d %q", code, text)
	}
	prefix := fmt.Sprintf("CloudStack API error %d (", code)
	if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), text) {
		t.Fatalf("error %q, want %d containing %q", err, code, text)
	}
}

// WantJobError checks a failed job as cloudstack-go's async client reports
// it: "Undefined error: <jobresult>".
func WantJobError(t *testing.T, err error, code int, text string) {
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

// WaitJobDone polls a job with cloudstack-go until it leaves jobstatus 0.
func (e *VMEnv) WaitJobDone(t *testing.T, jobID string) *cloudstack.QueryAsyncJobResultResponse {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		j, err := e.Raw.Asyncjob.QueryAsyncJobResult(e.Raw.Asyncjob.NewQueryAsyncJobResultParams(jobID))
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

// CustomParams deploys the Custom offering with the given CPU and memory.
func (e *VMEnv) CustomParams(name string, cpu, speed, mem int) *cloudstack.DeployVirtualMachineParams {
	p := e.Params(name)
	p.SetServiceofferingid(e.Custom)
	p.SetDetails(map[string]string{"cpuNumber": fmt.Sprint(cpu), "cpuSpeed": fmt.Sprint(speed), "memory": fmt.Sprint(mem)})
	return p
}

// TemplateID is the template every deployVirtualMachine test deploys
// from: the seeded builtin template, ready in the seeded zone.
func TemplateID(t *testing.T, s *simulator.Server) string {
	t.Helper()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, tpl := range s.State.Templates {
		if tpl.Name == template.BuiltinTemplateName && tpl.Removed == nil {
			return tpl.ID
		}
	}
	t.Fatal("the simulator has no builtin template")
	return ""
}
