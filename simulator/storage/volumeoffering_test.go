package storage_test

import (
	"strings"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// offeringEnv adds to vmEnv what changeOfferingForVolume tests need.
type offeringEnv struct{ *vmEnv }

// change calls changeOfferingForVolume and waits for its job; sizeGB 0 sends
// no size.
func (e offeringEnv) change(id, offering string, sizeGB int64, set ...func(*cloudstack.ChangeOfferingForVolumeParams)) (*cloudstack.ChangeOfferingForVolumeResponse, error) {
	p := e.CS.Volume.NewChangeOfferingForVolumeParams(offering, id)
	if sizeGB != 0 {
		p.SetSize(sizeGB)
	}
	for _, f := range set {
		f(p)
	}
	return e.CS.Volume.ChangeOfferingForVolume(p)
}

// offering creates a disk offering: fixed when sizeGB > 0, else customized.
func (e offeringEnv) offering(t *testing.T, name string, sizeGB int64, set ...func(*cloudstack.CreateDiskOfferingParams)) string {
	t.Helper()
	p := e.CS.DiskOffering.NewCreateDiskOfferingParams(name, name)
	if sizeGB > 0 {
		p.SetDisksize(sizeGB)
	} else {
		p.SetCustomized(true)
	}
	for _, f := range set {
		f(p)
	}
	o, err := e.CS.DiskOffering.CreateDiskOffering(p)
	if err != nil {
		t.Fatalf("createDiskOffering %s: %v", name, err)
	}
	return o.Id
}

// ready makes a volume Ready (created on primary storage) and detached, as a
// BOSH persistent disk is between VMs.
func (e offeringEnv) ready(t *testing.T, name, offering string, sizeGB int64, vm string) string {
	t.Helper()
	v := e.NewVolume(t, name, offering, sizeGB)
	e.AttachVol(t, v.Id, vm)
	if _, err := e.DetachVol(v.Id); err != nil {
		t.Fatal(err)
	}
	return v.Id
}

func TestChangeOfferingForVolume(t *testing.T) {
	e := offeringEnv{&vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}}
	vm := e.DataVM(t, "cpivm-offering")
	medium := e.diskMedium(t)
	id := e.ready(t, "to-medium", e.DiskCustom, 5, vm)

	r, err := e.change(id, medium, 0)
	if err != nil || r.Id != id || r.Diskofferingid != medium || r.Diskofferingname != "Medium" || r.Size != 20<<30 || r.State != "Ready" {
		t.Fatalf("Custom 5 GB to Medium: %+v, %v", r, err)
	}
	if v := e.volume(t, id); v.Diskofferingid != medium || v.Size != 20<<30 {
		t.Fatalf("listVolumes after the change: %+v", v)
	}
	_, err = e.change(id, medium, 0)
	simtesting.WantJobError(t, err, 431, "is already having disk offering "+medium)
	// A fixed offering's own size wins over a size given.
	e.Srv.Mu.Lock()
	large := e.Srv.State.DiskOfferings[2].ID
	e.Srv.Mu.Unlock()
	if r, err := e.change(id, large, 30); err != nil || r.Size != 100<<30 {
		t.Fatalf("to Large with a size: %+v, %v", r, err)
	}
	if _, err := e.change(id, medium, 0, func(p *cloudstack.ChangeOfferingForVolumeParams) { p.SetShrinkok(true) }); err != nil {
		t.Fatal(err)
	}
	_, err = e.change(id, e.DiskCustom, 0)
	simtesting.WantJobError(t, err, 431, "The new disk offering requires that a size be specified.")

	// Shrinking needs shrinkok (XenServer's VHD volumes may shrink).
	_, err = e.change(id, e.DiskSmall, 0)
	simtesting.WantJobError(t, err, 431, "Going from existing size of 21474836480 to size of 5368709120 would shrink the volume."+
		"Need to sign off by supplying the shrinkok parameter with value of true.")
	if r, err := e.change(id, e.DiskSmall, 0, func(p *cloudstack.ChangeOfferingForVolumeParams) { p.SetShrinkok(true) }); err != nil || r.Size != 5<<30 {
		t.Fatalf("shrink with shrinkok: %+v, %v", r, err)
	}

	// The same customized offering with a new size passes
	// checkIfVolumeCanResizeWithNewDiskOffering (its size test shifts twice).
	custom := e.ready(t, "custom-grows", e.DiskCustom, 5, vm)
	if r, err := e.change(custom, e.DiskCustom, 8); err != nil || r.Size != 8<<30 || r.Diskofferingid != e.DiskCustom {
		t.Fatalf("Custom 5 GB to Custom 8 GB: %+v, %v", r, err)
	}
	_, err = e.change(custom, e.DiskCustom, 5000)
	simtesting.WantJobError(t, err, 431, "Requested volume size is ")
}

