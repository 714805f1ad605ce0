package cloudstack_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

const isoID = "8c0a1b2e-3d4f-4a5b-8c6d-7e8f9a0b1c2d"

// isoCloud answers each command with the next of its bodies (the last
// repeatedly) and records every request's parameters.
type isoCloud struct {
	mu     sync.Mutex
	bodies map[string][]string
	seen   []url.Values
}

func (f *isoCloud) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		cmd := r.Form.Get("command")
		f.mu.Lock()
		defer f.mu.Unlock()
		f.seen = append(f.seen, r.Form)
		bodies := f.bodies[cmd]
		if len(bodies) == 0 {
			t.Errorf("unexpected command %s", cmd)
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		if len(bodies) > 1 {
			f.bodies[cmd] = bodies[1:]
		}
		_, _ = w.Write([]byte(bodies[0]))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (f *isoCloud) sent(command string) url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, v := range f.seen {
		if v.Get("command") == command {
			return v
		}
	}
	return nil
}

// jobDone and jobFailed are queryAsyncJobResult's answers for an ended job.
func jobDone(result string) string {
	return `{"queryasyncjobresultresponse":{"jobid":"j1","jobstatus":1,"jobresultcode":0,"jobresult":` + result + `}}`
}

func jobFailed(code int, text string) string {
	b, _ := json.Marshal(map[string]any{"errorcode": code, "cserrorcode": 4350, "errortext": text})
	return `{"queryasyncjobresultresponse":{"jobid":"j1","jobstatus":2,"jobresultcode":530,"jobresult":` + string(b) + `}}`
}

func isoRow(status, downloadState string, ready bool) string {
	b, _ := json.Marshal(map[string]any{"listisosresponse": map[string]any{"count": 1, "iso": []map[string]any{{
		"id": isoID, "name": "vm-1", "displaytext": "d", "zoneid": "z1", "status": status, "isready": ready,
		"format": "ISO", "downloaddetails": []map[string]string{{"datastore": "nfs://s", "downloadState": downloadState}},
	}}}})
	return string(b)
}

// TestISOUploadParamsUnwrapsGetUploadParams feeds the answer CloudStack
// gives (GetUploadParamsResponse's object name "getuploadparams" under the
// command's response), which cloudstack-go v2.19.0's own call reads as
// empty, and the flat shape, which must be refused rather than read as a
// template with no id.
func TestISOUploadParamsUnwrapsGetUploadParams(t *testing.T) {
	f := &isoCloud{bodies: map[string][]string{"getUploadParamsForIso": {
		`{"postuploadisoresponse":{"getuploadparams":{"id":"` + isoID + `","postURL":"https://ssvm/upload/x",` +
			`"metadata":"m","expires":"2026-12-01T18:00:00.000+0000","signature":"s"}}}`,
		`{"postuploadisoresponse":{"id":"` + isoID + `","postURL":"https://ssvm/upload/x"}}`,
	}}}
	c, _ := newClient(t, f.serve(t).URL, nil)
	up, err := c.ISOUploadParams(cloudstack.ISOSpec{Name: "vm-1", DisplayText: "config drive", ZoneID: "z1"})
	if err != nil || up.TemplateID != isoID || up.PostURL != "https://ssvm/upload/x" || up.Signature != "s" ||
		up.Metadata != "m" || up.Expires == "" {
		t.Fatalf("upload params %+v, %v", up, err)
	}
	sent := f.sent("getUploadParamsForIso")
	for key, want := range map[string]string{"name": "vm-1", "displaytext": "config drive", "zoneid": "z1",
		"format": "ISO", "bootable": "false", "ispublic": "false", "isextractable": "false"} {
		if got := sent.Get(key); got != want {
			t.Errorf("getUploadParamsForIso %s=%q, want %q", key, got, want)
		}
	}
	if _, err := c.ISOUploadParams(cloudstack.ISOSpec{Name: "vm-1", ZoneID: "z1"}); err == nil {
		t.Error("an answer without getuploadparams was taken")
	}
}

