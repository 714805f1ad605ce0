package storage_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// vmEnv is simtesting's VM environment, for this package's own helpers on
// it: &vmEnv{simtesting.NewVMEnv(t, opts)}.
type vmEnv struct{ *simtesting.VMEnv }

// volume lists one volume by id; nil when listVolumes does not show it.
func (e *vmEnv) volume(t *testing.T, id string) *cloudstack.Volume {
	t.Helper()
	p := e.CS.Volume.NewListVolumesParams()
	p.SetId(id)
	l, err := e.CS.Volume.ListVolumes(p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Count == 0 {
		return nil
	}
	return l.Volumes[0]
}

func (e *vmEnv) diskMedium(t *testing.T) string {
	t.Helper()
	e.Srv.Mu.Lock()
	defer e.Srv.Mu.Unlock()
	return e.Srv.State.DiskOfferings[1].ID
}

func TestCreateVolumeIsAllocatedLazily(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	v := e.NewVolume(t, "bosh-disk-1", e.DiskCustom, 3)
	if v.Id == "" || v.Name != "bosh-disk-1" || v.Type != "DATADISK" || v.Size != 3<<30 || v.State != "Allocated" ||
		v.Zoneid != e.Zone || v.Zonename != "Sandbox-simulator" || v.Diskofferingid != e.DiskCustom ||
		v.Diskofferingname != "Custom" || v.Storage != "none" || v.Path != "" || v.Virtualmachineid != "" ||
		v.Account != "admin" || v.Created == "" || v.Hypervisor != "None" {
		t.Fatalf("createVolume answered %+v", v)
	}
	fixed := e.NewVolume(t, "", e.DiskSmall, 0)
	if fixed.Size != 5<<30 || !kernel.UUIDPattern.MatchString(fixed.Name) {
		t.Fatalf("a fixed offering's volume without a name: %+v", fixed)
	}

	// The input is checked before the job: errors come back at once.
	for _, c := range []struct {
		p    *cloudstack.CreateVolumeParams
		text string
	}{
		{e.VolumeParams("x", e.DiskSmall, 8), "This disk offering does not allow custom size"},
		{e.VolumeParams("x", e.DiskCustom, 0), "This disk offering requires a custom size specified"},
		{e.VolumeParams("x", e.DiskCustom, -1), "Disk size must be larger than 0"},
		{e.VolumeParams("x", e.DiskCustom, 2000), "Volume size: 2000 GB is out of allowed range. Min: 1. Max: 1024"},
		{e.VolumeParams("x", "", 0), "At least one of disk Offering ID or snapshot ID must be passed whilst creating volume"},
	} {
		_, err := e.CS.Volume.CreateVolume(c.p)
		simtesting.WantAPIError(t, err, 431, c.text)
	}
	zero := e.VolumeParams("x", e.DiskCustom, 0)
	zero.SetSize(0)
	_, err := e.CS.Volume.CreateVolume(zero)
	simtesting.WantAPIError(t, err, 431, "Disk size must be larger than 0")
	noZone := e.VolumeParams("x", e.DiskSmall, 0)
	noZone.ResetZoneid()
	_, err = e.CS.Volume.CreateVolume(noZone)
	simtesting.WantAPIError(t, err, 431, "Unable to find zone by id null")

	// A VM id with a disk offering is ignored, as CloudStack ignores it.
	vm := e.DataVM(t, "cpivm-ignored")
	p := e.VolumeParams("with-vm", e.DiskSmall, 0)
	p.SetVirtualmachineid(vm)
	if v, err := e.CS.Volume.CreateVolume(p); err != nil || v.Virtualmachineid != "" || v.State != "Allocated" {
		t.Fatalf("createVolume with virtualmachineid: %+v, %v", v, err)
	}
}

func TestAttachDeviceIDsOnXenServer(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.DataVM(t, "cpivm-attach") // its data disk has device 1
	var ids []int64
	vols := map[int64]string{}
	for i := range 3 {
		v := e.NewVolume(t, fmt.Sprintf("disk-%d", i), e.DiskCustom, 1)
		a := e.AttachVol(t, v.Id, vm)
		if a.Virtualmachineid != vm || a.Vmname != "cpivm-attach" || a.Vmstate != "Running" || a.State != "Ready" ||
			a.Storage != "PS0" || a.Path == "" || a.Hypervisor != "XenServer" || a.Attached == "" {
			t.Fatalf("attachVolume answered %+v", a)
		}
		ids = append(ids, a.Deviceid)
		vols[a.Deviceid] = v.Id
	}
	if fmt.Sprint(ids) != "[2 4 5]" {
		t.Fatalf("device ids %v, want [2 4 5]: 3 is the CD-ROM's", ids)
	}
	// A freed device id is taken again first.
	if d, err := e.DetachVol(vols[2]); err != nil || d.Virtualmachineid != "" || d.Deviceid != 0 || d.State != "Ready" {
		t.Fatalf("detachVolume: %+v, %v", d, err)
	}
	if a := e.AttachVol(t, vols[2], vm); a.Deviceid != 2 {
		t.Fatalf("re-attached at %d, want 2", a.Deviceid)
	}

	// Asking for a device id: not 3, not out of range, not taken.
	v := e.NewVolume(t, "asked", e.DiskCustom, 1)
	ask := func(dev int64) error {
		p := e.CS.Volume.NewAttachVolumeParams(v.Id, vm)
		p.SetDeviceid(dev)
		_, err := e.CS.Volume.AttachVolume(p)
		return err
	}
	simtesting.WantJobError(t, ask(3), 530, "deviceId should be 0,1,2,4-254")
	simtesting.WantJobError(t, ask(255), 530, "deviceId should be 0,1,2,4-254")
	simtesting.WantJobError(t, ask(4), 530, "deviceId 4 is used by vol Vol[")
	simtesting.WantJobError(t, ask(0), 431, "Root volume detach can happen only when vm is in states: Stopped or Destroyed")
	if err := ask(9); err != nil {
		t.Fatal(err)
	}
	if got := e.volume(t, v.Id); got.Deviceid != 9 {
		t.Fatalf("asked for 9, got %d", got.Deviceid)
	}

	// Attached anywhere, the volume is refused; detached, detach is refused.
	_, err := e.CS.Volume.AttachVolume(e.CS.Volume.NewAttachVolumeParams(v.Id, vm))
	simtesting.WantJobError(t, err, 431, "Please specify a volume that is not attached to any VM.")
	spare := e.NewVolume(t, "spare", e.DiskSmall, 0)
	_, err = e.DetachVol(spare.Id)
	simtesting.WantJobError(t, err, 431, "The specified volume is not attached to a VM.")

	// Detach by VM and device id; the ROOT volume stays while the VM runs.
	p := e.CS.Volume.NewDetachVolumeParams()
	p.SetVirtualmachineid(vm)
	p.SetDeviceid(9)
	if d, err := e.CS.Volume.DetachVolume(p); err != nil || d.Id != v.Id {
		t.Fatalf("detach by device id: %+v, %v", d, err)
	}
	p.SetDeviceid(9)
	_, err = e.CS.Volume.DetachVolume(p)
	simtesting.WantJobError(t, err, 530, "Index 0 out of bounds")
	p = e.CS.Volume.NewDetachVolumeParams()
	p.SetVirtualmachineid(vm)
	_, err = e.CS.Volume.DetachVolume(p)
	simtesting.WantJobError(t, err, 431, "Please provide either a volume id, or a tuple(device id, instance id)")
	root := e.Volumes(t, vm)[0]
	_, err = e.DetachVol(root.Id)
	simtesting.WantJobError(t, err, 431, "Root volume detach can happen only when vm is in states: Stopped or Destroyed")

	// A stopped VM may give its ROOT volume up and take it back at 0.
	if _, err := e.CS.VirtualMachine.StopVirtualMachine(e.CS.VirtualMachine.NewStopVirtualMachineParams(vm)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DetachVol(root.Id); err != nil {
		t.Fatal(err)
	}
	back := e.CS.Volume.NewAttachVolumeParams(root.Id, vm)
	back.SetDeviceid(0)
	if a, err := e.CS.Volume.AttachVolume(back); err != nil || a.Deviceid != 0 || a.Type != "ROOT" {
		t.Fatalf("ROOT back at 0: %+v, %v", a, err)
	}
	other := e.NewVolume(t, "not-root", e.DiskSmall, 0)
	zero := e.CS.Volume.NewAttachVolumeParams(other.Id, vm)
	zero.SetDeviceid(0)
	_, err = e.CS.Volume.AttachVolume(zero)
	simtesting.WantJobError(t, err, 431, "Vm already has root volume attached to it")
}

func TestAttachRefusals(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{ExtraZones: []string{"Sandbox-simulator-2"}})}
	vm := e.DataVM(t, "cpivm-refusals")
	e.Srv.Mu.Lock()
	zone2 := e.Srv.State.Zones[1].ID
	e.Srv.Mu.Unlock()

	p := e.VolumeParams("elsewhere", e.DiskSmall, 0)
	p.SetZoneid(zone2)
	far, err := e.CS.Volume.CreateVolume(p)
	if err != nil || far.Zoneid != zone2 {
		t.Fatalf("createVolume in zone 2: %+v, %v", far, err)
	}
	_, err = e.CS.Volume.AttachVolume(e.CS.Volume.NewAttachVolumeParams(far.Id, vm))
	simtesting.WantJobError(t, err, 431, "Please specify a VM that is in the same zone as the volume.")

	v := e.NewVolume(t, "near", e.DiskSmall, 0)
	if _, err := e.CS.Volume.DeleteVolume(e.CS.Volume.NewDeleteVolumeParams(v.Id)); err != nil {
		t.Fatal(err)
	}
	_, err = e.CS.Volume.AttachVolume(e.CS.Volume.NewAttachVolumeParams(v.Id, vm))
	simtesting.WantJobError(t, err, 431, "Please specify a volume with the valid type: ROOT or DATADISK")

	v = e.NewVolume(t, "near-2", e.DiskSmall, 0)
	if _, err := e.CS.VirtualMachine.DestroyVirtualMachine(e.CS.VirtualMachine.NewDestroyVirtualMachineParams(vm)); err != nil {
		t.Fatal(err)
	}
	_, err = e.CS.Volume.AttachVolume(e.CS.Volume.NewAttachVolumeParams(v.Id, vm))
	simtesting.WantJobError(t, err, 431, "Please specify a VM that is either running or stopped.")
	if _, err := e.CS.VirtualMachine.ExpungeVirtualMachine(e.CS.VirtualMachine.NewExpungeVirtualMachineParams(vm)); err != nil {
		t.Fatal(err)
	}
	_, err = e.CS.Volume.AttachVolume(e.CS.Volume.NewAttachVolumeParams(v.Id, vm))
	simtesting.WantJobError(t, err, 431, "Please specify a valid User VM.")
	// An unknown VM UUID is refused before any job.
	_, err = e.CS.Volume.AttachVolume(e.CS.Volume.NewAttachVolumeParams(v.Id, "0d6f3e4a-1111-4111-8111-111111111111"))
	simtesting.WantAPIError(t, err, 431, "Invalid parameter virtualmachineid value=0d6f3e4a-1111-4111-8111-111111111111")
}

