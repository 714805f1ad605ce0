package vm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// busOf is a volume's diskDeviceBusName from listVolumes' chaininfo.
func (e *vmEnv) busOf(t *testing.T, volID string) string {
	t.Helper()
	p := e.CS.Volume.NewListVolumesParams()
	p.SetId(volID)
	l, err := e.CS.Volume.ListVolumes(p)
	if err != nil || l.Count != 1 {
		t.Fatalf("listVolumes %s: %v %+v", volID, err, l)
	}
	if l.Volumes[0].Chaininfo == "" {
		return ""
	}
	var info struct {
		Bus string `json:"diskDeviceBusName"`
	}
	if err := json.Unmarshal([]byte(l.Volumes[0].Chaininfo), &info); err != nil {
		t.Fatalf("chaininfo %q: %v", l.Volumes[0].Chaininfo, err)
	}
	return info.Bus
}

// vmVolumes are a VM's ROOT and data disk ids, ROOT first.
func (e *vmEnv) vmVolumes(t *testing.T, vmID string) (root, data string) {
	t.Helper()
	p := e.CS.Volume.NewListVolumesParams()
	p.SetVirtualmachineid(vmID)
	l, err := e.CS.Volume.ListVolumes(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range l.Volumes {
		if v.Type == "ROOT" {
			root = v.Id
		} else {
			data = v.Id
		}
	}
	return root, data
}

// With the VM's details putting ROOT and data disks on lsilogic, they get
// SCSI units 0 and 1 at start; hot-attached disks take the next free unit,
// skipping 7, and a freed unit is taken again. Without the details ROOT
// goes on IDE (vmware.root.disk.controller's default), after the CD-ROM.
func TestVMwareDisksTakeSCSIUnits(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{Hypervisor: "VMware"})}
	p := e.Params("cpivm-units")
	p.SetDiskofferingid(e.DiskSmall)
	p.SetDetails(map[string]string{"rootDiskController": "lsilogic", "dataDiskController": "lsilogic"})
	vm := e.Deploy(t, p).Id
	root, data := e.vmVolumes(t, vm)
	if r, d := e.busOf(t, root), e.busOf(t, data); r != "scsi0:0" || d != "scsi0:1" {
		t.Fatalf("ROOT on %q, data disk on %q", r, d)
	}
	var added []string
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		id := e.NewVolume(t, name, e.DiskSmall, 0).Id
		e.AttachVol(t, id, vm)
		added = append(added, e.busOf(t, id))
	}
	if got := strings.Join(added, " "); got != "scsi0:2 scsi0:3 scsi0:4 scsi0:5 scsi0:6 scsi0:8" {
		t.Fatalf("hot-attached disks on %s", got)
	}
	a := e.NewVolume(t, "again", e.DiskSmall, 0).Id
	lst := e.CS.Volume.NewListVolumesParams()
	lst.SetName("b")
	bs, _ := e.CS.Volume.ListVolumes(lst)
	if _, err := e.DetachVol(bs.Volumes[0].Id); err != nil {
		t.Fatal(err)
	}
	e.AttachVol(t, a, vm)
	if bus := e.busOf(t, a); bus != "scsi0:3" {
		t.Fatalf("the disk attached after b's detach is on %q, want b's scsi0:3", bus)
	}

	plain := e.Params("cpivm-ide")
	plain.SetDiskofferingid(e.DiskSmall)
	root, data = e.vmVolumes(t, e.Deploy(t, plain).Id)
	if r, d := e.busOf(t, root), e.busOf(t, data); r != "ide0:1" || d != "scsi0:0" {
		t.Fatalf("without details ROOT on %q, data disk on %q", r, d)
	}
}

// A stopped VM's disks have no bus until it starts.
func TestVMwareDisksOfAStoppedVMHaveNoBus(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{Hypervisor: "VMware"})}
	p := e.Params("cpivm-stopped")
	p.SetStartvm(false)
	root, _ := e.vmVolumes(t, e.Deploy(t, p).Id)
	if bus := e.busOf(t, root); bus != "" {
		t.Fatalf("ROOT of a VM never started on %q", bus)
	}
}

// boottype and bootmode as BaseDeployVMCmd takes them: UEFI needs a
// bootmode, unknown values are refused, and the VM shows Uefi and the mode.
func TestDeployBootTypeAndMode(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{Hypervisor: "VMware"})}
	for _, c := range []struct{ typ, mode, want string }{
		{"UEFI", "", "bootmode must be specified for the VM with boot type: UEFI"},
		{"EFI", "legacy", "Invalid bootType EFI"},
		{"uefi", "fast", "Invalid bootmode: fast"},
	} {
		p := e.Params("cpivm-boot")
		p.SetBoottype(c.typ)
		if c.mode != "" {
			p.SetBootmode(c.mode)
		}
		_, err := e.CS.VirtualMachine.DeployVirtualMachine(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "431") {
			t.Errorf("boottype %q bootmode %q: %v", c.typ, c.mode, err)
		}
	}
	p := e.Params("cpivm-uefi")
	p.SetBoottype(" uefi")
	p.SetBootmode("Legacy")
	vm := e.VM(t, e.Deploy(t, p).Id)
	if vm.Boottype != "Uefi" || vm.Bootmode != "legacy" {
		t.Fatalf("boottype %q bootmode %q", vm.Boottype, vm.Bootmode)
	}
	if plain := e.VM(t, e.Deploy(t, e.Params("cpivm-bios")).Id); plain.Boottype != "Bios" || plain.Bootmode != "legacy" {
		t.Fatalf("default boottype %q bootmode %q", plain.Boottype, plain.Bootmode)
	}
}
