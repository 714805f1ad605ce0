package vm_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// TestStartAndStopRefusals covers the states startVirtualMachine and
// stopVirtualMachine refuse or pass through.
func TestStartAndStopRefusals(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.Deploy(t, e.Params("cpivm-states"))
	internal := e.internalID(t, vm.Id)
	vmText := fmt.Sprintf(`VM instance {"id": "%d", "name": "%s", "uuid": "%s", "type"="User"}`, internal, vm.Instancename, vm.Id)

	_, err := e.CS.VirtualMachine.StartVirtualMachine(e.CS.VirtualMachine.NewStartVirtualMachineParams(vm.Id))
	simtesting.WantJobError(t, err, 431, "The virtual machine "+vm.Id+" (cpivm-states) is already running")

	sp := e.CS.VirtualMachine.NewStopVirtualMachineParams(vm.Id)
	sp.SetForced(true)
	stopped, err := e.CS.VirtualMachine.StopVirtualMachine(sp)
	if err != nil || stopped.State != "Stopped" || stopped.Hostid != "" {
		t.Fatalf("forced stop = %+v, %v", stopped, err)
	}
	// Stopping a stopped VM answers it as it is.
	again, err := e.CS.VirtualMachine.StopVirtualMachine(e.CS.VirtualMachine.NewStopVirtualMachineParams(vm.Id))
	if err != nil || again.State != "Stopped" {
		t.Fatalf("second stop = %+v, %v", again, err)
	}

	// Only a Destroyed VM can be recovered.
	_, err = e.CS.VirtualMachine.RecoverVirtualMachine(e.CS.VirtualMachine.NewRecoverVirtualMachineParams(vm.Id))
	simtesting.WantAPIError(t, err, 431, fmt.Sprintf("Vm with id %d is not in the right state", internal))

	if _, err := e.CS.VirtualMachine.DestroyVirtualMachine(e.CS.VirtualMachine.NewDestroyVirtualMachineParams(vm.Id)); err != nil {
		t.Fatal(err)
	}
	_, err = e.CS.VirtualMachine.StartVirtualMachine(e.CS.VirtualMachine.NewStartVirtualMachineParams(vm.Id))
	simtesting.WantJobError(t, err, 530, "Cannot start "+vmText+" in Destroyed state")
	// advanceStop returns at once for a Destroyed VM.
	if d, err := e.CS.VirtualMachine.StopVirtualMachine(e.CS.VirtualMachine.NewStopVirtualMachineParams(vm.Id)); err != nil || d.State != "Destroyed" {
		t.Fatalf("stop of a destroyed VM = %+v, %v", d, err)
	}
}

// TestStopWithoutHost: a VM not yet placed (Starting during its deploy job)
// cannot be stopped unless forced.
func TestStopWithoutHost(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{JobLatency: 300 * time.Millisecond})}
	r, err := e.Raw.VirtualMachine.DeployVirtualMachine(e.Params("cpivm-placing"))
	if err != nil {
		t.Fatal(err)
	}
	stop, err := e.Raw.VirtualMachine.StopVirtualMachine(e.Raw.VirtualMachine.NewStopVirtualMachineParams(r.Id))
	if err != nil {
		t.Fatal(err)
	}
	j := e.WaitJobDone(t, stop.JobID)
	if j.Jobstatus != 2 || j.Jobresultcode != 530 || !strings.Contains(string(j.Jobresult), "Unable to stop VM instance") {
		t.Fatalf("stop while Starting = %d %d %s", j.Jobstatus, j.Jobresultcode, j.Jobresult)
	}
	e.WaitJobDone(t, r.JobID)
}

func (e *vmEnv) internalID(t *testing.T, vmID string) int64 {
	t.Helper()
	e.Srv.Mu.Lock()
	defer e.Srv.Mu.Unlock()
	vm, ok := model.ByID(e.Srv.State.VMs, vmID)
	if !ok {
		t.Fatalf("no VM %s", vmID)
	}
	return vm.InternalID
}