// TestDataDiskLimit fills a VM up to hypervisor_capabilities' limit: the
// deploy-created data disk counts, device ids skip 3.
func TestDataDiskLimit(t *testing.T) {
	for _, c := range []struct {
		hypervisor string
		limit      int
	}{{"Simulator", 6}, {"KVM", 32}} {
		t.Run(c.hypervisor, func(t *testing.T) {
			e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{Hypervisor: c.hypervisor})}
			vm := e.DataVM(t, "cpivm-full")
			last := int64(1)
			for i := 1; i < c.limit; i++ {
				last = e.AttachVol(t, e.NewVolume(t, fmt.Sprint("d", i), e.DiskSmall, 0).Id, vm).Deviceid
			}
			if last != int64(c.limit)+1 {
				t.Fatalf("the %dth data disk is at %d, want %d", c.limit, last, c.limit+1)
			}
			extra := e.NewVolume(t, "one-too-many", e.DiskSmall, 0)
			_, err := e.CS.Volume.AttachVolume(e.CS.Volume.NewAttachVolumeParams(extra.Id, vm))
			simtesting.WantJobError(t, err, 431, fmt.Sprintf("The specified VM already has the maximum number of data disks (%d) attached. Please specify another VM.", c.limit))
			if c.hypervisor == "Simulator" {
				// Attached volumes are on primary storage, which a Simulator
				// host cannot resize; an Allocated one only changes in the
				// database.
				p := e.CS.Volume.NewResizeVolumeParams(e.Volumes(t, vm)[1].Id)
				p.SetSize(50)
				_, err := e.CS.Volume.ResizeVolume(p)
				simtesting.WantJobError(t, err, 431, "Hypervisor Simulator does not support volume resize")
				p = e.CS.Volume.NewResizeVolumeParams(extra.Id)
				p.SetSize(50)
				if r, err := e.CS.Volume.ResizeVolume(p); err != nil || r.Size != 50<<30 {
					t.Fatalf("resizing an Allocated volume: %+v, %v", r, err)
				}
			}
		})
	}
}

