package spec

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// kvmEnv is a simulator whose hosts run KVM (the API-deployed zone
// converted with -hypervisor KVM) and a CPI with its defaults, which give
// bosh.io's OpenStack KVM stemcells a config drive.
func kvmEnv(t testing.TB, edit func(cfg map[string]any), simArgs ...string) *env {
	t.Helper()
	return newEnv(t, edit, append([]string{"-hypervisor", "KVM"}, simArgs...)...)
}

// openStackStemcell publishes a stemcell shaped as bosh.io's OpenStack KVM
// stemcell: its stemcell.MF fields and a tgz of a qcow2 root.img.
func (e *env) openStackStemcell() string {
	e.t.Helper()
	var cid string
	image := writeImage(e.t, testimages.OpenStackTgz(testimages.QCOW2(1<<30)))
	e.call("create_stemcell", image, stemcellMF("openstack", "kvm", "qcow2")).ok(e.t).decode(e.t, &cid)
	return cid
}

// isos lists the ISOs the CPI's account owns (isofilter=self shows them
// before they are ready too).
func (e *env) isos() []*csgo.Iso {
	e.t.Helper()
	c := e.client()
	p := c.ISO.NewListIsosParams()
	p.SetIsofilter("self")
	e.inProject(p)
	l, err := c.ISO.ListIsos(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Isos
}

// agentSettingsFromISO reads the VM's attached ISO back from the simulator
// and has bosh-agent v2.769.0's ConfigDrive source (tools/configdrivesettings,
// with the OpenStack stemcell's sources) read the settings from it.
func (e *env) agentSettingsFromISO(vmCID string) map[string]any {
	e.t.Helper()
	return e.settingsFromISO(vmCID, "configdrivesettings", "-sources", "stemcell")
}

// settingsFromISO hands the VM's ISO to the tools module's command name
// (-iso and args) and returns the settings the agent's code read from it.
func (e *env) settingsFromISO(vmCID, name string, args ...string) map[string]any {
	e.t.Helper()
	iso := filepath.Join(e.t.TempDir(), "drive.iso")
	if err := os.WriteFile(iso, []byte(e.metadata(vmCID, "/sim/iso")), 0o600); err != nil {
		e.t.Fatal(err)
	}
	out, err := exec.Command(tool(e.t, name), append([]string{"-iso", iso}, args...)...).Output()
	if err != nil {
		e.t.Fatalf("the agent could not read the VM's ISO with %s: %v", name, err)
	}
	var read struct {
		Settings map[string]any `json:"settings"`
	}
	if err := json.Unmarshal(out, &read); err != nil {
		e.t.Fatal(err)
	}
	return read.Settings
}

// configDriveBy makes the CPI publish config drive ISOs by upload
// (getUploadParamsForIso and the POST) or from its WebDAV server
// (registerIso, the SSVM's download).
func configDriveBy(publish string) func(cfg map[string]any) {
	return func(cfg map[string]any) {
		section(cfg, "stemcell")["config_drive_publish"] = publish
		if publish == "webdav" {
			section(cfg, "webdav")["listen"] = "127.0.0.1:0"
		}
	}
}

func TestOpenStackKVMStemcellLifecycle(t *testing.T) {
	for _, publish := range []string{"upload", "webdav"} {
		t.Run(publish, func(t *testing.T) {
			openStackKVMStemcellLifecycle(t, kvmEnv(t, configDriveBy(publish)))
		})
	}
}

// openStackKVMStemcellLifecycle is an OpenStack KVM stemcell's VM with its
// config drive, run outside and inside a CloudStack project.
func openStackKVMStemcellLifecycle(t *testing.T, e *env) {
	stemcell := e.openStackStemcell()
	vm := e.createVM(stemcell, "10.1.1.80")

	settings := e.agentSettingsFromISO(vm)
	networks, _ := settings["networks"].(map[string]any)
	disks, _ := settings["disks"].(map[string]any)
	if settings["agent_id"] != "agent-10.1.1.80" || networks["default"] == nil || disks["ephemeral"] == nil {
		t.Fatalf("the agent read %v", settings)
	}
	isos := e.isos()
	if len(isos) != 1 || isos[0].Ispublic || isos[0].Isextractable || !isos[0].Isready {
		t.Fatalf("the VM's ISO: %+v", isos)
	}

	e.configDriveVMEnd(vm, stemcell, func(hint map[string]any) bool {
		path, _ := hint["path"].(string)
		return strings.HasPrefix(path, "/dev/disk/by-id/virtio-")
	})
}

// configDriveVMEnd is the rest of a config drive VM's life: a disk
// attached (its hint as hintOK wants), detached and deleted, then
// delete_vm, which takes the ISO with it, and delete_stemcell.
func (e *env) configDriveVMEnd(vm, stemcell string, hintOK func(hint map[string]any) bool) {
	e.t.Helper()
	disk := e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, vm)
	var hint map[string]any
	e.call("attach_disk", vm, disk).ok(e.t).decode(e.t, &hint)
	if !hintOK(hint) {
		e.t.Fatalf("attach_disk hint %v", hint)
	}
	e.call("detach_disk", vm, disk).ok(e.t)
	e.call("delete_disk", disk).ok(e.t)

	e.call("delete_vm", vm).ok(e.t)
	if left := e.isos(); len(left) != 0 {
		e.t.Fatalf("delete_vm left the ISO: %+v", left[0])
	}
	e.call("delete_stemcell", stemcell).ok(e.t)
}

