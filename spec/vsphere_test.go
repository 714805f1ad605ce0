package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
)

// vSphereStemcell publishes bosh.io's vSphere stemcell shape (an OVA; its
// stemcell.MF says vsphere, esxi).
func (e *env) vSphereStemcell() string {
	e.t.Helper()
	var cid string
	e.call("create_stemcell", writeImage(e.t, testimages.OVA()), stemcellMF("vsphere", "esxi", "ova")).ok(e.t).decode(e.t, &cid)
	return cid
}

// agentSettingsFromCDROM reads the VM's ISO with the agent's own CDROM
// settings source and CD-ROM code (tools/cdromsettings).
func (e *env) agentSettingsFromCDROM(vmCID string) map[string]any {
	e.t.Helper()
	return e.settingsFromISO(vmCID, "cdromsettings")
}

// TestVSphereStemcellOnVMwareLifecycle: in a VMware zone, bosh.io's vSphere
// stemcell becomes an OVA template; its VM is deployed for UEFI with ROOT
// and data disks on lsilogic, reads its settings from a CD-ROM ISO through
// the agent's own CDROM code, and the agent's own scsi resolver finds the
// ephemeral and two persistent disks (one attached after another's
// detach) from the CPI's unit hints on the /sys and /dev the simulator's
// view of the guest gives; delete_vm takes the ISO with it.
func TestVSphereStemcellOnVMwareLifecycle(t *testing.T) {
	e := newEnv(t, nil, "-hypervisor", "VMware")
	stemcell := e.vSphereStemcell()
	id, ok := strings.CutPrefix(stemcell, "cdrom-")
	tpls := e.ourTemplates()
	if !ok || len(tpls) != 1 || tpls[0].Id != id || tpls[0].Hypervisor != "VMware" || tpls[0].Format != "OVA" {
		t.Fatalf("create_stemcell %s: %+v", stemcell, tpls)
	}

	vm := e.createVM(stemcell, "10.1.1.83")
	v := e.vm(vm)
	isos := e.isos()
	if len(isos) != 1 || v.Isoid != isos[0].Id || isos[0].Ispublic || v.Boottype != "Uefi" || v.Bootmode != "legacy" ||
		v.Details["rootDiskController"] != "lsilogic" || v.Details["dataDiskController"] != "lsilogic" {
		t.Fatalf("the VM %+v, its ISO %+v", v, isos)
	}
	settings := e.agentSettingsFromCDROM(vm)
	disks, _ := settings["disks"].(map[string]any)
	if settings["agent_id"] != "agent-10.1.1.83" || disks["system"] != "0" || disks["ephemeral"] != "1" {
		t.Fatalf("the agent read %v", settings)
	}

	hints := map[string]any{}
	var cids []string
	attach := func() {
		d := e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, vm)
		cids = append(cids, d)
		var hint any
		e.call("attach_disk", vm, d).ok(t).decode(t, &hint)
		hints[d] = hint
	}
	attach()
	attach()
	e.call("detach_disk", vm, cids[0]).ok(t)
	delete(hints, cids[0])
	attach() // unit 2 again, device 2 again
	if hints[cids[1]] != "3" || hints[cids[2]] != "2" {
		t.Fatalf("hints %v; want the SCSI units 3 and 2 (as chaininfo says), not the device ids", hints)
	}
	found, names := e.scsiResolve(vm, disks["ephemeral"], hints)
	if want := "/dev/" + names["ephemeral"]; found.Ephemeral.Path != want {
		t.Errorf("ephemeral disk found as %+v, want %s", found.Ephemeral, want)
	}
	for cid := range hints {
		if want, got := "/dev/"+names[cid], found.Persistent[cid]; got.Path != want {
			t.Errorf("disk %s (hint %v) found as %+v, want %s", cid, hints[cid], got, want)
		}
	}
	for _, d := range cids[1:] {
		e.call("detach_disk", vm, d).ok(t)
		e.call("delete_disk", d).ok(t)
	}
	e.call("delete_disk", cids[0]).ok(t)
	e.call("delete_vm", vm).ok(t)
	if left := e.isos(); len(left) != 0 {
		t.Fatalf("delete_vm left the ISO: %+v", left[0])
	}
	e.call("delete_stemcell", stemcell).ok(t)
	e.assertNoTemplatesLeft()
}