// TestConcurrentAttachesGetDistinctDeviceIDs queues attach jobs for one VM
// at once, as CPI processes do: each job takes its device id when it runs.
func TestConcurrentAttachesGetDistinctDeviceIDs(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{JobLatency: 30 * time.Millisecond})}
	deploy := e.Params("cpivm-busy")
	deploy.SetDiskofferingid(e.DiskSmall)
	r, err := e.Raw.VirtualMachine.DeployVirtualMachine(deploy)
	if err != nil {
		t.Fatal(err)
	}
	e.WaitJobDone(t, r.JobID)
	vm := r.Id
	const n = 6
	var vols []string
	for i := range n {
		c, err := e.Raw.Volume.CreateVolume(e.VolumeParams(fmt.Sprint("c", i), e.DiskSmall, 0))
		if err != nil {
			t.Fatal(err)
		}
		e.WaitJobDone(t, c.JobID)
		vols = append(vols, c.Id)
	}
	jobs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, id := range vols {
		wg.Go(func() {
			a, err := e.Raw.Volume.AttachVolume(e.Raw.Volume.NewAttachVolumeParams(id, vm))
			if err == nil {
				jobs[i] = a.JobID
			}
			errs[i] = err
		})
	}
	wg.Wait()
	var got []int
	for i, job := range jobs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		res := e.WaitJobDone(t, job)
		var out struct {
			Volume struct {
				DeviceID int `json:"deviceid"`
			} `json:"volume"`
		}
		if res.Jobstatus != 1 || json.Unmarshal(res.Jobresult, &out) != nil {
			t.Fatalf("attach job %s: %s", job, res.Jobresult)
		}
		got = append(got, out.Volume.DeviceID)
	}
	sort.Ints(got)
	if fmt.Sprint(got) != "[2 4 5 6 7 8]" {
		t.Fatalf("concurrent attaches got device ids %v", got)
	}
}

