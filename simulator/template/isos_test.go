package template_test

import (
	"bytes"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/configdrive"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// vmEnv is simtesting's VM environment, for this package's own helpers on
// it: &vmEnv{simtesting.NewVMEnv(t, opts)}.
type vmEnv struct{ *simtesting.VMEnv }

// configDriveISO is a CONFIG-2 ISO built by the repository's configdrive
// package, as the CPI uploads it.
func configDriveISO(t *testing.T) []byte {
	t.Helper()
	img, err := configdrive.Build(t.TempDir(), []byte(`{"agent_id":"agent-1"}`), configdrive.MetaData{InstanceID: "vm-1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(img.Path())
	if cerr := img.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// selfISO lists one ISO with isofilter=self; nil when it is not listed.
func (e *vmEnv) selfISO(t *testing.T, id string) *cloudstack.Iso {
	t.Helper()
	p := e.CS.ISO.NewListIsosParams()
	p.SetIsofilter("self")
	p.SetId(id)
	l, err := e.CS.ISO.ListIsos(p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Count == 0 {
		return nil
	}
	return l.Isos[0]
}

// waitISOReady polls listIsos isofilter=self until the ISO is ready.
func (e *vmEnv) waitISOReady(t *testing.T, id string) *cloudstack.Iso {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if iso := e.selfISO(t, id); iso != nil && iso.Isready {
			return iso
		}
	}
	t.Fatalf("ISO %s never became ready", id)
	return nil
}

// stoppedVM deploys a VM with startvm=false.
func (e *vmEnv) stoppedVM(t *testing.T, name string) *cloudstack.DeployVirtualMachineResponse {
	t.Helper()
	p := e.Params(name)
	p.SetStartvm(false)
	return e.Deploy(t, p)
}

func TestGetUploadParamsForIsoShape(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	// CloudStack answers {"postuploadisoresponse":{"getuploadparams":{...}}}.
	r := e.Call(map[string]string{"command": "getUploadParamsForIso", "name": "cfg", "format": "QCOW2", "zoneid": e.Zone})
	inner := r.Inner(t, "postuploadisoresponse")
	params, ok := inner["getuploadparams"].(map[string]any)
	if !ok || params["id"] == "" || params["postURL"] == "" || params["signature"] == "" || params["expires"] == "" {
		t.Fatalf("getUploadParamsForIso answered %s", r.Raw)
	}
	// cloudstack-go v2.19.0's own call reads the answer flat: every field
	// comes back empty (the reason the CPI makes a custom request).
	stock, err := e.CS.ISO.GetUploadParamsForIso(e.CS.ISO.NewGetUploadParamsForIsoParams("ISO", "cfg2", e.Zone))
	if err != nil || stock.Id != "" || stock.PostURL != "" {
		t.Fatalf("stock GetUploadParamsForIso: %+v, %v", stock, err)
	}
	// The format's value is ignored (IsoUploadParams sets ISO); bootable
	// defaults to false, so no OS type is needed.
	iso := e.selfISO(t, params["id"].(string))
	if iso == nil || iso.Format != "ISO" || iso.Bootable || iso.Isready || iso.Status != "NotUploaded" || iso.Ispublic || iso.Hypervisor != "" {
		t.Fatalf("uploaded-to-be ISO = %+v", iso)
	}
}

func TestGetUploadParamsForIsoRefusals(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	if _, err := e.IsoUploadParams(t, "boot", map[string]string{"bootable": "true"}); err == nil ||
		!strings.Contains(err.Error(), "Please pass a valid GuestOS Id") {
		t.Fatalf("bootable without ostypeid: %v", err)
	}
	r := e.Call(map[string]string{"command": "getUploadParamsForIso", "name": "cfg", "format": "ISO", "zoneid": "-1"})
	r.WantError(t, "postuploadisoresponse", 431, 9999, "Invalid zoneid")
	r = e.Call(map[string]string{"command": "getUploadParamsForIso", "name": "cfg", "zoneid": e.Zone})
	r.WantError(t, "postuploadisoresponse", 431, 9999, "Unable to execute API command getuploadparamsforiso due to missing parameter format")
}

func TestISOUploadAttachStartDetachDelete(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	data := configDriveISO(t)
	up, err := e.IsoUploadParams(t, "cfg-vm1", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Under the default isofilter (selfexecutable) a NotUploaded ISO is hidden.
	l, err := e.CS.ISO.ListIsos(e.CS.ISO.NewListIsosParams())
	if err != nil || l.Count != 0 {
		t.Fatalf("default listIsos before upload: %+v, %v", l, err)
	}
	_, err = e.CS.ISO.DeleteIso(e.CS.ISO.NewDeleteIsoParams(up.Id))
	simtesting.WantJobError(t, err, 431, "The iso is either getting uploaded or it may be initiated shortly, please wait for it to be completed")

	vm := e.stoppedVM(t, "cfg-vm1")
	if vm.State != "Stopped" || vm.Hostid != "" {
		t.Fatalf("startvm=false deploy = %s on %q", vm.State, vm.Hostid)
	}
	// attachIso makes no readiness check; the start does.
	att, err := e.CS.ISO.AttachIso(e.CS.ISO.NewAttachIsoParams(up.Id, vm.Id))
	if err != nil || att.Isoid != up.Id || att.Isoname != "cfg-vm1" || att.Isodisplaytext != "cfg-vm1" || att.State != "Stopped" {
		t.Fatalf("attachIso: %+v, %v", att, err)
	}
	_, err = e.CS.VirtualMachine.StartVirtualMachine(e.CS.VirtualMachine.NewStartVirtualMachineParams(vm.Id))
	simtesting.WantJobError(t, err, 530, "Failed to prepare ISO on secondary or cache storage")
	if got := e.VM(t, vm.Id); got.State != "Stopped" || got.Hostid != "" {
		t.Fatalf("after the failed start: %s on %q", got.State, got.Hostid)
	}

	status, text := simtesting.PostImage(t, up, simtesting.UploadHeaders(up), "cfg-vm1.iso", data)
	if status != http.StatusOK || text != "upload successful." {
		t.Fatalf("upload: %d %q", status, text)
	}
	iso := e.waitISOReady(t, up.Id)
	if iso.Size != int64(len(data)) || iso.Physicalsize != int64(len(data)) || iso.Status != "Download Complete" {
		t.Fatalf("ready ISO = %+v", iso)
	}
	// updateIso answers the 4.1-compatible update response under "iso".
	r := e.Call(map[string]string{"command": "updateIso", "id": up.Id, "displaytext": "cfg of vm1, complete"})
	if u := r.Inner(t, "updateisoresponse")["iso"].(map[string]any); u["displaytext"] != "cfg of vm1, complete" ||
		u["bootable"] != false || u["hypervisor"] != "None" {
		t.Fatalf("updateIso: %s", r.Raw)
	}
	// listTemplates never shows ISOs.
	tp := e.CS.Template.NewListTemplatesParams("self")
	tp.SetId(up.Id)
	if tl, err := e.CS.Template.ListTemplates(tp); err != nil || tl.Count != 0 {
		t.Fatalf("listTemplates shows the ISO: %+v, %v", tl, err)
	}

	if _, err := e.CS.VirtualMachine.StartVirtualMachine(e.CS.VirtualMachine.NewStartVirtualMachineParams(vm.Id)); err != nil {
		t.Fatal(err)
	}
	if got := e.VM(t, vm.Id); got.State != "Running" || got.Isoid != up.Id || got.Isodisplaytext != "cfg of vm1, complete" {
		t.Fatalf("started VM = %s iso %q %q", got.State, got.Isoid, got.Isoname)
	}
	if body, status := e.MetadataFetch(t, vm.Id, "sim/iso"); status != 200 || !bytes.Equal([]byte(body), data) {
		t.Fatalf("sim/iso: %d, %d bytes", status, len(body))
	}

	_, err = e.CS.ISO.DeleteIso(e.CS.ISO.NewDeleteIsoParams(up.Id))
	simtesting.WantJobError(t, err, 431, "Unable to delete ISO, as it's used by other instances")
	det, err := e.CS.ISO.DetachIso(e.CS.ISO.NewDetachIsoParams(vm.Id))
	if err != nil || det.Isoid != "" || det.State != "Running" {
		t.Fatalf("detachIso: %+v, %v", det, err)
	}
	_, err = e.CS.ISO.DetachIso(e.CS.ISO.NewDetachIsoParams(vm.Id))
	simtesting.WantJobError(t, err, 431, "The specified instance has no ISO attached to it.")
	if _, status := e.MetadataFetch(t, vm.Id, "sim/iso"); status != 404 {
		t.Fatalf("sim/iso after detach: %d", status)
	}
	if del, err := e.CS.ISO.DeleteIso(e.CS.ISO.NewDeleteIsoParams(up.Id)); err != nil || !del.Success {
		t.Fatalf("deleteIso: %+v, %v", del, err)
	}
	if e.selfISO(t, up.Id) != nil {
		t.Fatal("the deleted ISO is still listed")
	}
}

func TestISOHeldByDestroyedVM(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	up, err := e.IsoUploadParams(t, "cfg-held", nil)
	if err != nil {
		t.Fatal(err)
	}
	if status, text := simtesting.PostImage(t, up, simtesting.UploadHeaders(up), "cfg-held.iso", configDriveISO(t)); status != 200 {
		t.Fatalf("upload: %d %q", status, text)
	}
	e.waitISOReady(t, up.Id)
	vm := e.stoppedVM(t, "cfg-held")
	if _, err := e.CS.ISO.AttachIso(e.CS.ISO.NewAttachIsoParams(up.Id, vm.Id)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CS.VirtualMachine.DestroyVirtualMachine(e.CS.VirtualMachine.NewDestroyVirtualMachineParams(vm.Id)); err != nil {
		t.Fatal(err)
	}
	// A Destroyed VM still holds its ISO (listActiveByIsoId ignores the
	// state), and detachIso refuses a Destroyed VM.
	_, err = e.CS.ISO.DeleteIso(e.CS.ISO.NewDeleteIsoParams(up.Id))
	simtesting.WantJobError(t, err, 431, "Unable to delete ISO, as it's used by other instances")
	_, err = e.CS.ISO.DetachIso(e.CS.ISO.NewDetachIsoParams(vm.Id))
	simtesting.WantJobError(t, err, 431, "Please specify an instance that is either Stopped or Running.")
	_, err = e.CS.ISO.AttachIso(e.CS.ISO.NewAttachIsoParams(up.Id, vm.Id))
	simtesting.WantJobError(t, err, 431, "Please specify an instance that is either Stopped or Running.")
	// Expunged, it no longer counts.
	if _, err := e.CS.VirtualMachine.ExpungeVirtualMachine(e.CS.VirtualMachine.NewExpungeVirtualMachineParams(vm.Id)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CS.ISO.DeleteIso(e.CS.ISO.NewDeleteIsoParams(up.Id)); err != nil {
		t.Fatal(err)
	}
}

func TestISOUploadFormatChecks(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	qcow := testimages.QCOW2(1 << 20)
	for _, c := range []struct{ file, text string }{
		// the content against the upload's file name
		{"cfg.iso", "File type mismatch between the sent file and the actual content. Received: QEMU QCOW"},
		// then against the selected format, ISO (dummy.iso)
		{"cfg.qcow2", "File type mismatch between uploaded file and selected format. Selected file format: ISO. Received: QEMU QCOW"},
	} {
		up, err := e.IsoUploadParams(t, "bad-"+c.file, nil)
		if err != nil {
			t.Fatal(err)
		}
		status, text := simtesting.PostImage(t, up, simtesting.UploadHeaders(up), c.file, qcow)
		if status == 200 || !strings.HasPrefix(text, c.text) {
			t.Fatalf("%s: %d %q", c.file, status, text)
		}
		// The monitor's next poll makes it UploadError, which can be deleted.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if iso := e.selfISO(t, up.Id); iso.Status == "UploadError" || time.Now().After(deadline) {
				break
			}
		}
		if _, err := e.CS.ISO.DeleteIso(e.CS.ISO.NewDeleteIsoParams(up.Id)); err != nil {
			t.Fatalf("%s: deleteIso after the refused upload: %v", c.file, err)
		}
	}
}

func TestAttachIsoRefusals(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.stoppedVM(t, "cfg-refusals")
	_, err := e.CS.ISO.AttachIso(e.CS.ISO.NewAttachIsoParams("0d6f3e4a-5555-4555-8555-555555555555", vm.Id))
	simtesting.WantAPIError(t, err, 431, "Unable to execute API command attachiso due to invalid value. Invalid parameter id value=0d6f3e4a-5555-4555-8555-555555555555 due to incorrect long value format, or entity does not exist or due to incorrect parameter annotation for the field in api cmd class.")
	// A template is not refused by attachIso (no format check); the start is.
	if _, err := e.CS.ISO.AttachIso(e.CS.ISO.NewAttachIsoParams(e.Template, vm.Id)); err != nil {
		t.Fatal(err)
	}
	_, err = e.CS.VirtualMachine.StartVirtualMachine(e.CS.VirtualMachine.NewStartVirtualMachineParams(vm.Id))
	simtesting.WantJobError(t, err, 530, "Failed to prepare ISO on secondary or cache storage")
	// A second attach replaces the first (attachISOToVM sets iso_id).
	up, err := e.IsoUploadParams(t, "cfg-second", nil)
	if err != nil {
		t.Fatal(err)
	}
	att, err := e.CS.ISO.AttachIso(e.CS.ISO.NewAttachIsoParams(up.Id, vm.Id))
	if err != nil || att.Isoid != up.Id || e.VM(t, vm.Id).Isoname != "cfg-second" {
		t.Fatalf("second attachIso: %+v, %v", att, err)
	}
}

func TestRegisterIsoDownloads(t *testing.T) {
	data := configDriveISO(t)
	images := newImageServer(t)
	url := images.add("/cfg.iso", data)
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{AllowLoopbackURLs: true})}
	p := e.CS.ISO.NewRegisterIsoParams("cfg", "cfg", url, e.Zone)
	_, err := e.CS.ISO.RegisterIso(p)
	simtesting.WantAPIError(t, err, 431, "Please pass a valid GuestOS Id") // bootable defaults to true here
	p.SetBootable(false)
	r, err := e.CS.ISO.RegisterIso(p)
	if err != nil || r.Format != "ISO" || r.Bootable {
		t.Fatalf("registerIso: %+v, %v", r, err)
	}
	iso := e.waitISOReady(t, r.Id)
	if iso.Size != int64(len(data)) {
		t.Fatalf("registered ISO = %+v", iso)
	}
	p = e.CS.ISO.NewRegisterIsoParams("bad", "bad", images.URL+"/cfg.qcow2", e.Zone)
	p.SetBootable(false)
	_, err = e.CS.ISO.RegisterIso(p)
	simtesting.WantAPIError(t, err, 431, "Please specify a valid URL. URL:/cfg.qcow2 is an invalid for the format iso")
}

// TestRegisterIsoAllZones: zoneid -1 registers in every zone for the root
// admin only (RegisterIsoCmd.getZoneId, TemplateAdapterBase.prepare).
func TestRegisterIsoAllZones(t *testing.T) {
	images := newImageServer(t)
	url := images.add("/cfg.iso", configDriveISO(t))
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{AllowLoopbackURLs: true})}
	key, secret := simtesting.NewAccount(t, e.Sim, "tenant", 0)
	tenant := cloudstack.NewClient(e.API, key, secret, false)
	p := tenant.ISO.NewRegisterIsoParams("cfg", "cfg", url, "-1")
	p.SetBootable(false)
	_, err := tenant.ISO.RegisterIso(p)
	simtesting.WantAPIError(t, err, 431, "Template registered for 'All zones' can only be owned a Root Admin account. Please select specific zone(s).")
	p = e.CS.ISO.NewRegisterIsoParams("cfg", "cfg", url, "-1")
	p.SetBootable(false)
	r, err := e.CS.ISO.RegisterIso(p)
	if err != nil || !r.CrossZones {
		t.Fatalf("root admin registerIso zoneid=-1: %+v, %v", r, err)
	}
}

func TestCLIListIsos(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	up, err := e.IsoUploadParams(t, "cfg-cli", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, err := simtesting.RunCLI(t, e.Sim, simtesting.Secret, "listIsos", "isofilter=self")
	if err != nil || !strings.Contains(out, `"id": "`+up.Id+`"`) {
		t.Fatalf("listIsos: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	// An independent client sees CloudStack's nested upload parameters.
	out, errOut, err = simtesting.RunCLI(t, e.Sim, simtesting.Secret, "getUploadParamsForIso", "name=cfg-cli2", "format=ISO", "zoneid="+e.Zone)
	if err != nil || !strings.Contains(out, `"getuploadparams"`) || !strings.Contains(out, `"postURL"`) {
		t.Fatalf("getUploadParamsForIso: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	out, errOut, err = simtesting.RunCLI(t, e.Sim, simtesting.Secret, "listIsos", "isofilter=mine")
	if err == nil || !strings.Contains(out+errOut, "No enum constant com.cloud.template.VirtualMachineTemplate.TemplateFilter.mine") {
		t.Fatalf("listIsos isofilter=mine: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}
