package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// Disk tests for current stemcells (context vm.stemcell.api_version 3): the
// agent gets disk hints from attach_disk, never from a registry.

type diskHint struct {
	Path     string `json:"path"`
	VolumeID string `json:"volume_id"`
	ID       string `json:"id"`
}

// createVM creates a Small Instance VM with a 2 GiB ephemeral disk and
// returns its CID.
func (e *env) createVM(stemcell, ip string) string {
	e.t.Helper()
	var result []json.RawMessage
	e.call("create_vm", "agent-"+ip, stemcell, smallVM, map[string]any{"default": manualNet(ip)}, []string{}, boshEnv).
		ok(e.t).decode(e.t, &result)
	var cid string
	if len(result) != 2 || json.Unmarshal(result[0], &cid) != nil {
		e.t.Fatalf("create_vm answered %v", result)
	}
	return cid
}

func (e *env) createDisk(sizeMiB int, props map[string]any, vmCID any) string {
	e.t.Helper()
	var cid string
	e.call("create_disk", sizeMiB, props, vmCID).ok(e.t).decode(e.t, &cid)
	return cid
}

func (e *env) attachDisk(vmCID, diskCID string) diskHint {
	e.t.Helper()
	var hint diskHint
	e.call("attach_disk", vmCID, diskCID).ok(e.t).decode(e.t, &hint)
	return hint
}

func (e *env) volume(id string) *csgo.Volume {
	e.t.Helper()
	for _, v := range e.volumes() {
		if v.Id == id {
			return v
		}
	}
	return nil
}

func (e *env) getDisks(vmCID string) []string {
	e.t.Helper()
	var disks []string
	e.call("get_disks", vmCID).ok(e.t).decode(e.t, &disks)
	return disks
}

func serial(uuid string) string { return strings.ReplaceAll(uuid, "-", "")[:20] }

func tagsOf(tags []csgo.Tags) map[string]string {
	m := map[string]string{}
	for _, t := range tags {
		m[t.Key] = t.Value
	}
	return m
}

var diskMeta = map[string]any{"director": "spec-director", "deployment": "cf", "instance_group": "db",
	"instance_index": "0", "instance_id": "4f3c", "attached_at": "2026-01-02T03:04:05Z"}

func TestDiskLifecycle(t *testing.T) { diskLifecycle(t, newEnv(t, nil)) }