func TestRegisterISOSendsPrivateDataISO(t *testing.T) {
	f := &isoCloud{bodies: map[string][]string{"registerIso": {
		`{"registerisoresponse":{"count":1,"iso":[{"id":"` + isoID + `","name":"vm-1","isready":false}]}}`,
		`{"registerisoresponse":{"count":0}}`,
	}}}
	c, _ := newClient(t, f.serve(t).URL, nil)
	id, err := c.RegisterISO(cloudstack.ISOSpec{Name: "vm-1", DisplayText: "d", ZoneID: "z1"}, "https://dav/vm-1.iso")
	if err != nil || id != isoID {
		t.Fatalf("registerIso: %q, %v", id, err)
	}
	sent := f.sent("registerIso")
	if sent.Get("url") != "https://dav/vm-1.iso" || sent.Get("bootable") != "false" || sent.Get("ispublic") != "false" ||
		sent.Get("isextractable") != "false" {
		t.Errorf("registerIso sent %v", sent)
	}
	if _, err := c.RegisterISO(cloudstack.ISOSpec{Name: "vm-1", ZoneID: "z1"}, "https://dav/vm-1.iso"); err == nil {
		t.Error("an answer without an ISO was taken")
	}
}

// TestFindISOListsOwnISOsInAnyState: the default isofilter
// (selfexecutable) hides an ISO until it is ready.
func TestFindISOListsOwnISOsInAnyState(t *testing.T) {
	f := &isoCloud{bodies: map[string][]string{"listIsos": {
		isoRow("NotUploaded", "NOT_UPLOADED", false),
		`{"listisosresponse":{}}`,
		`{"errorresponse":{"errorcode":431,"cserrorcode":4350,"errortext":"Unable to execute API command listisos due to invalid value. Invalid parameter id value=` + isoID + ` due to incorrect long value format, or entity does not exist or due to incorrect parameter annotation for the field in api cmd class."}}`,
	}}}
	c, _ := newClient(t, f.serve(t).URL, nil)
	iso, err := c.FindISO(isoID)
	if err != nil || iso == nil || iso.ID != isoID || iso.IsReady || iso.DownloadStates[0] != "NOT_UPLOADED" {
		t.Fatalf("FindISO: %+v, %v", iso, err)
	}
	if got := f.sent("listIsos"); got.Get("isofilter") != "self" || got.Get("id") != isoID {
		t.Errorf("listIsos sent %v", got)
	}
	for range 2 {
		if iso, err := c.FindISO(isoID); iso != nil || err != nil {
			t.Errorf("an absent ISO read as %+v, %v", iso, err)
		}
	}
}

func TestOwnISOsComparesNamesExactly(t *testing.T) {
	body, _ := json.Marshal(map[string]any{"listisosresponse": map[string]any{"count": 2, "iso": []map[string]any{
		{"id": "a", "name": "vm-1"}, {"id": "b", "name": "vm-10"}}}})
	f := &isoCloud{bodies: map[string][]string{"listIsos": {string(body)}}}
	c, _ := newClient(t, f.serve(t).URL, nil)
	named, err := c.OwnISOs("vm-1")
	if err != nil || len(named) != 1 || named[0].ID != "a" {
		t.Fatalf("OwnISOs: %+v, %v", named, err)
	}
	all, err := c.OwnISOs("")
	if err != nil || len(all) != 2 {
		t.Fatalf("OwnISOs(\"\"): %+v, %v", all, err)
	}
}