func TestDeleteVolume(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.DataVM(t, "cpivm-delete")
	v := e.NewVolume(t, "doomed", e.DiskSmall, 0)
	e.AttachVol(t, v.Id, vm)
	_, err := e.CS.Volume.DeleteVolume(e.CS.Volume.NewDeleteVolumeParams(v.Id))
	simtesting.WantAPIError(t, err, 431, "Please specify a volume that is not attached to any VM.")
	root := e.Volumes(t, vm)[0]
	_, err = e.CS.Volume.DeleteVolume(e.CS.Volume.NewDeleteVolumeParams(root.Id))
	simtesting.WantAPIError(t, err, 431, "Please specify a volume that is not attached to any VM.")

	if _, err := e.DetachVol(v.Id); err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{"director": "d"}
	if _, err := e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{v.Id}, "Volume", tags)); err != nil {
		t.Fatal(err)
	}
	// deleteVolume is synchronous: a plain client gets the answer itself.
	d, err := e.Raw.Volume.DeleteVolume(e.Raw.Volume.NewDeleteVolumeParams(v.Id))
	if err != nil || !d.Success || d.JobID != "" {
		t.Fatalf("deleteVolume: %+v, %v", d, err)
	}
	if e.volume(t, v.Id) != nil {
		t.Fatal("listVolumes still lists the deleted volume")
	}
	_, err = e.CS.Volume.DeleteVolume(e.CS.Volume.NewDeleteVolumeParams(v.Id))
	simtesting.WantAPIError(t, err, 431, "Unable to find volume with ID: ")
	lt := e.CS.Resourcetags.NewListTagsParams()
	lt.SetResourceid(v.Id)
	if l, err := e.CS.Resourcetags.ListTags(lt); err != nil || l.Count != 0 {
		t.Fatalf("the deleted volume's tags: %+v, %v", l, err)
	}
	e.Srv.Mu.Lock()
	row, _ := model.ByID(e.Srv.State.Volumes, v.Id)
	kept := row.State == "Expunged" && row.Removed != nil
	e.Srv.Mu.Unlock()
	if !kept {
		t.Fatalf("the deleted volume's row: %+v", row)
	}
	// An Allocated volume goes at once too.
	a := e.NewVolume(t, "never-used", e.DiskSmall, 0)
	if _, err := e.CS.Volume.DeleteVolume(e.CS.Volume.NewDeleteVolumeParams(a.Id)); err != nil {
		t.Fatal(err)
	}
}

