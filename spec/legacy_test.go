package spec

import (
	"fmt"
	"testing"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// earlierVM is a VM made the earlier CPIs' way, through CloudStack's API:
// deployed as cpivm-<uuid>, then a cpi-ephemeral-disk-<uuid> volume created
// and attached, and a cpi-disk-<uuid> persistent disk attached.
type earlierVM struct {
	name, ephemeral, persistent string // names, which are the earlier CPIs' CIDs
	ephemeralID, persistentID   string
}

// earlierVM deploys one; n makes its names its own.
func (e *env) earlierVM(template string, n int) earlierVM {
	e.t.Helper()
	suffix := fmt.Sprintf("0b8bd2a8-2c54-4f53-a84b-%012d", n)
	v := earlierVM{name: "cpivm-" + suffix, ephemeral: "cpi-ephemeral-disk-" + suffix, persistent: "cpi-disk-" + suffix}
	c := e.client()
	zone := e.lookup(c.Zone.GetZoneID(zoneName))
	p := c.VirtualMachine.NewDeployVirtualMachineParams(e.lookup(c.ServiceOffering.GetServiceOfferingID("Small Instance")),
		template, zone)
	p.SetName(v.name)
	p.SetNetworkids([]string{e.lookup(c.Network.GetNetworkID("guest-network"))})
	vm, err := c.VirtualMachine.DeployVirtualMachine(p)
	if err != nil {
		e.t.Fatal(err)
	}
	custom := e.lookup(c.DiskOffering.GetDiskOfferingID("Custom"))
	v.ephemeralID = e.attachedVolume(c, v.ephemeral, zone, custom, vm.Id)
	v.persistentID = e.attachedVolume(c, v.persistent, zone, custom, vm.Id)
	return v
}

func (e *env) lookup(id string, _ int, err error) string {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *env) attachedVolume(c *csgo.CloudStackClient, name, zone, offering, vmID string) string {
	e.t.Helper()
	p := c.Volume.NewCreateVolumeParams()
	p.SetName(name)
	p.SetZoneid(zone)
	p.SetDiskofferingid(offering)
	p.SetSize(1)
	vol, err := c.Volume.CreateVolume(p)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := c.Volume.AttachVolume(c.Volume.NewAttachVolumeParams(vol.Id, vmID)); err != nil {
		e.t.Fatal(err)
	}
	return vol.Id
}

// removedWithItsEphemeral: the VM and its ephemeral volume are gone (or
// going), the persistent disk is there, detached.
func (e *env) removedWithItsEphemeral(v earlierVM) {
	e.t.Helper()
	for _, vm := range e.vms() {
		if vm.Name == v.name && vm.State != "Destroyed" && vm.State != "Expunging" {
			e.t.Errorf("VM %s is still %s", v.name, vm.State)
		}
	}
	kept := false
	for _, vol := range e.volumes() {
		switch vol.Id {
		case v.ephemeralID:
			e.t.Errorf("ephemeral volume %s is still there (%s)", v.ephemeral, vol.State)
		case v.persistentID:
			kept = true
			if vol.Virtualmachineid != "" && vol.Vmstate != "Destroyed" {
				e.t.Errorf("persistent disk %s is still attached to VM %s (%s)", v.persistent, vol.Virtualmachineid, vol.Vmstate)
			}
		}
	}
	if !kept {
		e.t.Errorf("delete_vm deleted the persistent disk %s", v.persistent)
	}
}

// TestEarlierCPIsVMKeepsWorkingAndGoesWithItsEphemeralDisk: a VM, disks and
// a template the earlier CPIs made keep working under their CIDs (names);
// get_disks lists only the persistent disk; delete_vm removes the VM and
// its ephemeral volume, keeps the persistent disk, and succeeds again.
func TestEarlierCPIsVMKeepsWorkingAndGoesWithItsEphemeralDisk(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	v := e.earlierVM(stemcell, 1)

	if r := e.call("has_vm", v.name).ok(t); string(r.Result) != "true" {
		t.Fatalf("has_vm %s = %s", v.name, r.Result)
	}
	if r := e.call("has_disk", v.persistent).ok(t); string(r.Result) != "true" {
		t.Fatalf("has_disk %s = %s", v.persistent, r.Result)
	}
	if got := e.getDisks(v.name); len(got) != 1 || got[0] != v.persistentID {
		t.Fatalf("get_disks %s = %v; want only the persistent disk %s", v.name, got, v.persistentID)
	}
	e.call("reboot_vm", v.name).ok(t)
	e.call("detach_disk", v.name, v.persistent).ok(t)
	e.call("attach_disk", v.name, v.persistent).ok(t)
	e.call("snapshot_disk", v.persistent, map[string]any{}).ok(t)

	e.call("delete_vm", v.name).ok(t)
	e.removedWithItsEphemeral(v)
	e.call("delete_vm", v.name).ok(t)
	if r := e.call("has_vm", v.name).ok(t); string(r.Result) != "false" {
		t.Fatalf("has_vm %s after delete_vm = %s", v.name, r.Result)
	}
}

// TestDeleteVMOfAnEarlierCPIsVMOnlyTakesItsEphemeralDisk: our own VM with a
// cpi-ephemeral-disk- volume attached keeps it; only a cpivm- VM's goes.
func TestDeleteVMOfAnEarlierCPIsVMOnlyTakesItsEphemeralDisk(t *testing.T) {
	e := newEnv(t, nil)
	cid := e.createVM(e.stemcell(), "10.1.1.61")
	c := e.client()
	zone := e.lookup(c.Zone.GetZoneID(zoneName))
	vol := e.attachedVolume(c, "cpi-ephemeral-disk-not-ours", zone, e.lookup(c.DiskOffering.GetDiskOfferingID("Custom")), cid)
	if got := e.getDisks(cid); len(got) != 1 || got[0] != vol {
		t.Fatalf("get_disks %s = %v; want the attached volume %s", cid, got, vol)
	}
	e.call("delete_vm", cid).ok(t)
	if e.volume(vol) == nil {
		t.Fatal("delete_vm of the CPI's own VM deleted a cpi-ephemeral-disk- volume it did not create")
	}
}

// TestDeleteVMOfAnEarlierCPIsVMLostAnswerAtEachCall: the answer to each
// CloudStack call of that delete_vm is lost after CloudStack acted; the
// director's retry ends with the VM and its ephemeral volume gone and the
// persistent disk kept.
func TestDeleteVMOfAnEarlierCPIsVMLostAnswerAtEachCall(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	first := e.earlierVM(stemcell, 100)
	e.resetCalls()
	e.call("delete_vm", first.name).ok(t)
	seq := e.sequence()
	e.removedWithItsEphemeral(first)
	if len(seq) < 3 {
		t.Fatalf("delete_vm made %d CloudStack calls: %v", len(seq), seq)
	}
	for i, c := range seq {
		t.Run(fmt.Sprintf("%s#%d", c.command, c.k+1), func(t *testing.T) {
			e.t = t
			v := e.earlierVM(stemcell, 101+i)
			if err := e.sim.Admin.AddFault(simulator.Fault{Command: c.command, Skip: c.k, Lost: true}); err != nil {
				t.Fatal(err)
			}
			e.resetCalls()
			r := e.call("delete_vm", v.name)
			if err := e.sim.Admin.ClearFaults(); err != nil {
				t.Fatal(err)
			}
			if r.Error != nil {
				t.Logf("delete_vm answered %s", r.Error.Message)
				e.call("delete_vm", v.name).ok(t)
			}
			e.removedWithItsEphemeral(v)
		})
	}
}

// TestEarlierCPIsStemcellKeepsWorkingUnderItsName: the earlier CPIs' stemcell
// CID is the template's name (cpitemplate-…); create_vm deploys from it and
// delete_stemcell deletes it.
func TestEarlierCPIsStemcellKeepsWorkingUnderItsName(t *testing.T) {
	e := newEnv(t, nil)
	id := e.stemcell()
	const name = "cpitemplate-4242"
	c := e.client()
	p := c.Template.NewUpdateTemplateParams(id)
	p.SetName(name)
	if _, err := c.Template.UpdateTemplate(p); err != nil {
		t.Fatal(err)
	}
	vm := e.createVM(name, "10.1.1.62")
	if got := e.vm(vm).Templateid; got != id {
		t.Fatalf("create_vm from stemcell %s deployed template %s, want %s", name, got, id)
	}
	e.call("delete_vm", vm).ok(t)
	e.call("delete_stemcell", name).ok(t)
	if tpls := e.ourTemplates(); len(tpls) != 0 {
		t.Fatalf("delete_stemcell %s left %+v", name, tpls)
	}
	e.call("delete_stemcell", name).ok(t)
	e.call("create_vm", "agent-gone", name, smallVM, map[string]any{"default": manualNet("10.1.1.63")}, []string{}, boshEnv).
		failed(t, "VMCreationFailed", "no template of that name")
}