// TestUpdateVirtualMachineRules: what updateVirtualMachine changes on a
// Running VM, and its refusals, all 530 as UpdateVMCmd rewraps them.
func TestUpdateVirtualMachineRules(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.Deploy(t, e.Params("cpivm-rules"))
	p := e.CS.VirtualMachine.NewUpdateVirtualMachineParams(vm.Id)
	p.SetName("cpivm-renamed")
	p.SetDisplayname("shown")
	p.SetGroup("web")
	p.SetDetails(map[string]string{"keyboard": "us"})
	if _, err := e.CS.VirtualMachine.UpdateVirtualMachine(p); err != nil {
		t.Fatal(err)
	}
	// cloudstack-go reads the answer one level too high (its fields sit under
	// "virtualmachine"), so the VM is read back.
	got := e.VM(t, vm.Id)
	if got.Name != "cpivm-renamed" || got.Displayname != "shown" || got.Group != "web" ||
		got.State != "Running" || got.Details["keyboard"] != "us" {
		t.Fatalf("update of a running VM = %+v", got)
	}
	body := e.rawCall(t, map[string]string{"command": "updateVirtualMachine", "id": vm.Id, "displayname": "raw"})
	if !strings.HasPrefix(body, `{"updatevirtualmachineresponse":{"virtualmachine":{`) || !strings.Contains(body, `"displayname":"raw"`) {
		t.Fatalf("updateVirtualMachine answer %s", body)
	}
	refused := func(edit func(*cloudstack.UpdateVirtualMachineParams), text string) {
		t.Helper()
		p := e.CS.VirtualMachine.NewUpdateVirtualMachineParams(vm.Id)
		edit(p)
		_, err := e.CS.VirtualMachine.UpdateVirtualMachine(p)
		simtesting.WantAPIError(t, err, 530, "Failed to update VM, due to "+text+": ")
	}
	refused(func(p *cloudstack.UpdateVirtualMachineParams) { p.SetName("1-starts-with-a-digit") }, `Invalid name. Vm name can contain ASCII letters 'a' through 'z', the digits '0' through '9', `+
		`and the hyphen ('-'), must be between 1 and 63 characters long, and can't start or end with "-" and can't start with digit`)
	refused(func(p *cloudstack.UpdateVirtualMachineParams) {
		p.SetUserdata("I2Nsb3VkLWNvbmZpZwo=")
		p.SetUserdataid("0b9e0c8e-8f3a-4c1e-9d7e-1f2a3b4c5d6e")
	}, "Both userdata and userdata ID inputs are not allowed, please provide only one")
	refused(func(p *cloudstack.UpdateVirtualMachineParams) { p.SetDetails(map[string]string{"extraconfig": "x"}) },
		"'extraconfig' should not be included in details as key")
	refused(func(p *cloudstack.UpdateVirtualMachineParams) { p.SetIsdynamicallyscalable(true) },
		"Dynamic Scaling cannot be enabled for the VM since its template does not have dynamic scaling enabled")
	refused(func(p *cloudstack.UpdateVirtualMachineParams) { p.SetUserdata("not base64!") }, "User data is not base64 encoded")
	refused(func(p *cloudstack.UpdateVirtualMachineParams) { p.SetHaenable(true) },
		"Can't enable ha for the vm as it's created from the Service offering having HA disabled")

	other := e.Deploy(t, e.Params("cpivm-other"))
	refused(func(p *cloudstack.UpdateVirtualMachineParams) { p.SetInstancename(other.Instancename) },
		"Instance name : "+other.Instancename+" is not unique")

	dp := e.CS.VirtualMachine.NewDestroyVirtualMachineParams(other.Id)
	dp.SetExpunge(true)
	if _, err := e.CS.VirtualMachine.DestroyVirtualMachine(dp); err != nil {
		t.Fatal(err)
	}
	_, err := e.CS.VirtualMachine.UpdateVirtualMachine(e.CS.VirtualMachine.NewUpdateVirtualMachineParams(other.Id))
	simtesting.WantAPIError(t, err, 530, fmt.Sprintf("Failed to update VM, due to unable to find virtual machine with id: %d: ", e.internalID(t, other.Id)))
}

// TestUpdateErrorVM: a VM in Error (its deploy job failed) cannot be updated.
func TestUpdateErrorVM(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	simtesting.AddFault(t, e.Sim, kernel.Fault{Command: "deployVirtualMachine", ErrorCode: 533})
	r, err := e.Raw.VirtualMachine.DeployVirtualMachine(e.Params("cpivm-broken"))
	if err != nil {
		t.Fatal(err)
	}
	if j := e.WaitJobDone(t, r.JobID); j.Jobstatus != 2 {
		t.Fatalf("deploy with a fault = %+v", j)
	}
	_, err = e.CS.VirtualMachine.UpdateVirtualMachine(e.CS.VirtualMachine.NewUpdateVirtualMachineParams(r.Id))
	simtesting.WantAPIError(t, err, 530, fmt.Sprintf("Vm with id %d is not in the right state", e.internalID(t, r.Id)))
}