func TestResizeVolume(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	resize := func(id string, sizeGB int64, offering string, shrink bool) (*cloudstack.ResizeVolumeResponse, error) {
		p := e.CS.Volume.NewResizeVolumeParams(id)
		if sizeGB != 0 {
			p.SetSize(sizeGB)
		}
		if offering != "" {
			p.SetDiskofferingid(offering)
		}
		if shrink {
			p.SetShrinkok(true)
		}
		return e.CS.Volume.ResizeVolume(p)
	}
	vm := e.DataVM(t, "cpivm-resize")
	v := e.NewVolume(t, "growing", e.DiskCustom, 5)
	e.AttachVol(t, v.Id, vm)
	if _, err := e.DetachVol(v.Id); err != nil { // Ready now, and detached
		t.Fatal(err)
	}
	if r, err := resize(v.Id, 10, "", false); err != nil || r.Size != 10<<30 || r.Id != v.Id {
		t.Fatalf("grow: %+v, %v", r, err)
	}
	_, err := resize(v.Id, 2, "", false)
	simtesting.WantJobError(t, err, 431, "Going from existing size of 10737418240 to size of 2147483648 would shrink the volume."+
		"Need to sign off by supplying the shrinkok parameter with value of true.")
	if r, err := resize(v.Id, 2, "", true); err != nil || r.Size != 2<<30 {
		t.Fatalf("shrink with shrinkok: %+v, %v", r, err)
	}
	_, err = resize(v.Id, 2000, "", false)
	simtesting.WantJobError(t, err, 431, "Volume size: 2000 GB is out of allowed range. Min: 1. Max: 1024")

	// A fixed, non-strict offering resizes by size; or moves to another
	// offering: a fixed one sets the size, a customized one needs size.
	f := e.NewVolume(t, "fixed", e.DiskSmall, 0)
	if r, err := resize(f.Id, 8, "", false); err != nil || r.Size != 8<<30 || r.Diskofferingid != e.DiskSmall {
		t.Fatalf("fixed offering by size: %+v, %v", r, err)
	}
	_, err = resize(f.Id, 0, e.DiskCustom, false)
	simtesting.WantJobError(t, err, 431, "The new disk offering requires that a size be specified.")
	if r, err := resize(f.Id, 30, e.DiskCustom, false); err != nil || r.Size != 30<<30 || r.Diskofferingname != "Custom" {
		t.Fatalf("to the customized offering: %+v, %v", r, err)
	}
	if r, err := resize(f.Id, 0, e.diskMedium(t), true); err != nil || r.Size != 20<<30 || r.Diskofferingname != "Medium" {
		t.Fatalf("to Medium: %+v, %v", r, err)
	}

	// XenServer resizes a disk only while its VM is stopped or it is detached.
	e.AttachVol(t, v.Id, vm)
	_, err = resize(v.Id, 4, "", false)
	simtesting.WantJobError(t, err, 431, "The VM must be stopped or the disk detached in order to resize with the XenServer Hypervisor.")
	if _, err := e.CS.VirtualMachine.StopVirtualMachine(e.CS.VirtualMachine.NewStopVirtualMachineParams(vm)); err != nil {
		t.Fatal(err)
	}
	if r, err := resize(v.Id, 4, "", false); err != nil || r.Size != 4<<30 || r.Deviceid == 0 {
		t.Fatalf("resizing on a stopped VM: %+v, %v", r, err)
	}
}