// TestWaitISOFollowsTheUploadMonitor runs the states an upload goes
// through (ImageStoreUploadMonitorImpl): NotUploaded, UploadInProgress,
// then ready; or UploadError; or no change until the timeout.
func TestWaitISOFollowsTheUploadMonitor(t *testing.T) {
	f := &isoCloud{bodies: map[string][]string{"listIsos": {
		isoRow("NotUploaded", "NOT_UPLOADED", false),
		isoRow("UploadInProgress", "UPLOAD_IN_PROGRESS", false),
		isoRow("Download Complete", "DOWNLOADED", true),
	}}}
	c, _ := newClient(t, f.serve(t).URL, nil)
	if err := c.WaitISO(isoID, time.Second); err != nil {
		t.Fatalf("WaitISO: %v", err)
	}
	f = &isoCloud{bodies: map[string][]string{"listIsos": {
		isoRow("UploadInProgress", "UPLOAD_IN_PROGRESS", false), isoRow("UploadError", "UPLOAD_ERROR", false),
	}}}
	c, _ = newClient(t, f.serve(t).URL, nil)
	var failed *cloudstack.ISOFailedError
	if err := c.WaitISO(isoID, time.Second); !errors.As(err, &failed) || !strings.Contains(err.Error(), "UploadError") {
		t.Errorf("a failed upload: %v", err)
	}
	f = &isoCloud{bodies: map[string][]string{"listIsos": {isoRow("NotUploaded", "NOT_UPLOADED", false)}}}
	c, _ = newClient(t, f.serve(t).URL, nil)
	if err := c.WaitISO(isoID, 100*time.Millisecond); !cloudstack.IsISOTimeout(err) || !strings.Contains(err.Error(), "NotUploaded") {
		t.Errorf("a pending upload past the timeout: %v", err)
	}
	f = &isoCloud{bodies: map[string][]string{"listIsos": {`{"listisosresponse":{}}`}}}
	c, _ = newClient(t, f.serve(t).URL, nil)
	if err := c.WaitISO(isoID, time.Second); err == nil || cloudstack.IsISOTimeout(err) {
		t.Errorf("an ISO gone while waiting: %v", err)
	}
}

// TestISOJobsAndTheirRefusals runs attachIso, detachIso and deleteIso as
// async jobs, with the refusals TemplateManagerImpl words.
func TestISOJobsAndTheirRefusals(t *testing.T) {
	accepted := `{"%sresponse":{"jobid":"j1"}}`
	f := &isoCloud{bodies: map[string][]string{
		"attachIso": {strings.Replace(accepted, "%s", "attachiso", 1)},
		"detachIso": {strings.Replace(accepted, "%s", "detachiso", 1)},
		"deleteIso": {strings.Replace(accepted, "%s", "deleteiso", 1)},
		"updateIso": {`{"updateisoresponse":{"iso":{"id":"` + isoID + `","displaytext":"x"}}}`},
		"listVirtualMachines": {`{"listvirtualmachinesresponse":{"count":1,"virtualmachine":[{"id":"` + vmUUID +
			`","name":"vm-1","state":"Stopped","isoid":"` + isoID + `"}]}}`},
		"queryAsyncJobResult": {
			jobDone(`{"virtualmachine":{"id":"` + vmUUID + `","isoid":"` + isoID + `"}}`),
			jobDone(`{"virtualmachine":{"id":"` + vmUUID + `"}}`),
			jobDone(`{"success":true}`),
			jobFailed(431, "The specified instance has no ISO attached to it."),
			jobFailed(431, "Unable to delete ISO, as it's used by other instances"),
			jobFailed(431, "The iso is either getting uploaded or it may be initiated shortly, please wait for it to be completed"),
		},
	}}
	c, _ := newClient(t, f.serve(t).URL, nil)
	if err := c.AttachISO(isoID, vmUUID); err != nil {
		t.Fatal(err)
	}
	if got := f.sent("attachIso"); got.Get("id") != isoID || got.Get("virtualmachineid") != vmUUID {
		t.Errorf("attachIso sent %v", got)
	}
	if err := c.DetachISO(vmUUID); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteISO(isoID); err != nil {
		t.Fatal(err)
	}
	if err := c.DetachISO(vmUUID); !cloudstack.IsNoISOAttached(err) || cloudstack.IsISOInUse(err) {
		t.Errorf("detach with none attached: %v", err)
	}
	if err := c.DeleteISO(isoID); !cloudstack.IsISOInUse(err) || cloudstack.IsISOBusy(err) {
		t.Errorf("delete while attached: %v", err)
	}
	if err := c.DeleteISO(isoID); !cloudstack.IsISOBusy(err) || cloudstack.IsISOInUse(err) {
		t.Errorf("delete while uploading: %v", err)
	}
	if err := c.SetISODisplayText(isoID, "x"); err != nil || f.sent("updateIso").Get("displaytext") != "x" {
		t.Errorf("updateIso: %v", err)
	}
	vm, err := c.FindVM(vmUUID)
	if err != nil || vm.ISOID != isoID {
		t.Errorf("the VM's ISO: %+v, %v", vm, err)
	}
}