func TestGetVirtualMachineUserData(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	p := e.Params("cpivm-ud")
	p.SetUserdata("I2Nsb3VkLWNvbmZpZwo")
	vm := e.Deploy(t, p)
	ud, err := e.CS.User.GetVirtualMachineUserData(e.CS.User.NewGetVirtualMachineUserDataParams(vm.Id))
	if err != nil || ud.Virtualmachineid != vm.Id || ud.Userdata != "I2Nsb3VkLWNvbmZpZwo=" {
		t.Fatalf("getVirtualMachineUserData = %+v, %v", ud, err)
	}
	bare := e.Deploy(t, e.Params("cpivm-noud"))
	body := e.rawCall(t, map[string]string{"command": "getVirtualMachineUserData", "virtualmachineid": bare.Id})
	if !strings.Contains(body, `{"getvirtualmachineuserdataresponse":{"virtualmachineuserdata":{"virtualmachineid":"`+bare.Id+`"}}}`) {
		t.Fatalf("without user data: %s", body)
	}
	// The CLI reads the same answer.
	out, errOut, err := simtesting.RunCLI(t, e.Sim, simtesting.Secret, "getVirtualMachineUserData", "virtualmachineid="+vm.Id)
	if err != nil || !strings.Contains(out, `"userdata": "I2Nsb3VkLWNvbmZpZwo="`) {
		t.Fatalf("CLI: %v\n%s\n%s", err, out, errOut)
	}
	dp := e.CS.VirtualMachine.NewDestroyVirtualMachineParams(vm.Id)
	dp.SetExpunge(true)
	if _, err := e.CS.VirtualMachine.DestroyVirtualMachine(dp); err != nil {
		t.Fatal(err)
	}
	_, err = e.CS.User.GetVirtualMachineUserData(e.CS.User.NewGetVirtualMachineUserDataParams(vm.Id))
	simtesting.WantAPIError(t, err, 431, fmt.Sprintf("Unable to find virtual machine with id %d", e.internalID(t, vm.Id)))
}