// BenchmarkConfigDriveCreateVM times create_vm for an OpenStack KVM
// stemcell with its config drive ISO published by upload and by WebDAV,
// against a simulator with CloudStack's default upload.monitoring.interval
// (60 s) and 2 s jobs, with the CPI's default job polling, beside the
// XenServer stemcell's create_vm (user data) in the same run and the same
// job latency, as bench-vm measures it. Run with: make bench-configdrive
func BenchmarkConfigDriveCreateVM(b *testing.B) {
	const latency = 2 * time.Second
	type row struct {
		path  string
		took  time.Duration
		calls []string
	}
	xen := runVMPair(b, latency)
	rows := []row{{"XenServer stemcell, user data", xen.createTook, xen.createCalls}}
	for _, publish := range []string{"upload", "webdav"} {
		took, calls := configDriveCreateVM(b, publish, latency)
		rows = append(rows, row{"OpenStack KVM stemcell, config drive by " + publish, took, calls})
		b.ReportMetric(took.Seconds(), publish+"-s")
		b.ReportMetric(float64(len(calls)), publish+"-calls")
	}
	fmt.Print("\ncreate_vm (one manual network, an ephemeral disk; 2 s jobs, upload.monitoring.interval 60 s, " +
		"100 ms SSVM stages; the CPI's default job polling):\n\n")
	fmt.Println("| stemcell, settings by | create_vm wall time | CloudStack calls |")
	fmt.Println("|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %.1f s | %d: %s |\n", r.path, r.took.Seconds(), len(r.calls), sequence(r.calls))
	}
}

// configDriveCreateVM times one create_vm of an OpenStack KVM stemcell
// whose ISO goes by publish, with the CPI's default job polling.
func configDriveCreateVM(b *testing.B, publish string, latency time.Duration) (time.Duration, []string) {
	e := kvmEnv(b, func(cfg map[string]any) {
		configDriveBy(publish)(cfg)
		delete(section(cfg, "cloudstack"), "job_poll_interval")
		delete(section(cfg, "cloudstack"), "job_poll_max_interval")
	}, "-upload-monitoring-interval", "60s", "-job-latency", latency.String())
	stemcell := e.openStackStemcell()
	e.resetCalls()
	start := time.Now()
	var result []json.RawMessage
	e.call("create_vm", "agent-bench", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.90")},
		[]string{}, boshEnv).ok(b).decode(b, &result)
	return time.Since(start), e.callSequence()
}

// TestOpenStackKVMRefusedISOUpload: the SSVM refuses the ISO's POST.
// CloudStack refuses to delete the NotUploaded ISO until its upload
// monitor's next poll makes it UploadError; create_vm waits for that poll
// (every 100 ms here), deletes the ISO and the VM, and only then answers
// ok_to_retry; the retried create_vm succeeds.
func TestOpenStackKVMRefusedISOUpload(t *testing.T) {
	e := kvmEnv(t, nil)
	stemcell := e.openStackStemcell()
	err := e.sim.Admin.AddFault(simulator.Fault{Command: "upload", Times: 1, ErrorCode: 400, ErrorText: "refused by the test"})
	if err != nil {
		t.Fatal(err)
	}
	e.resetCalls()
	start := time.Now()
	r := e.call("create_vm", "agent-10.1.1.81", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.81")},
		[]string{}, boshEnv).failed(t, "VMCreationFailed", "refused by the test")
	took, calls := time.Since(start), e.sequence()
	if !r.Error.Retry || !strings.Contains(r.Error.Message, "removed what this create_vm had made: config drive ISO") {
		t.Fatalf("the refused upload is not retriable with its ISO removed: %s", r.Error.Message)
	}
	deletes := 0
	for _, c := range calls {
		if c.command == "deleteIso" {
			deletes++
		}
	}
	t.Logf("the failed create_vm: %d CloudStack calls (%d deleteIso), %s", len(calls), deletes, took.Round(10*time.Millisecond))
	if left := e.isos(); len(left) != 0 {
		t.Fatalf("the failed create_vm left ISO %s (%s)", left[0].Name, left[0].Status)
	}
	for _, v := range e.vms() {
		if v.State != "Destroyed" && v.State != "Expunging" {
			t.Errorf("create_vm left VM %s %s", v.Name, v.State)
		}
	}
	vm := e.createVM(stemcell, "10.1.1.81")
	if left := e.isos(); len(left) != 1 {
		t.Fatalf("ISOs after the retry: %d, want only the new VM's", len(left))
	}
	e.call("delete_vm", vm).ok(t)
	if left := e.isos(); len(left) != 0 {
		t.Fatalf("delete_vm left the ISO %s", left[0].Name)
	}
}

func TestDeleteVMWhoseISOWasDeletedByHand(t *testing.T) {
	e := kvmEnv(t, nil)
	stemcell := e.openStackStemcell()
	vm := e.createVM(stemcell, "10.1.1.82")
	c := e.client()
	isos := e.isos()
	if len(isos) != 1 {
		t.Fatalf("ISOs: %+v", isos)
	}
	// By hand: an operator detaches and deletes it.
	if _, err := c.ISO.DetachIso(c.ISO.NewDetachIsoParams(vm)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ISO.DeleteIso(c.ISO.NewDeleteIsoParams(isos[0].Id)); err != nil {
		t.Fatal(err)
	}
	e.call("delete_vm", vm).ok(t)
	e.call("delete_stemcell", stemcell).ok(t)
}