func TestDeployStoppedSendsStartVMFalseAndStartVMStarts(t *testing.T) {
	f := &isoCloud{bodies: map[string][]string{
		"deployVirtualMachine": {`{"deployvirtualmachineresponse":{"id":"` + vmUUID + `","jobid":"j1"}}`},
		"startVirtualMachine":  {`{"startvirtualmachineresponse":{"jobid":"j2"}}`},
		"queryAsyncJobResult": {
			jobDone(`{"virtualmachine":{"id":"` + vmUUID + `","state":"Stopped"}}`),
			jobDone(`{"virtualmachine":{"id":"` + vmUUID + `","state":"Running"}}`),
		},
	}}
	c, _ := newClient(t, f.serve(t).URL, nil)
	id, vm, err := c.DeployVM(cloudstack.DeploySpec{Name: "vm-1", ZoneID: "z1", ServiceOfferingID: "o", TemplateID: "t",
		Stopped: true})
	if err != nil || id != vmUUID || vm.State != "Stopped" {
		t.Fatalf("deploy: %q %+v %v", id, vm, err)
	}
	if got := f.sent("deployVirtualMachine").Get("startvm"); got != "false" {
		t.Errorf("startvm=%q", got)
	}
	if err := c.StartVM(vmUUID); err != nil || f.sent("startVirtualMachine").Get("id") != vmUUID {
		t.Errorf("start: %v", err)
	}
}

func TestDeployStartedSendsNoStartVM(t *testing.T) {
	f := &isoCloud{bodies: map[string][]string{
		"deployVirtualMachine": {`{"deployvirtualmachineresponse":{"id":"` + vmUUID + `","jobid":"j1"}}`},
		"queryAsyncJobResult":  {jobDone(`{"virtualmachine":{"id":"` + vmUUID + `","state":"Running"}}`)},
	}}
	c, _ := newClient(t, f.serve(t).URL, nil)
	if _, _, err := c.DeployVM(cloudstack.DeploySpec{Name: "vm-1", ZoneID: "z1", ServiceOfferingID: "o", TemplateID: "t"}); err != nil {
		t.Fatal(err)
	}
	if got := f.sent("deployVirtualMachine"); got.Has("startvm") {
		t.Errorf("a started deploy sent startvm=%q", got.Get("startvm"))
	}
}

func TestZoneHypervisors(t *testing.T) {
	f := &isoCloud{bodies: map[string][]string{"listHypervisors": {
		`{"listhypervisorsresponse":{"count":2,"hypervisor":[{"name":"XenServer"},{"name":"KVM"}]}}`}}}
	c, _ := newClient(t, f.serve(t).URL, nil)
	hvs, err := c.ZoneHypervisors("z1")
	if err != nil || len(hvs) != 2 || hvs[1] != hypervisor.KVM || f.sent("listHypervisors").Get("zoneid") != "z1" {
		t.Fatalf("hypervisors %v, %v", hvs, err)
	}
}

func TestISOMarkCarriesAgentAndConfigDrive(t *testing.T) {
	until := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	m := marks.Template{Director: "d", Agent: "agent-1", Incomplete: true, Owner: "1@h", Until: until}
	got, ok := cloudstack.ISO{DisplayText: m.Apply("BOSH config drive of VM vm-1")}.Mark()
	if !ok || got != m {
		t.Errorf("ISO mark read back as %+v (%v), want %+v", got, ok, m)
	}
	tm := marks.Template{Director: "d", ConfigDrive: true}
	if got, ok := (cloudstack.Template{DisplayText: tm.Apply("BOSH stemcell")}).Mark(); !ok || !got.ConfigDrive {
		t.Errorf("template mark read back as %+v (%v)", got, ok)
	}
	if _, ok := (cloudstack.ISO{DisplayText: "someone's ISO"}).Mark(); ok {
		t.Error("an unmarked ISO read as the CPI's")
	}
}
