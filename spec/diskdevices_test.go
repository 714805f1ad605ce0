package spec

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
)

// guestDisks is the simulator's view of a VM's disks as the guest names
// them (/metadata/<vm>/sim/disks).
type guestDisks struct {
	Hypervisor string `json:"hypervisor"`
	Disks      []struct {
		VolumeID string   `json:"volumeid"`
		DeviceID int      `json:"deviceid"`
		Name     string   `json:"name"`
		Links    []string `json:"links"`
	} `json:"disks"`
}

// stemcellFor publishes a stemcell CloudStack runs on the hypervisor:
// bosh.io's OpenStack stemcell shape on KVM and, when openStack says so,
// on XenServer.
func (e *env) stemcellFor(hypervisor string, openStack bool) string {
	e.t.Helper()
	var cid string
	switch {
	case openStack && hypervisor == "XenServer":
		return e.openStackXenStemcell("qcow2")
	case hypervisor == "KVM":
		e.call("create_stemcell", writeImage(e.t, testimages.QCOW2(1<<30)), stemcellMF("openstack", "kvm", "qcow2")).ok(e.t).decode(e.t, &cid)
	case hypervisor == "VMware":
		e.call("create_stemcell", writeImage(e.t, testimages.OVA()), stemcellMF("vsphere", "esxi", "ova")).ok(e.t).decode(e.t, &cid)
	default:
		return e.stemcell()
	}
	return cid
}

// TestTheRealAgentFindsEveryDisk attaches two persistent disks to a VM
// with an ephemeral disk, then migrates one (attach a third, detach the
// first, as the director's disk migration does), lays out the /dev the
// guest would have from the simulator's view, and lets bosh-agent
// v2.769.0's own virtio resolver (tools/devicepaths) find the ephemeral
// disk from the user data or the config drive and each persistent disk
// from its attach_disk hint. On KVM the guest's letters are swapped among
// the hot-plugged disks: the kernel names them in probe order, which the
// hint must not depend on. bosh.io's OpenStack stemcell on XenServer gets
// the path alone, which the resolver's mapped fallback takes.
func TestTheRealAgentFindsEveryDisk(t *testing.T) {
	resolver := tool(t, "devicepaths")
	for _, c := range []struct {
		name, hypervisor string
		openStack        bool
	}{{"XenServer", "XenServer", false}, {"XenServer/OpenStack stemcell", "XenServer", true}, {"KVM", "KVM", true},
		{"VMware", "VMware", false}} {
		hypervisor := c.hypervisor
		t.Run(c.name, func(t *testing.T) {
			var cfg func(map[string]any)
			if hypervisor == "VMware" {
				// Without the CD-ROM: the virtio hints of an agent that reads
				// user data. bosh.io's vSphere stemcell, with its CD-ROM and
				// unit hints, is TestVSphereStemcellOnVMwareLifecycle's.
				cfg = func(c map[string]any) { section(c, "stemcell")["config_drive"] = false }
			}
			e := newEnv(t, cfg, "-hypervisor", hypervisor)
			vm := e.createVM(e.stemcellFor(hypervisor, c.openStack), "10.1.1.75")
			hints := map[string]diskHint{}
			// Each disk is created and attached in turn, as the director does.
			var disks []string
			attach := func() {
				d := e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, vm)
				disks = append(disks, d)
				hints[d] = e.attachDisk(vm, d)
			}
			attach()
			attach()
			e.call("detach_disk", vm, disks[0]).ok(t)
			delete(hints, disks[0])
			attach() // device 2 again
			if c.openStack && hypervisor == "XenServer" {
				if h1, h2 := hints[disks[1]], hints[disks[2]]; h1 != (diskHint{Path: "/dev/xvde"}) || h2 != (diskHint{Path: "/dev/xvdc"}) {
					t.Fatalf("hints %+v; want the paths alone, of devices 4 (3 is the CD-ROM's) and 2", hints)
				}
			} else if hints[disks[1]].VolumeID != "4" || hints[disks[2]].VolumeID != "2" {
				t.Fatalf("device ids %+v; want 4 for the second disk (3 is the CD-ROM's), 2 for the third", hints)
			}

			var view guestDisks
			if err := json.Unmarshal([]byte(e.metadata(vm, "/sim/disks")), &view); err != nil || view.Hypervisor != hypervisor {
				t.Fatalf("the guest's disks: %+v, %v", view, err)
			}
			names := map[string]string{} // volume → guest device
			ephemeral := ""
			for _, d := range view.Disks {
				names[d.VolumeID] = d.Name
				if d.DeviceID == 1 {
					ephemeral = d.VolumeID
				}
			}
			if hypervisor == "KVM" {
				names[disks[1]], names[disks[2]] = names[disks[2]], names[disks[1]]
			}
			root := guestDevTree(t, view, names)

			settingsEphemeral := e.ephemeralHint(vm, c.openStack)
			found := runResolver(t, resolver, root, settingsEphemeral, hints)
			if want := "/dev/" + names[ephemeral]; found.Ephemeral.Path != want {
				t.Errorf("ephemeral disk %+v found as %+v, want %s", settingsEphemeral, found.Ephemeral, want)
			}
			for cid, hint := range hints {
				if want, got := "/dev/"+names[cid], found.Persistent[cid]; got.Path != want {
					t.Errorf("disk %s (hint %+v) found as %+v, want %s", cid, hint, got, want)
				}
			}
		})
	}
}