// rawCall sends a signed GET and returns the body.
func (e *vmEnv) rawCall(t *testing.T, params map[string]string) string {
	t.Helper()
	resp, err := http.Get(e.API + "?" + simtesting.Signed(params, simtesting.Key, simtesting.Secret).Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

func TestListAsyncJobs(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.Deploy(t, e.Params("cpivm-jobs"))
	if _, err := e.CS.VirtualMachine.StopVirtualMachine(e.CS.VirtualMachine.NewStopVirtualMachineParams(vm.Id)); err != nil {
		t.Fatal(err)
	}
	// Another account's job, which the caller sees only with listall.
	_, aid := e.AddTenant(t, "tenant")
	e.Srv.Mu.Lock()
	st := e.Srv.State
	jid, jint := st.NewID(model.KindJob)
	st.Jobs = append(st.Jobs, &model.Job{ID: jid, InternalID: jint, Command: "stopVirtualMachine",
		Cmd: "org.apache.cloudstack.api.command.user.vm.StopVMCmd", AccountID: aid, UserID: st.Users[0].ID,
		Status: kernel.JobPending, Created: time.Now().UTC()})
	e.Srv.Mu.Unlock()

	list := func(edit func(*cloudstack.ListAsyncJobsParams)) []*cloudstack.AsyncJob {
		t.Helper()
		p := e.CS.Asyncjob.NewListAsyncJobsParams()
		if edit != nil {
			edit(p)
		}
		l, err := e.CS.Asyncjob.ListAsyncJobs(p)
		if err != nil {
			t.Fatal(err)
		}
		return l.AsyncJobs
	}
	own := list(nil)
	if len(own) != 2 || own[0].Cmd != "org.apache.cloudstack.api.command.admin.vm.DeployVMCmdByAdmin" ||
		own[1].Jobinstanceid != vm.Id || own[1].Jobinstancetype != "VirtualMachine" || own[1].Jobresulttype != "object" ||
		own[1].Jobstatus != 1 || own[1].Completed == "" || own[1].Account != "admin" || own[1].Domainpath != "ROOT" {
		t.Fatalf("own jobs = %+v", own)
	}
	var result struct {
		VM struct {
			State string `json:"state"`
		} `json:"virtualmachine"`
	}
	if err := json.Unmarshal(own[1].Jobresult, &result); err != nil || result.VM.State != "Stopped" {
		t.Fatalf("stop job result %s", own[1].Jobresult)
	}
	all := list(func(p *cloudstack.ListAsyncJobsParams) { p.SetListall(true) })
	if len(all) != 3 || all[2].Account != "tenant" || all[2].Jobresulttype != "" || all[2].Jobresult != nil || all[2].Completed != "" {
		t.Fatalf("listall = %+v", all)
	}
	if k := list(func(p *cloudstack.ListAsyncJobsParams) { p.SetKeyword("stopvm") }); len(k) != 1 || k[0].Jobinstanceid != vm.Id {
		t.Fatalf("keyword = %+v", k)
	}
	today := time.Now().UTC()
	// The time of day is ignored: "yyyy-MM-dd".
	if s := list(func(p *cloudstack.ListAsyncJobsParams) { p.SetStartdate(today.Format("2006-01-02") + " 23:59:59") }); len(s) != 2 {
		t.Fatalf("startdate today = %+v", s)
	}
	if s := list(func(p *cloudstack.ListAsyncJobsParams) { p.SetStartdate(today.AddDate(0, 0, 1).Format("2006-01-02")) }); len(s) != 0 {
		t.Fatalf("startdate tomorrow = %+v", s)
	}
	// Only a job still executing names its management server, and only such
	// jobs match managementserverid. cloudstack-go's SetManagementserverid
	// panics in toURLValues (a UUID asserted as a string): it is sent raw.
	if own[1].Managementserverid != "" || all[2].Managementserverid == "" {
		t.Fatalf("managementserverid of a finished job %q, of a pending one %q", own[1].Managementserverid, all[2].Managementserverid)
	}
	msid := string(all[2].Managementserverid)
	body := e.rawCall(t, map[string]string{"command": "listAsyncJobs", "managementserverid": msid, "listall": "true"})
	if !strings.Contains(body, `"count":1`) || !strings.Contains(body, jid) {
		t.Fatalf("managementserverid=%s: %s", msid, body)
	}
	other := "6a4c0b8e-1f2d-4e3c-9b5a-7d8e9f0a1b2c"
	body = e.rawCall(t, map[string]string{"command": "listAsyncJobs", "managementserverid": other})
	if !strings.Contains(body, `"errorcode":431`) || !strings.Contains(body, "Invalid parameter managementserverid value="+other) {
		t.Fatalf("managementserverid=%s: %s", other, body)
	}
	if s := list(func(p *cloudstack.ListAsyncJobsParams) { p.SetAccount("tenant") }); len(s) != 1 || s[0].JobID != jid {
		t.Fatalf("account=tenant = %+v", s)
	}
	out, errOut, err := simtesting.RunCLI(t, e.Sim, simtesting.Secret, "listAsyncJobs", "keyword=DeployVM")
	if err != nil || !strings.Contains(out, `"count": 1`) || !strings.Contains(out, `"completed"`) {
		t.Fatalf("CLI: %v\n%s\n%s", err, out, errOut)
	}
}

// TestVMResponseTemplateAndJob: the VM carries its template's name and
// display text, and a pending job's id while one runs on it.
func TestVMResponseTemplateAndJob(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{JobLatency: 300 * time.Millisecond})}
	r, err := e.Raw.VirtualMachine.DeployVirtualMachine(e.Params("cpivm-tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	pending := e.VM(t, r.Id)
	if pending.JobID != r.JobID || pending.Jobstatus != 0 {
		t.Fatalf("while deploying: jobid %q jobstatus %d, want %s 0", pending.JobID, pending.Jobstatus, r.JobID)
	}
	e.WaitJobDone(t, r.JobID)
	vm := e.VM(t, r.Id)
	e.Srv.Mu.Lock()
	tmpl, _ := model.ByID(e.Srv.State.Templates, e.Template)
	e.Srv.Mu.Unlock()
	if vm.Templatename != tmpl.Name || vm.Templatedisplaytext != tmpl.DisplayText || vm.JobID != "" {
		t.Fatalf("VM = template %q %q job %q; want %q %q", vm.Templatename, vm.Templatedisplaytext, vm.JobID, tmpl.Name, tmpl.DisplayText)
	}
}

// TestExpungeThread: a Destroyed VM keeps its address until the expunge
// thread removes it, expunge.delay (x 1.024) after the destroy.
func TestExpungeThread(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{ExpungeInterval: 1, ExpungeDelay: 1})}
	p := e.Params("cpivm-held")
	p.SetIpaddress("10.1.1.40")
	vm := e.Deploy(t, p)
	if _, err := e.CS.VirtualMachine.DestroyVirtualMachine(e.CS.VirtualMachine.NewDestroyVirtualMachineParams(vm.Id)); err != nil {
		t.Fatal(err)
	}
	destroyed := time.Now()
	again := e.Params("cpivm-again")
	again.SetIpaddress("10.1.1.40")
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(again)
	simtesting.WantAPIError(t, err, 533, "Unable to acquire Guest IP address for network")
	for e.StateOf(t, vm.Id) == "Destroyed" {
		if time.Since(destroyed) > 5*time.Second {
			t.Fatal("the expunge thread did not expunge the destroyed VM")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if waited := time.Since(destroyed); waited < 1024*time.Millisecond {
		t.Fatalf("expunged after %s, before expunge.delay", waited)
	}
	if got := e.Deploy(t, again); got.Nic[0].Ipaddress != "10.1.1.40" {
		t.Fatalf("redeploy got %s", got.Nic[0].Ipaddress)
	}
}

// TestUserDataNeedsTheService: on a network whose offering lacks the
// UserData service, deploy refuses user data and keys, the metadata
// service has nothing for the VM, and updating user data fails after
// storing it, as UserVmManagerImpl does.
func TestUserDataNeedsTheService(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	bare := e.AddNetwork(t, "no-userdata", "10.2.2.0/24", "10.2.2.1")
	e.Srv.Mu.Lock()
	st := e.Srv.State
	offering, internal := st.NewID(model.KindNetworkOffering)
	st.NetworkOfferings = append(st.NetworkOfferings, &model.NetworkOffering{ID: offering, InternalID: internal,
		Name: "no-userdata", GuestType: "Isolated", State: "Enabled", Services: map[string][]string{
			"Dhcp": {"VirtualRouter"}, "Dns": {"VirtualRouter"}, "SourceNat": {"VirtualRouter"}}})
	st.Network(bare).OfferingID = offering
	e.Srv.Mu.Unlock()

	p := e.Params("cpivm-nour")
	p.SetNetworkids([]string{bare})
	p.SetUserdata("I2Nsb3VkLWNvbmZpZwo=")
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 431, "Unable to deploy VM as UserData is provided while deploying the VM, but there is no support for UserData service in the default network no-userdata/"+bare+".")

	if _, err := e.CS.SSH.CreateSSHKeyPair(e.CS.SSH.NewCreateSSHKeyPairParams("nour-key")); err != nil {
		t.Fatal(err)
	}
	p = e.Params("cpivm-nour")
	p.SetNetworkids([]string{bare})
	p.SetKeypair("nour-key")
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 431, "Unable to deploy VM as SSH keypair is provided while deploying the VM, but there is no support for UserData service in the default network no-userdata/"+bare)

	e.Srv.Mu.Lock()
	tmpl, _ := model.ByID(e.Srv.State.Templates, e.Template)
	tmpl.PasswordEnabled = true
	e.Srv.Mu.Unlock()
	p = e.Params("cpivm-nour")
	p.SetNetworkids([]string{bare})
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 431, fmt.Sprintf("Unable to deploy VM as template %d is password enabled, but there is no support for UserData service in the default network no-userdata/%s", tmpl.InternalID, bare))
	e.Srv.Mu.Lock()
	tmpl.PasswordEnabled = false
	e.Srv.Mu.Unlock()

	p = e.Params("cpivm-nour")
	p.SetNetworkids([]string{bare})
	vm := e.Deploy(t, p)
	if _, status := e.MetadataFetch(t, vm.Id, "latest/meta-data/instance-id"); status != http.StatusNotFound {
		t.Fatalf("metadata of a VM without the UserData service: %d", status)
	}
	up := e.CS.VirtualMachine.NewUpdateVirtualMachineParams(vm.Id)
	up.SetUserdata("I2Nsb3VkLWNvbmZpZwo=")
	_, err = e.CS.VirtualMachine.UpdateVirtualMachine(up)
	simtesting.WantAPIError(t, err, 530, "Failed to update VM, due to Failed to reset userdata for the virtual machine : ")
	ud, err := e.CS.User.GetVirtualMachineUserData(e.CS.User.NewGetVirtualMachineUserDataParams(vm.Id))
	if err != nil || ud.Userdata != "I2Nsb3VkLWNvbmZpZwo=" {
		t.Fatalf("user data after the failed update = %+v, %v", ud, err)
	}
	if _, status := e.MetadataFetch(t, vm.Id, "latest/user-data"); status != http.StatusNotFound {
		t.Fatalf("user data served without the service: %d", status)
	}
	// On the seeded network the same update reaches the metadata service.
	sp := e.Params("cpivm-withur")
	sp.SetNetworkids([]string{e.Net})
	seeded := e.Deploy(t, sp)
	up = e.CS.VirtualMachine.NewUpdateVirtualMachineParams(seeded.Id)
	up.SetUserdata("I2Nsb3VkLWNvbmZpZwo=")
	if _, err := e.CS.VirtualMachine.UpdateVirtualMachine(up); err != nil {
		t.Fatal(err)
	}
	if got := e.metadataGet(t, seeded.Id, "latest/user-data"); got != "#cloud-config\n" {
		t.Fatalf("user data = %q", got)
	}
}