func TestChangeOfferingForVolumeRefusals(t *testing.T) {
	e := offeringEnv{&vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}}
	strict := e.offering(t, "strict-20", 20, func(p *cloudstack.CreateDiskOfferingParams) { p.SetDisksizestrictness(true) })
	ssd := e.offering(t, "ssd-custom", 0, func(p *cloudstack.CreateDiskOfferingParams) { p.SetTags("ssd") })

	// An Allocated volume changes in the database only; the checks still run.
	a := e.NewVolume(t, "allocated", e.DiskCustom, 3)
	_, err := e.change(a.Id, strict, 0)
	simtesting.WantJobError(t, err, 431, "Disk offering size strictness does not match with new disk offering.")
	if r, err := e.change(a.Id, ssd, 10); err != nil || r.State != "Allocated" || r.Size != 10<<30 || r.Diskofferingid != ssd {
		t.Fatalf("allocated volume to ssd-custom: %+v, %v", r, err)
	}
	_, err = e.change(a.Id, e.DiskCustom, 10)
	simtesting.WantJobError(t, err, 431, "Selected disk offering ")
	simtesting.WantJobError(t, err, 431, "does not have tags as in existing disk offering of volume "+a.Id)

	// A strict offering keeps its size.
	s := e.NewVolume(t, "strict", strict, 0)
	strict30 := e.offering(t, "strict-30", 30, func(p *cloudstack.CreateDiskOfferingParams) { p.SetDisksizestrictness(true) })
	_, err = e.change(s.Id, strict30, 0)
	simtesting.WantJobError(t, err, 431, "Resize volume for strict is not allowed since disk offering's size is fixed")

	// A removed offering.
	gone := e.offering(t, "gone", 10)
	if _, err := e.CS.DiskOffering.DeleteDiskOffering(e.CS.DiskOffering.NewDeleteDiskOfferingParams(gone)); err != nil {
		t.Fatal(err)
	}
	_, err = e.change(a.Id, gone, 0)
	simtesting.WantJobError(t, err, 431, "Requested disk offering has been removed.")
}

// A Ready volume moves to a pool whose tags cover the new offering's, when
// automigrate allows; with none, the change fails.
func TestChangeOfferingForVolumeMigrates(t *testing.T) {
	e := offeringEnv{&vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}}
	vm := e.DataVM(t, "cpivm-migrate")
	fast := e.offering(t, "fast-20", 20, func(p *cloudstack.CreateDiskOfferingParams) { p.SetTags("fast") })
	id := e.ready(t, "moving", e.DiskSmall, 0, vm)
	migrate := func(p *cloudstack.ChangeOfferingForVolumeParams) { p.SetAutomigrate(true) }
	_, err := e.change(id, fast, 0, migrate)
	simtesting.WantJobError(t, err, 530, "Volume change offering operation failed for volume ID: "+id+
		" as no suitable pool(s) found for migrating to support new disk offering")

	e.Srv.Mu.Lock()
	cluster, pod := e.Srv.State.Clusters[0].ID, e.Srv.State.Clusters[0].PodID
	e.Srv.Mu.Unlock()
	out, errOut, err := simtesting.RunCLI(t, e.Sim, simtesting.Secret, "createStoragePool", "zoneid="+e.Zone, "podid="+pod,
		"clusterid="+cluster, "name=PS-fast", "url=nfs://10.147.28.6/export/fast", "tags=fast")
	if err != nil {
		t.Fatalf("createStoragePool: %v\n%s\n%s", err, out, errOut)
	}
	// An absent automigrate is false (ChangeOfferingForVolumeCmd.getAutoMigrate).
	for _, set := range []func(*cloudstack.ChangeOfferingForVolumeParams){
		func(p *cloudstack.ChangeOfferingForVolumeParams) { p.SetAutomigrate(false) },
		func(*cloudstack.ChangeOfferingForVolumeParams) {},
	} {
		_, err = e.change(id, fast, 0, set)
		simtesting.WantJobError(t, err, 431, "Failed to change offering for volume "+id+" since automigrate is set to false but volume needs to migrated")
	}
	// The answer is ResponseView.Restricted: no pool even for the root admin; listVolumes shows it.
	if r, err := e.change(id, fast, 0, migrate); err != nil || r.Storage != "" || r.Size != 20<<30 || r.Diskofferingid != fast {
		t.Fatalf("migrating to PS-fast: %+v, %v", r, err)
	}
	if v := e.volume(t, id); v.Storage != "PS-fast" {
		t.Fatalf("the migrated volume is on %q", v.Storage)
	}
}

// On a running XenServer VM the offering may change while the size stays;
// a new size fails the change, since XenServer resizes offline only.
func TestChangeOfferingForVolumeAttached(t *testing.T) {
	e := offeringEnv{&vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}}
	vm := e.DataVM(t, "cpivm-attached")
	other20 := e.offering(t, "other-20", 20)
	v := e.NewVolume(t, "attached", e.diskMedium(t), 0)
	e.AttachVol(t, v.Id, vm)
	if r, err := e.change(v.Id, other20, 0); err != nil || r.Diskofferingid != other20 || r.Virtualmachineid != vm {
		t.Fatalf("same size while attached: %+v, %v", r, err)
	}
	_, err := e.change(v.Id, e.DiskCustom, 40)
	simtesting.WantJobError(t, err, 530, "Volume change offering operation failed for volume ID: "+v.Id+" due to resize volume operation failed")
	if got := e.volume(t, v.Id); got.Diskofferingid != other20 || got.Size != 20<<30 {
		t.Fatalf("a failed change changed the volume: %+v", got)
	}
}