// diskLifecycle is the disk and snapshot lifecycle, run outside and inside
// a CloudStack project.
func diskLifecycle(t *testing.T, e *env) {
	vm := e.createVM(e.stemcell(), "10.1.1.70")

	custom := e.createDisk(3000, map[string]any{"disk_offering": "Custom"}, vm)
	small := e.createDisk(4096, map[string]any{"disk_offering": "Small"}, nil)
	if v := e.volume(custom); v == nil || v.Size != 3<<30 || v.Diskofferingname != "Custom" || v.State != "Allocated" ||
		v.Virtualmachineid != "" || !strings.HasPrefix(v.Name, "bosh-disk-") {
		t.Fatalf("create_disk 3000 MiB Custom: %+v", v)
	}
	if v := e.volume(small); v == nil || v.Size != 5<<30 || v.Diskofferingname != "Small" || v.Zonename != zoneName {
		t.Fatalf("create_disk 4096 MiB Small: %+v", v)
	}
	var has bool
	e.call("has_disk", custom).ok(t).decode(t, &has)
	if !has {
		t.Fatal("has_disk false for a new disk")
	}

	// The ephemeral disk has device 1; 3 is the CD-ROM's.
	hint := e.attachDisk(vm, custom)
	if hint != (diskHint{Path: "/dev/xvdc", VolumeID: "2", ID: serial(custom)}) {
		t.Fatalf("attach_disk hint %+v", hint)
	}
	if v := e.volume(custom); v.Virtualmachineid != vm || v.Deviceid != 2 || v.State != "Ready" {
		t.Fatalf("attached disk %+v", v)
	}
	if h := e.attachDisk(vm, small); h != (diskHint{Path: "/dev/xvde", VolumeID: "4", ID: serial(small)}) {
		t.Fatalf("second attach_disk hint %+v", h)
	}
	if again := e.attachDisk(vm, custom); again != hint {
		t.Fatalf("attach_disk of an attached disk: %+v, first %+v", again, hint)
	}
	if got := e.getDisks(vm); len(got) != 2 || !(got[0] == custom && got[1] == small || got[0] == small && got[1] == custom) {
		t.Fatalf("get_disks = %v, want the two persistent disks", got)
	}

	e.call("set_disk_metadata", custom, diskMeta).ok(t)
	// The marks create_disk gave the disk stay beside the metadata.
	if tags := tagsOf(e.volume(custom).Tags); tags["deployment"] != "cf" || tags["instance_group"] != "db" ||
		tags["bosh-director-uuid"] != "spec-director" || tags["bosh-agent-id"] == "" || len(tags) != len(diskMeta)+2 {
		t.Fatalf("disk tags %v", tags)
	}

	var snap string
	e.call("snapshot_disk", custom, diskMeta).ok(t).decode(t, &snap)
	snaps := e.snapshots()
	if len(snaps) != 1 || snaps[0].Id != snap || snaps[0].Volumeid != custom || snaps[0].State != "BackedUp" ||
		tagsOf(snaps[0].Tags)["director"] != "spec-director" {
		t.Fatalf("snapshot_disk %s: %+v", snap, snaps)
	}
	e.call("delete_snapshot", snap).ok(t)
	if len(e.snapshots()) != 0 {
		t.Fatal("delete_snapshot left the snapshot")
	}
	e.call("delete_snapshot", snap).ok(t) // idempotent

	e.call("delete_disk", custom).failed(t, "CloudError", "is attached to VM "+vm)
	e.call("detach_disk", vm, custom).ok(t)
	if v := e.volume(custom); v.Virtualmachineid != "" || v.State != "Ready" {
		t.Fatalf("detached disk %+v", v)
	}
	e.call("detach_disk", vm, custom).ok(t) // idempotent
	if got := e.getDisks(vm); len(got) != 1 || got[0] != small {
		t.Fatalf("get_disks after detach = %v", got)
	}

	// The director resizes detached disks: grow, equal is a no-op, shrink is
	// NotSupported so the director copies instead.
	e.call("resize_disk", custom, 8192).ok(t)
	if v := e.volume(custom); v.Size != 8<<30 {
		t.Fatalf("resized to %d bytes", v.Size)
	}
	e.resetCalls()
	e.call("resize_disk", custom, 8000).ok(t) // 8000 MiB rounds up to the 8 GiB it has
	if n := e.calls()["resizeVolume"]; n != 0 {
		t.Fatalf("resize_disk to the same size called resizeVolume %d times", n)
	}
	e.call("resize_disk", custom, 4096).failed(t, "NotSupported", "cannot shrink")
	// A disk of a fixed offering grows by moving to the customized offering.
	e.call("detach_disk", vm, small).ok(t)
	e.call("resize_disk", small, 10240).ok(t)
	if v := e.volume(small); v.Size != 10<<30 || v.Diskofferingname != "Custom" {
		t.Fatalf("fixed disk resized: %+v", v)
	}
	// XenServer cannot resize a disk attached to a running VM.
	e.attachDisk(vm, small)
	e.call("resize_disk", small, 12288).failed(t, "CloudError", "The VM must be stopped or the disk detached")
	e.call("detach_disk", vm, small).ok(t)

	for _, d := range []string{custom, small} {
		e.call("delete_disk", d).ok(t)
		e.call("delete_disk", d).ok(t) // idempotent
		e.call("has_disk", d).ok(t).decode(t, &has)
		if has || e.volume(d) != nil {
			t.Fatalf("disk %s is still there after delete_disk", d)
		}
	}
}

func (e *env) snapshots() []*csgo.Snapshot {
	e.t.Helper()
	c := e.client()
	p := c.Snapshot.NewListSnapshotsParams()
	p.SetListall(true)
	e.inProject(p)
	resp, err := c.Snapshot.ListSnapshots(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.Snapshots
}

func TestDiskErrors(t *testing.T) {
	e := newEnv(t, nil, "-extra-zone", "Sandbox-simulator-2")
	stemcell := e.stemcell()
	vm := e.createVM(stemcell, "10.1.1.72")
	other := e.createVM(stemcell, "10.1.1.73")
	e.resetCalls()
	for _, c := range []struct {
		name    string
		size    int
		props   map[string]any
		typ     string
		message string
	}{
		{"unknown disk offering", 1024, map[string]any{"disk_offering": "Huge"}, "CloudError", `no disk offering "Huge"`},
		{"size 0", 0, map[string]any{"disk_offering": "Custom"}, "CloudError", "must be positive"},
		{"negative size", -1, map[string]any{"disk_offering": "Custom"}, "CloudError", "must be positive"},
		{"fixed offering too small", 6000, map[string]any{"disk_offering": "Small"}, "CloudError", "less than the 6000 MiB"},
		{"unknown property", 1024, map[string]any{"disk_offering": "Custom", "iops": 5}, "CloudError", "iops"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.call("create_disk", c.size, c.props, nil).failed(t, c.typ, c.message)
		})
	}
	if n := e.calls()["createVolume"]; n != 0 {
		t.Fatalf("bad create_disk input reached createVolume %d times", n)
	}

	disk := e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, vm)
	// A size of 0, below or null is bad input, not a shrink to copy around.
	e.resetCalls()
	for _, size := range []any{0, -1024, nil} {
		e.call("resize_disk", disk, size).failed(t, "CloudError", "must be a positive number of MiB")
	}
	if n := total(e.calls()); n != 0 {
		t.Fatalf("bad resize_disk input made %d CloudStack calls", n)
	}
	// Never attached, the disk has no storage yet: nothing to snapshot.
	e.call("snapshot_disk", disk, diskMeta).failed(t, "CloudError", "is not in Ready state but Allocated")
	e.call("snapshot_disk", "0d6f3e4a-5555-4555-8555-555555555555", diskMeta).failed(t, "DiskNotFound", "0d6f3e4a-5555")
	missingVM := "0d6f3e4a-3333-4333-8333-333333333333"
	e.call("attach_disk", missingVM, disk).failed(t, "VMNotFound", missingVM)
	e.call("attach_disk", vm, "0d6f3e4a-4444-4444-8444-444444444444").failed(t, "DiskNotFound", "0d6f3e4a-4444")
	e.call("create_disk", 1024, map[string]any{"disk_offering": "Custom"}, missingVM).failed(t, "VMNotFound", missingVM)

	// Attached to one VM, the disk is neither attachable to nor detachable
	// from another.
	e.attachDisk(vm, disk)
	e.call("attach_disk", other, disk).failed(t, "CloudError", "attached to another VM")
	e.call("detach_disk", other, disk).failed(t, "DiskNotAttached", "is attached to VM "+vm)
	e.call("detach_disk", vm, disk).ok(t)

	// A disk made in another zone (create_disk without a VM goes to the
	// default zone) cannot be attached to the VM.
	far := e.withDefaultZone("Sandbox-simulator-2")
	elsewhere := far.createDisk(1024, map[string]any{"disk_offering": "Custom"}, nil)
	if v := e.volume(elsewhere); v.Zonename != "Sandbox-simulator-2" {
		t.Fatalf("create_disk without a VM went to zone %s", v.Zonename)
	}
	e.call("attach_disk", vm, elsewhere).failed(t, "CloudError", "is in zone")
	if v := e.volume(elsewhere); v.Virtualmachineid != "" {
		t.Fatal("the disk of another zone got attached")
	}
}