// TestStartOnGivenHost: a hostid that is not Enabled and Up, or lacks the
// room, fails the job with 431 (allow.deploy.vm.if.deploy.on.given.host.fails
// is false by default).
func TestStartOnGivenHost(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	host := simtesting.FirstHost(t, e.Sim)
	hostID, hostName := host["id"].(string), host["name"].(string)
	p := e.Params("cpivm-given")
	p.SetStartvm(false)
	vm := e.Deploy(t, p)
	if _, err := e.CS.Host.PrepareHostForMaintenance(e.CS.Host.NewPrepareHostForMaintenanceParams(hostID)); err != nil {
		t.Fatal(err)
	}
	sp := e.CS.VirtualMachine.NewStartVirtualMachineParams(vm.Id)
	sp.SetHostid(hostID)
	_, err := e.CS.VirtualMachine.StartVirtualMachine(sp)
	simtesting.WantJobError(t, err, 431, "Unable to deploy the VM as the host: "+hostName+" is not in the right state")
	if s := e.StateOf(t, vm.Id); s != "Stopped" {
		t.Fatalf("state after the refused start: %s", s)
	}
	if _, err := e.CS.Host.CancelHostMaintenance(e.CS.Host.NewCancelHostMaintenanceParams(hostID)); err != nil {
		t.Fatal(err)
	}
	big := e.CustomParams("cpivm-big", 64, 1000, 1024)
	big.SetHostid(hostID)
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(big)
	simtesting.WantJobError(t, err, 431, "host has cpu capability? false, host has capacity? false")
	if started, err := e.CS.VirtualMachine.StartVirtualMachine(sp); err != nil || started.Hostid != hostID {
		t.Fatalf("start on the host = %+v, %v", started, err)
	}
}