// scsiResolve lays out the guest's /sys/bus/scsi/devices and /dev from the
// simulator's view (each disk on SCSI host 2, the controller's, at its
// unit; the CD-ROM on the IDE host 1) and runs the agent's scsi resolver
// (tools/devicepaths -type scsi) on the ephemeral disk and the hints. It
// returns what the resolver found and the guest's device of each volume
// ("ephemeral" for the disk of device 1).
func (e *env) scsiResolve(vm string, ephemeral any, hints map[string]any) (out struct {
	Ephemeral  resolved            `json:"ephemeral"`
	Persistent map[string]resolved `json:"persistent"`
}, names map[string]string) {
	e.t.Helper()
	var view struct {
		Disks []struct {
			VolumeID string `json:"volumeid"`
			DeviceID int    `json:"deviceid"`
			Name     string `json:"name"`
			Bus      string `json:"bus"`
		} `json:"disks"`
	}
	if err := json.Unmarshal([]byte(e.metadata(vm, "/sim/disks")), &view); err != nil {
		e.t.Fatal(err)
	}
	root := e.t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
	mk("sys/bus/scsi/devices/1:0:0:0/block/sr0")
	mk("sys/class/scsi_host/host2")
	if err := os.WriteFile(filepath.Join(root, "sys/class/scsi_host/host2/scan"), nil, 0o644); err != nil {
		e.t.Fatal(err)
	}
	names = map[string]string{}
	for _, d := range view.Disks {
		unit, ok := strings.CutPrefix(d.Bus, "scsi0:")
		if !ok || d.Name == "" {
			e.t.Fatalf("the simulator's view of the guest has %+v, not a named disk on SCSI", d)
		}
		mk(fmt.Sprintf("sys/bus/scsi/devices/2:0:%s:0/block/%s", unit, d.Name))
		mk("dev")
		if err := os.WriteFile(filepath.Join(root, "dev", d.Name), nil, 0o644); err != nil {
			e.t.Fatal(err)
		}
		names[d.VolumeID] = d.Name
		if d.DeviceID == 1 {
			names["ephemeral"] = d.Name
		}
	}
	settings, _ := json.Marshal(map[string]any{"disks": map[string]any{"ephemeral": ephemeral, "persistent": hints}})
	cmd := exec.Command(tool(e.t, "devicepaths"), "-root", root, "-type", "scsi")
	cmd.Stdin = bytes.NewReader(settings)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil || json.Unmarshal(stdout, &out) != nil {
		e.t.Fatalf("devicepaths: %v\n%s\n%s", err, stdout, stderr.String())
	}
	return out, names
}

// A zone without VMware takes no vSphere stemcell: refused before anything
// is uploaded, naming the zone's hypervisors.
func TestVSphereStemcellOutsideVMwareIsRefused(t *testing.T) {
	e := newEnv(t, nil, "-hypervisor", "XenServer")
	r := e.call("create_stemcell", writeImage(t, testimages.OVA()), stemcellMF("vsphere", "esxi", "ova")).
		failed(t, "CloudError", "zone ")
	if !strings.Contains(r.Error.Message, "no VMware cluster") || !strings.Contains(r.Error.Message, "(XenServer)") {
		t.Fatalf("the refusal does not name the zone's hypervisors: %s", r.Error.Message)
	}
	if calls := e.calls(); calls["getUploadParamsForTemplate"]+calls["registerTemplate"] != 0 {
		t.Fatalf("a refused stemcell reached CloudStack: %v", calls)
	}
}