func TestListVolumesFilters(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.DataVM(t, "cpivm-list")
	a := e.NewVolume(t, "bosh-disk-alpha", e.DiskSmall, 0)
	b := e.NewVolume(t, "bosh-disk-beta", e.DiskSmall, 0)
	e.AttachVol(t, b.Id, vm)
	tags := map[string]string{"deployment": "cf"}
	if _, err := e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{a.Id}, "Volume", tags)); err != nil {
		t.Fatal(err)
	}
	count := func(set func(p *cloudstack.ListVolumesParams)) int {
		t.Helper()
		p := e.CS.Volume.NewListVolumesParams()
		p.SetListall(true)
		set(p)
		l, err := e.CS.Volume.ListVolumes(p)
		if err != nil {
			t.Fatal(err)
		}
		return l.Count
	}
	for name, c := range map[string]struct {
		set  func(p *cloudstack.ListVolumesParams)
		want int
	}{
		"all":             {func(*cloudstack.ListVolumesParams) {}, 4},
		"name is exact":   {func(p *cloudstack.ListVolumesParams) { p.SetName("bosh-disk-alpha") }, 1},
		"no name prefix":  {func(p *cloudstack.ListVolumesParams) { p.SetName("bosh-disk") }, 0},
		"name any case":   {func(p *cloudstack.ListVolumesParams) { p.SetName("BOSH-disk-beta") }, 1},
		"keyword in name": {func(p *cloudstack.ListVolumesParams) { p.SetKeyword("disk-") }, 2},
		"keyword state":   {func(p *cloudstack.ListVolumesParams) { p.SetKeyword("allocated") }, 1},
		"type ROOT":       {func(p *cloudstack.ListVolumesParams) { p.SetType("ROOT") }, 1},
		"type LIKE":       {func(p *cloudstack.ListVolumesParams) { p.SetType("data") }, 3},
		"by VM":           {func(p *cloudstack.ListVolumesParams) { p.SetVirtualmachineid(vm) }, 3},
		"by zone":         {func(p *cloudstack.ListVolumesParams) { p.SetZoneid(e.Zone) }, 4},
		"ids":             {func(p *cloudstack.ListVolumesParams) { p.SetIds([]string{a.Id, b.Id}) }, 2},
		"tags":            {func(p *cloudstack.ListVolumesParams) { p.SetTags(tags) }, 1},
		"state":           {func(p *cloudstack.ListVolumesParams) { p.SetState("Ready") }, 3},
		"paged": {func(p *cloudstack.ListVolumesParams) {
			p.SetPage(2)
			p.SetPagesize(3)
		}, 4},
	} {
		if got := count(c.set); got != c.want {
			t.Errorf("%s: count %d, want %d", name, got, c.want)
		}
	}
}

