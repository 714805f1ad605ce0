package vm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/storage"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

type guestView struct {
	Hypervisor string              `json:"hypervisor"`
	Disks      []storage.GuestDisk `json:"disks"`
}

func (e *vmEnv) guestDisks(t *testing.T, vmID string) guestView {
	t.Helper()
	var v guestView
	if err := json.Unmarshal([]byte(e.metadataGet(t, vmID, "sim/disks")), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A VM with its ephemeral disk gets disks a and b (devices 2 and 4); a is
// detached and c attached, taking device 2 again: XenServer names disks by
// device number, the others by the order they appeared (the lowest free
// letter), and KVM links each by its serial.
func TestGuestDiskNamesPerHypervisor(t *testing.T) {
	for _, c := range []struct {
		hypervisor string
		names      []string // ROOT, ephemeral, c (device 2), b (device 4)
	}{
		{"XenServer", []string{"xvda", "xvdb", "xvdc", "xvde"}},
		{"KVM", []string{"vda", "vdb", "vdc", "vdd"}},
		{"VMware", []string{"sda", "sdb", "sdc", "sdd"}},
		{"Simulator", []string{"", "", "", ""}},
	} {
		t.Run(c.hypervisor, func(t *testing.T) {
			e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{Hypervisor: c.hypervisor})}
			vm := e.DataVM(t, "cpivm-disks")
			a := e.NewVolume(t, "a", e.DiskSmall, 0).Id
			b := e.NewVolume(t, "b", e.DiskSmall, 0).Id
			cv := e.NewVolume(t, "c", e.DiskSmall, 0).Id
			e.AttachVol(t, a, vm)
			e.AttachVol(t, b, vm)
			if _, err := e.DetachVol(a); err != nil {
				t.Fatal(err)
			}
			if d := e.AttachVol(t, cv, vm).Deviceid; d != 2 {
				t.Fatalf("c at device %d", d)
			}
			view := e.guestDisks(t, vm)
			if view.Hypervisor != c.hypervisor || len(view.Disks) != 4 {
				t.Fatalf("view %+v", view)
			}
			for i, want := range []struct {
				id     string
				device int
			}{{"", 0}, {"", 1}, {cv, 2}, {b, 4}} {
				d := view.Disks[i]
				if d.DeviceID != want.device || (want.id != "" && d.VolumeID != want.id) || d.Name != c.names[i] {
					t.Errorf("disk %d: %+v, want device %d named %q", i, d, want.device, c.names[i])
				}
				serial := strings.ReplaceAll(d.VolumeID, "-", "")[:20]
				if hasLinks := len(d.Links) == 1 && d.Links[0] == "disk/by-id/virtio-"+serial; hasLinks != (c.hypervisor == "KVM") {
					t.Errorf("disk %d links %v", i, d.Links)
				}
			}
		})
	}
}

func TestGuestDisksOfAnUnknownVMAreNotFound(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	if _, status := e.MetadataFetch(t, "0d6f3e4a-5555-4555-8555-555555555555", "sim/disks"); status != 404 {
		t.Fatalf("status %d", status)
	}
}

// VolumeJoinDaoImpl.newVolumeResponse: path, hypervisor and storage pool
// are for the root admin's view.
func TestVolumePathIsForTheRootAdminOnly(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.DataVM(t, "cpivm-view")
	e.Srv.Mu.Lock()
	defer e.Srv.Mu.Unlock()
	v := e.Srv.State.VolumesOf(vm)[0]
	admin := &kernel.Call{Engine: e.Srv.Engine, State: e.Srv.State, Account: e.Srv.State.Accounts[0]}
	user := &kernel.Call{Engine: e.Srv.Engine, State: e.Srv.State, Account: &model.Account{ID: "u", Type: 0}}
	if full := views.VolumeView(admin, v); full["path"] != v.Path || full["hypervisor"] != "XenServer" || full["storage"] != "PS0" {
		t.Errorf("root admin's view %v", full)
	}
	for _, k := range []string{"path", "hypervisor", "storage", "storagetype"} {
		if got, ok := views.VolumeView(user, v)[k]; ok {
			t.Errorf("a user sees %s = %v", k, got)
		}
	}
}