// ephemeralHint is the ephemeral disk of the settings the VM's agent
// reads: for bosh.io's OpenStack stemcell, which the CPI's defaults give a
// config drive, from the VM's ISO through the agent's own ConfigDrive
// source; otherwise from the user data.
func (e *env) ephemeralHint(vm string, openStack bool) any {
	e.t.Helper()
	if openStack {
		disks, _ := e.agentSettingsFromISO(vm)["disks"].(map[string]any)
		return disks["ephemeral"]
	}
	var userData struct {
		Disks struct {
			Ephemeral any `json:"ephemeral"`
		} `json:"disks"`
	}
	if err := json.Unmarshal([]byte(e.metadata(vm, "/latest/user-data")), &userData); err != nil {
		e.t.Fatal(err)
	}
	return userData.Disks.Ephemeral
}

// guestDevTree lays out the guest's /dev under a temporary directory:
// each disk a plain file under its name, udev's links relative, as udev
// makes them.
func guestDevTree(t *testing.T, view guestDisks, names map[string]string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "dev/disk/by-id"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range view.Disks {
		name := names[d.VolumeID]
		if name == "" {
			t.Fatalf("the simulator names no device for %+v", d)
		}
		if err := os.WriteFile(filepath.Join(root, "dev", name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, link := range d.Links {
			target, _ := filepath.Rel(filepath.Dir(filepath.Join("/dev", link)), filepath.Join("/dev", name))
			if err := os.Symlink(target, filepath.Join(root, "dev", link)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

type resolved struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// runResolver runs tools/devicepaths on the settings the agent would hold:
// the ephemeral disk from user data, the persistent disks' hints.
func runResolver(t *testing.T, bin, root string, ephemeral any, hints map[string]diskHint) (out struct {
	Ephemeral  resolved            `json:"ephemeral"`
	Persistent map[string]resolved `json:"persistent"`
}) {
	t.Helper()
	settings, _ := json.Marshal(map[string]any{"disks": map[string]any{"ephemeral": ephemeral, "persistent": hints}})
	cmd := exec.Command(bin, "-root", root, "-mapped-timeout", "1s")
	cmd.Stdin = bytes.NewReader(settings)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil || json.Unmarshal(stdout, &out) != nil {
		t.Fatalf("devicepaths: %v\n%s\n%s", err, stdout, stderr.String())
	}
	return out
}