func TestSnapshotLifecycle(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.DataVM(t, "cpivm-snap")
	v := e.NewVolume(t, "bosh-disk-snap", e.DiskCustom, 3)
	_, err := e.CS.Snapshot.CreateSnapshot(e.CS.Snapshot.NewCreateSnapshotParams(v.Id))
	simtesting.WantAPIError(t, err, 431, "is not in Ready state but Allocated. Cannot take snapshot.")
	e.AttachVol(t, v.Id, vm)

	s, err := e.CS.Snapshot.CreateSnapshot(e.CS.Snapshot.NewCreateSnapshotParams(v.Id))
	if err != nil {
		t.Fatal(err)
	}
	if s.State != "BackedUp" || s.Volumeid != v.Id || s.Volumename != "bosh-disk-snap" || s.Volumetype != "DATADISK" ||
		s.Snapshottype != "MANUAL" || s.Intervaltype != "MANUAL" || s.Virtualsize != 3<<30 || s.Zoneid != e.Zone ||
		!regexp.MustCompile(`^cpivm-snap_bosh-disk-snap_\d{14}$`).MatchString(s.Name) {
		t.Fatalf("createSnapshot answered %+v", s)
	}
	tags := map[string]string{"director": "d", "instance_id": "web/0"}
	if _, err := e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{s.Id}, "Snapshot", tags)); err != nil {
		t.Fatal(err)
	}
	named := e.CS.Snapshot.NewCreateSnapshotParams(v.Id)
	named.SetName("nightly")
	if n, err := e.CS.Snapshot.CreateSnapshot(named); err != nil || n.Name != "nightly" {
		t.Fatalf("named snapshot: %+v, %v", n, err)
	}
	list := func(set func(p *cloudstack.ListSnapshotsParams)) []*cloudstack.Snapshot {
		t.Helper()
		p := e.CS.Snapshot.NewListSnapshotsParams()
		p.SetListall(true)
		set(p)
		l, err := e.CS.Snapshot.ListSnapshots(p)
		if err != nil {
			t.Fatal(err)
		}
		return l.Snapshots
	}
	for name, c := range map[string]struct {
		set  func(p *cloudstack.ListSnapshotsParams)
		want int
	}{
		"all":          {func(*cloudstack.ListSnapshotsParams) {}, 2},
		"id":           {func(p *cloudstack.ListSnapshotsParams) { p.SetId(s.Id) }, 1},
		"volume":       {func(p *cloudstack.ListSnapshotsParams) { p.SetVolumeid(v.Id) }, 2},
		"name is LIKE": {func(p *cloudstack.ListSnapshotsParams) { p.SetName("IGHTL") }, 1},
		"keyword":      {func(p *cloudstack.ListSnapshotsParams) { p.SetKeyword("bosh-disk-snap") }, 1},
		"tags":         {func(p *cloudstack.ListSnapshotsParams) { p.SetTags(map[string]string{"director": "d"}) }, 1},
	} {
		if got := len(list(c.set)); got != c.want {
			t.Errorf("listSnapshots %s: %d, want %d", name, got, c.want)
		}
	}
	if got := list(func(p *cloudstack.ListSnapshotsParams) { p.SetId(s.Id) }); len(got[0].Tags) != 2 {
		t.Fatalf("snapshot tags %+v", got[0].Tags)
	}

	// A volume from the snapshot is Ready at once, and attached when asked.
	from := e.CS.Volume.NewCreateVolumeParams()
	from.SetSnapshotid(s.Id)
	from.SetName("restored")
	from.SetVirtualmachineid(vm)
	r, err := e.CS.Volume.CreateVolume(from)
	if err != nil || r.State != "Ready" || r.Size != 3<<30 || r.Snapshotid != s.Id || r.Zoneid != e.Zone {
		t.Fatalf("volume from snapshot: %+v, %v", r, err)
	}
	if got := e.volume(t, r.Id); got.Virtualmachineid != vm || got.Deviceid != 4 {
		t.Fatalf("the restored volume is not attached: %+v", got)
	}

	d, err := e.CS.Snapshot.DeleteSnapshot(e.CS.Snapshot.NewDeleteSnapshotParams(s.Id))
	if err != nil || !d.Success {
		t.Fatalf("deleteSnapshot: %+v, %v", d, err)
	}
	if got := list(func(p *cloudstack.ListSnapshotsParams) { p.SetId(s.Id) }); len(got) != 0 {
		t.Fatalf("listSnapshots shows a deleted snapshot: %+v", got[0])
	}
	_, err = e.CS.Snapshot.DeleteSnapshot(e.CS.Snapshot.NewDeleteSnapshotParams(s.Id))
	simtesting.WantJobError(t, err, 431, "unable to find a snapshot with id ")
	from = e.CS.Volume.NewCreateVolumeParams()
	from.SetSnapshotid(s.Id)
	_, err = e.CS.Volume.CreateVolume(from)
	simtesting.WantAPIError(t, err, 431, "unable to find a snapshot with id ")
	_, err = e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{s.Id}, "Snapshot", tags))
	simtesting.WantJobError(t, err, 431, "Unable to find resource by uuid")
}

// TestSnapshotInProgress holds a snapshot job: the snapshot is BackingUp
// and its volume can be neither deleted nor resized until it is done.
func TestSnapshotInProgress(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.DataVM(t, "cpivm-backup")
	v := e.NewVolume(t, "busy", e.DiskCustom, 2)
	e.AttachVol(t, v.Id, vm)
	if _, err := e.DetachVol(v.Id); err != nil {
		t.Fatal(err)
	}
	if err := e.Admin.AddFault(kernel.Fault{Command: "createSnapshot", Pending: true}); err != nil {
		t.Fatal(err)
	}
	s, err := e.Raw.Snapshot.CreateSnapshot(e.Raw.Snapshot.NewCreateSnapshotParams(v.Id))
	if err != nil || s.Id == "" {
		t.Fatalf("createSnapshot: %+v, %v", s, err)
	}
	if err := e.Admin.ClearFaults(); err != nil {
		t.Fatal(err)
	}
	p := e.CS.Snapshot.NewListSnapshotsParams()
	p.SetId(s.Id)
	if l, err := e.CS.Snapshot.ListSnapshots(p); err != nil || l.Count != 1 || l.Snapshots[0].State != "BackingUp" {
		t.Fatalf("snapshot during its job: %+v, %v", l, err)
	}
	_, err = e.CS.Volume.DeleteVolume(e.CS.Volume.NewDeleteVolumeParams(v.Id))
	simtesting.WantAPIError(t, err, 431, "There are snapshot operations in progress on the volume, unable to delete it")
	rp := e.CS.Volume.NewResizeVolumeParams(v.Id)
	rp.SetSize(4)
	_, err = e.CS.Volume.ResizeVolume(rp)
	simtesting.WantJobError(t, err, 530, "There is/are unbacked up snapshot(s) on this volume")
	_, err = e.CS.Snapshot.DeleteSnapshot(e.CS.Snapshot.NewDeleteSnapshotParams(s.Id))
	// DefaultSnapshotStrategy names it by SnapshotVO.toString.
	simtesting.WantJobError(t, err, 431, `Can't delete snapshot Snapshot {"uuid":"`+s.Id+`","name":"detached_busy_`)
	simtesting.WantJobError(t, err, 431, "} due to it is in BackingUp Status")
}