// KVM volumes are QCOW2, which CloudStack refuses to shrink.
func TestChangeOfferingForVolumeKVM(t *testing.T) {
	e := offeringEnv{&vmEnv{simtesting.NewVMEnv(t, simulator.Options{Hypervisor: "KVM"})}}
	vm := e.DataVM(t, "cpivm-kvm")
	id := e.ready(t, "qcow2", e.diskMedium(t), 0, vm)
	_, err := e.change(id, e.DiskSmall, 0, func(p *cloudstack.ChangeOfferingForVolumeParams) { p.SetShrinkok(true) })
	simtesting.WantJobError(t, err, 431, "Unable to shrink volumes of type QCOW2")
}

// Debian's CLI, an independent client, drives the command and reads its job.
func TestCLIChangeOfferingForVolume(t *testing.T) {
	e := offeringEnv{&vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}}
	v := e.NewVolume(t, "cli", e.DiskCustom, 2)
	out, errOut, err := simtesting.RunCLI(t, e.Sim, simtesting.Secret, "changeOfferingForVolume", "id="+v.Id, "diskofferingid="+e.DiskCustom, "size=4")
	if err != nil || !strings.Contains(out, `"size": 4294967296`) || !strings.Contains(out, `"diskofferingname": "Custom"`) {
		t.Fatalf("changeOfferingForVolume: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	out, errOut, err = simtesting.RunCLI(t, e.Sim, simtesting.Secret, "changeOfferingForVolume", "id="+v.Id, "diskofferingid="+e.DiskCustom)
	if err == nil || !strings.Contains(errOut, "Job failure") || !strings.Contains(out, "The new disk offering requires that a size be specified.") {
		t.Fatalf("a refused change: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}

// resizeVolume's own offering checks: a strict size stays, a new offering
// needs the same strictness and the same storage tags, not a removed one.
func TestResizeVolumeOfferingChecks(t *testing.T) {
	e := offeringEnv{&vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}}
	resize := func(id string, sizeGB int64, offering string) error {
		p := e.CS.Volume.NewResizeVolumeParams(id)
		if sizeGB != 0 {
			p.SetSize(sizeGB)
		}
		if offering != "" {
			p.SetDiskofferingid(offering)
		}
		_, err := e.CS.Volume.ResizeVolume(p)
		return err
	}
	strict := e.offering(t, "strict-20", 20, func(p *cloudstack.CreateDiskOfferingParams) { p.SetDisksizestrictness(true) })
	s := e.NewVolume(t, "strict", strict, 0)
	simtesting.WantJobError(t, resize(s.Id, 30, ""), 431, "Resize of volume "+s.Id+" is not allowed, since disk size is strictly fixed as per the disk offering")
	strict30 := e.offering(t, "strict-30", 30, func(p *cloudstack.CreateDiskOfferingParams) { p.SetDisksizestrictness(true) })
	simtesting.WantJobError(t, resize(s.Id, 0, strict30), 431, "Resize volume for strict is not allowed since disk offering's size is fixed")
	simtesting.WantJobError(t, resize(s.Id, 0, e.diskMedium(t)), 431, "Disk offering size strictness does not match with new disk offering")

	tagged := e.offering(t, "ssd-10", 10, func(p *cloudstack.CreateDiskOfferingParams) { p.SetTags("ssd,fast") })
	sameTags := e.offering(t, "fast-ssd", 0, func(p *cloudstack.CreateDiskOfferingParams) { p.SetTags("FAST,ssd") })
	v := e.NewVolume(t, "tagged", tagged, 0)
	simtesting.WantJobError(t, resize(v.Id, 20, e.DiskCustom), 431, "The tags on the new and old disk offerings must match.")
	if err := resize(v.Id, 20, sameTags); err != nil {
		t.Fatalf("to an offering with the same tags: %v", err)
	}
	plain := e.NewVolume(t, "plain", e.DiskSmall, 0)
	simtesting.WantJobError(t, resize(plain.Id, 0, tagged), 431, "There are no tags on the current disk offering. The new disk offering needs to have no tags, as well.")

	gone := e.offering(t, "gone", 10)
	if _, err := e.CS.DiskOffering.DeleteDiskOffering(e.CS.DiskOffering.NewDeleteDiskOfferingParams(gone)); err != nil {
		t.Fatal(err)
	}
	simtesting.WantJobError(t, resize(plain.Id, 0, gone), 431, "Requested disk offering has been removed.")
}
