package spec

import "testing"

// update_disk, which the director calls on a detached disk when
// director.enable_cpi_update_disk is on: the disk takes the disk type's
// offering and size in place and keeps its CID; what CloudStack cannot do in
// place is NotSupported, so the director copies the disk.
func TestUpdateDisk(t *testing.T) {
	e := newEnv(t, nil)
	vm := e.createVM(e.stemcell(), "10.1.1.80")
	disk := e.createDisk(2048, map[string]any{"disk_offering": "Custom"}, vm)
	e.attachDisk(vm, disk) // created on primary storage, then detached as the director leaves it
	e.call("detach_disk", vm, disk).ok(t)
	update := func(mib int, props map[string]any) response {
		t.Helper()
		return e.call("update_disk", disk, mib, props)
	}
	same := func(r response) {
		t.Helper()
		var cid string
		r.ok(t).decode(t, &cid)
		if cid != disk {
			t.Fatalf("update_disk answered %q, not the disk's CID %s", cid, disk)
		}
	}

	// A new offering, in place.
	e.resetCalls()
	same(update(20480, map[string]any{"disk_offering": "Medium"}))
	if v := e.volume(disk); v.Diskofferingname != "Medium" || v.Size != 20<<30 || v.State != "Ready" {
		t.Fatalf("after the change to Medium: %+v", v)
	}
	if n := e.calls()["changeOfferingForVolume"]; n != 1 {
		t.Fatalf("changeOfferingForVolume called %d times", n)
	}
	e.sentAutomigrate()
	// Back to the customized offering, larger; then growth on it.
	same(update(30*1024, map[string]any{"disk_offering": "Custom"}))
	e.resetCalls()
	same(update(40*1024, map[string]any{"disk_offering": "Custom"}))
	if v := e.volume(disk); v.Diskofferingname != "Custom" || v.Size != 40<<30 {
		t.Fatalf("after growth: %+v", v)
	}
	if c := e.calls(); c["resizeVolume"] != 1 || c["changeOfferingForVolume"] != 0 {
		t.Fatalf("growth on the same offering: %v", c)
	}
	e.resetCalls()
	same(update(40*1024-100, map[string]any{"disk_offering": "Custom"})) // rounds up to the 40 GiB it has
	if c := e.calls(); c["resizeVolume"]+c["changeOfferingForVolume"] != 0 {
		t.Fatalf("an update to what the disk is changed it: %v", c)
	}

	// NotSupported: smaller, and a change CloudStack refuses.
	update(10*1024, map[string]any{"disk_offering": "Custom"}).failed(t, "NotSupported", "cannot shrink")
	update(5*1024, map[string]any{"disk_offering": "Small"}).failed(t, "NotSupported", "cannot shrink")
	e.strictOffering("Strict 50", 50)
	update(50*1024, map[string]any{"disk_offering": "Strict 50"}).
		failed(t, "NotSupported", "Disk offering size strictness does not match with new disk offering.")
	// XenServer resizes a disk attached to a running VM only offline.
	e.attachDisk(vm, disk)
	update(45*1024, map[string]any{"disk_offering": "Custom"}).failed(t, "NotSupported", "resizes its disks only while it is stopped")
	update(45*1024, map[string]any{"disk_offering": "Large"}).failed(t, "NotSupported", "resizes its disks only while it is stopped")
	e.call("detach_disk", vm, disk).ok(t)
	if v := e.volume(disk); v.Diskofferingname != "Custom" || v.Size != 40<<30 {
		t.Fatalf("refused updates changed the disk: %+v", v)
	}

	// Bad input is a CloudError before CloudStack is asked; a missing disk DiskNotFound.
	e.resetCalls()
	update(1024, map[string]any{"disk_offering": "Custom", "iops": 5}).failed(t, "CloudError", "iops")
	update(0, map[string]any{"disk_offering": "Custom"}).failed(t, "CloudError", "must be a positive number of MiB")
	if n := total(e.calls()); n != 0 {
		t.Fatalf("bad update_disk input made %d CloudStack calls", n)
	}
	update(99*1024, map[string]any{"disk_offering": "Medium"}).failed(t, "CloudError", "less than the 101376 MiB")
	missing := "0d6f3e4a-6666-4666-8666-666666666666"
	e.call("update_disk", missing, 1024, map[string]any{}).failed(t, "DiskNotFound", missing)
}

// strictOffering creates a fixed disk offering whose size is strict
// (disksizestrictness, 4.17).
func (e *env) strictOffering(name string, sizeGB int64) {
	e.t.Helper()
	c := e.client()
	p := c.DiskOffering.NewCreateDiskOfferingParams(name, name)
	p.SetDisksize(sizeGB)
	p.SetDisksizestrictness(true)
	if _, err := c.DiskOffering.CreateDiskOffering(p); err != nil {
		e.t.Fatal(err)
	}
}

// sentAutomigrate checks the CPI's changeOfferingForVolume asked for
// automigrate: CloudStack takes an absent one as false and then refuses
// every change that needs the volume on another pool.
func (e *env) sentAutomigrate() {
	e.t.Helper()
	reqs, err := e.sim.Admin.Requests()
	if err != nil {
		e.t.Fatal(err)
	}
	sent := 0
	for _, q := range reqs {
		if q.Command == "changeOfferingForVolume" {
			sent++
			if q.Params["automigrate"] != "true" {
				e.t.Fatalf("changeOfferingForVolume without automigrate=true: %v", q.Params)
			}
		}
	}
	if sent == 0 {
		e.t.Fatal("the request log holds no changeOfferingForVolume")
	}
}