// withDefaultZone is the same environment with another cloudstack.default_zone.
func (e *env) withDefaultZone(zone string) *env {
	return e.withConfig(func(cfg map[string]any) { section(cfg, "cloudstack")["default_zone"] = zone })
}

// withConfig is the same environment with cpi.json edited.
func (e *env) withConfig(edit func(cfg map[string]any)) *env {
	e.t.Helper()
	raw, err := os.ReadFile(e.config)
	if err != nil {
		e.t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		e.t.Fatal(err)
	}
	edit(cfg)
	other := *e
	other.config = writeJSON(e.t, cfg)
	return &other
}

// TestConcurrentAttachDiskToOneVM runs two CPI processes attaching disks to
// one VM at the same moment: both succeed, on different devices.
func TestConcurrentAttachDiskToOneVM(t *testing.T) {
	e := newEnv(t, nil, "-job-latency", "300ms")
	vm := e.createVM(e.stemcell(), "10.1.1.74")
	disks := []string{
		e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, nil),
		e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, nil),
	}
	hints := make([]diskHint, len(disks))
	errs := make([]error, len(disks))
	var wg sync.WaitGroup
	for i, d := range disks {
		wg.Go(func() { hints[i], errs[i] = e.attachConcurrently(vm, d) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if hints[0].Path == hints[1].Path || hints[0].VolumeID == hints[1].VolumeID {
		t.Fatalf("two attaches share a device: %+v", hints)
	}
	for i, d := range disks {
		if v := e.volume(d); v.Virtualmachineid != vm || fmt.Sprint(v.Deviceid) != hints[i].VolumeID {
			t.Fatalf("disk %s: %+v, hint %+v", d, v, hints[i])
		}
	}
	if got := e.getDisks(vm); len(got) != 2 {
		t.Fatalf("get_disks = %v", got)
	}
}

// attachConcurrently runs attach_disk in its own CPI process without
// touching the test's state, so goroutines may call it.
func (e *env) attachConcurrently(vm, disk string) (diskHint, error) {
	req, _ := json.Marshal(map[string]any{"method": "attach_disk", "arguments": []any{vm, disk}, "api_version": 2,
		"context": map[string]any{"director_uuid": "spec-director", "request_id": "cpi-" + disk[:8],
			"vm": map[string]any{"stemcell": map[string]any{"api_version": 3}}}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cpiBin, "-configPath", e.config)
	cmd.Stdin = bytes.NewReader(req)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	_ = cmd.Run()
	var r response
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return diskHint{}, fmt.Errorf("attach_disk %s: stdout %q: %w", disk, stdout.String(), err)
	}
	if r.Error != nil {
		return diskHint{}, fmt.Errorf("attach_disk %s: %s: %s", disk, r.Error.Type, r.Error.Message)
	}
	var hint diskHint
	if err := json.Unmarshal(r.Result, &hint); err != nil {
		return diskHint{}, fmt.Errorf("attach_disk %s answered %s", disk, r.Result)
	}
	return hint, nil
}