// TestTenantView: an account that is not an admin lists only its own jobs,
// and no Destroyed VMs (allow.user.view.destroyed.vm is false).
func TestTenantView(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.Deploy(t, e.Params("cpivm-admins"))
	if _, err := e.CS.VirtualMachine.DestroyVirtualMachine(e.CS.VirtualMachine.NewDestroyVirtualMachineParams(vm.Id)); err != nil {
		t.Fatal(err)
	}
	tenant, _ := e.AddTenant(t, "tenant")
	lp := tenant.VirtualMachine.NewListVirtualMachinesParams()
	lp.SetId(vm.Id)
	if l, err := tenant.VirtualMachine.ListVirtualMachines(lp); err != nil || l.Count != 0 {
		t.Fatalf("a tenant lists a Destroyed VM: %+v, %v", l, err)
	}
	if s := e.StateOf(t, vm.Id); s != "Destroyed" {
		t.Fatalf("the admin sees %q", s)
	}
	jp := tenant.Asyncjob.NewListAsyncJobsParams()
	jp.SetListall(true)
	if l, err := tenant.Asyncjob.ListAsyncJobs(jp); err != nil || l.Count != 0 {
		t.Fatalf("a tenant lists the admin's jobs: %+v, %v", l, err)
	}
}

// TestCLIVMCommands drives stop, start and update with Debian's CLI, which
// polls the jobs itself.
func TestCLIVMCommands(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.Deploy(t, e.Params("cpivm-cli"))
	out, errOut, err := simtesting.RunCLI(t, e.Sim, simtesting.Secret, "stopVirtualMachine", "id="+vm.Id, "forced=true")
	if err != nil || !strings.Contains(out, `"state": "Stopped"`) {
		t.Fatalf("stop: %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = simtesting.RunCLI(t, e.Sim, simtesting.Secret, "startVirtualMachine", "id="+vm.Id)
	if err != nil || !strings.Contains(out, `"state": "Running"`) {
		t.Fatalf("start: %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = simtesting.RunCLI(t, e.Sim, simtesting.Secret, "startVirtualMachine", "id="+vm.Id)
	if err == nil || !strings.Contains(out, "is already running") {
		t.Fatalf("second start: %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = simtesting.RunCLI(t, e.Sim, simtesting.Secret, "updateVirtualMachine", "id="+vm.Id, "name=-bad")
	if err == nil || !strings.Contains(out, "Failed to update VM, due to Invalid name.") {
		t.Fatalf("bad name: %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = simtesting.RunCLI(t, e.Sim, simtesting.Secret, "updateVirtualMachine", "id="+vm.Id, "displayname=from-cli")
	if err != nil || !strings.Contains(out, `"displayname": "from-cli"`) {
		t.Fatalf("update: %v\n%s\n%s", err, out, errOut)
	}
}

// TestTenantMayNotExpunge: with allow.user.expunge.recover.vm false, an
// account that is not an admin may destroy its VM but not expunge or
// recover it; the destroyed VM then keeps its address.
func TestTenantMayNotExpunge(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	tenant, aid := e.AddTenant(t, "tenant")
	p := e.Params("cpivm-tenant")
	p.SetIpaddress("10.1.1.45")
	vm := e.Deploy(t, p)
	e.Srv.Mu.Lock()
	owned, _ := model.ByID(e.Srv.State.VMs, vm.Id)
	owned.AccountID = aid // the tenant's VM
	e.Srv.Mu.Unlock()

	dp := tenant.VirtualMachine.NewDestroyVirtualMachineParams(vm.Id)
	dp.SetExpunge(true)
	_, err := tenant.VirtualMachine.DestroyVirtualMachine(dp)
	simtesting.WantJobError(t, err, 530, "Parameter expunge can be passed by Admin only. Or when the allow.user.expunge.recover.vm key is set.")
	if s := e.StateOf(t, vm.Id); s != "Running" {
		t.Fatalf("state after the refused destroy: %s", s)
	}
	_, err = tenant.VirtualMachine.ExpungeVirtualMachine(tenant.VirtualMachine.NewExpungeVirtualMachineParams(vm.Id))
	simtesting.WantJobError(t, err, 530, "Please destroy vm with specified vmId before expunge")
	if _, err := tenant.VirtualMachine.DestroyVirtualMachine(tenant.VirtualMachine.NewDestroyVirtualMachineParams(vm.Id)); err != nil {
		t.Fatal(err)
	}
	_, err = tenant.VirtualMachine.ExpungeVirtualMachine(tenant.VirtualMachine.NewExpungeVirtualMachineParams(vm.Id))
	simtesting.WantJobError(t, err, 530, "Expunging a vm can only be done by an Admin. Or when the allow.user.expunge.recover.vm key is set.")
	_, err = tenant.VirtualMachine.RecoverVirtualMachine(tenant.VirtualMachine.NewRecoverVirtualMachineParams(vm.Id))
	simtesting.WantAPIError(t, err, 531, "Recovering a vm can only be done by an Admin. Or when the allow.user.expunge.recover.vm key is set.")
	again := e.Params("cpivm-again")
	again.SetIpaddress("10.1.1.45")
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(again)
	simtesting.WantAPIError(t, err, 533, "Unable to acquire Guest IP address for network")
}