// TestDataDisksSurviveTheirVM: expunging a VM detaches the data disks it
// did not delete; they keep their storage and their snapshots.
func TestDataDisksSurviveTheirVM(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.DataVM(t, "cpivm-gone")
	ephemeral := e.Volumes(t, vm)[1]
	v := e.NewVolume(t, "bosh-disk-kept", e.DiskSmall, 0)
	e.AttachVol(t, v.Id, vm)
	if _, err := e.CS.Snapshot.CreateSnapshot(e.CS.Snapshot.NewCreateSnapshotParams(v.Id)); err != nil {
		t.Fatal(err)
	}
	p := e.CS.VirtualMachine.NewDestroyVirtualMachineParams(vm)
	p.SetExpunge(true)
	p.SetVolumeids([]string{ephemeral.Id})
	if _, err := e.CS.VirtualMachine.DestroyVirtualMachine(p); err != nil {
		t.Fatal(err)
	}
	kept := e.volume(t, v.Id)
	if kept == nil || kept.Virtualmachineid != "" || kept.State != "Ready" || kept.Storage != "PS0" {
		t.Fatalf("the persistent disk after its VM went: %+v", kept)
	}
	if e.volume(t, ephemeral.Id) != nil {
		t.Fatal("the ephemeral disk survived")
	}
	sp := e.CS.Snapshot.NewListSnapshotsParams()
	sp.SetVolumeid(v.Id)
	if l, err := e.CS.Snapshot.ListSnapshots(sp); err != nil || l.Count != 1 {
		t.Fatalf("snapshots after the VM went: %+v, %v", l, err)
	}
	// A new VM takes the disk at device 1 again.
	other := e.Deploy(t, e.Params("cpivm-next")).Id
	if a := e.AttachVol(t, v.Id, other); a.Deviceid != 1 {
		t.Fatalf("device %d on the new VM", a.Deviceid)
	}
}

// TestAttachToANeverStartedVM: the volume stays Allocated until the VM's
// first start creates its disks on primary storage.
func TestAttachToANeverStartedVM(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	p := e.Params("cpivm-later")
	p.SetStartvm(false)
	vm := e.Deploy(t, p).Id
	v := e.NewVolume(t, "waiting", e.DiskSmall, 0)
	if a := e.AttachVol(t, v.Id, vm); a.State != "Allocated" || a.Deviceid != 1 || a.Vmstate != "Stopped" {
		t.Fatalf("attached to a never started VM: %+v", a)
	}
	if _, err := e.CS.VirtualMachine.StartVirtualMachine(e.CS.VirtualMachine.NewStartVirtualMachineParams(vm)); err != nil {
		t.Fatal(err)
	}
	if got := e.volume(t, v.Id); got.State != "Ready" || got.Storage != "PS0" {
		t.Fatalf("after the first start: %+v", got)
	}
	if !strings.HasPrefix(e.Volumes(t, vm)[0].Type, "ROOT") {
		t.Fatal("ROOT is not listed first")
	}
}

func TestSnapshotsSurviveARestart(t *testing.T) {
	path := t.TempDir() + "/state.json"
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{StatePath: path})}
	vm := e.DataVM(t, "cpivm-persist")
	v := e.NewVolume(t, "persisted", e.DiskSmall, 0)
	e.AttachVol(t, v.Id, vm)
	s, err := e.CS.Snapshot.CreateSnapshot(e.CS.Snapshot.NewCreateSnapshotParams(v.Id))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Srv.Close(); err != nil {
		t.Fatal(err)
	}
	again := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{StatePath: path})}
	p := again.CS.Snapshot.NewListSnapshotsParams()
	p.SetId(s.Id)
	if l, err := again.CS.Snapshot.ListSnapshots(p); err != nil || l.Count != 1 || l.Snapshots[0].State != "BackedUp" {
		t.Fatalf("after a restart: %+v, %v", l, err)
	}
}
