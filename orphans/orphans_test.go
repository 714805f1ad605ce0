package orphans_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/termtable"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
	"github.com/bosh-cloudstack/cloudstack-cpi/orphans"
)

// fakeCloud answers the listings from its fields and records removals; a
// method it does not override panics (the embedded interface is nil), so a
// test fails on any call it did not expect.
type fakeCloud struct {
	orphans.Cloud
	vms       []*cloudstack.VM
	volumes   []cloudstack.Volume
	snapshots []*cloudstack.Snapshot
	addrs     []*cloudstack.PublicIP
	rules     []cloudstack.LBRule
	members   map[string][]string
	templates []cloudstack.Template
	isos      []cloudstack.ISO
	removed   []string
	gone      map[string]bool // removals CloudStack answers "entity does not exist"
}

func (f *fakeCloud) AllVMs() ([]*cloudstack.VM, error)                   { return f.vms, nil }
func (f *fakeCloud) DataVolumes() ([]cloudstack.Volume, error)           { return f.volumes, nil }
func (f *fakeCloud) AllSnapshots() ([]*cloudstack.Snapshot, error)       { return f.snapshots, nil }
func (f *fakeCloud) AllocatedPublicIPs() ([]*cloudstack.PublicIP, error) { return f.addrs, nil }
func (f *fakeCloud) AllLBRules() ([]cloudstack.LBRule, error)            { return f.rules, nil }
func (f *fakeCloud) LBRuleVMs(id string) ([]string, error)               { return f.members[id], nil }
func (f *fakeCloud) OwnTemplates(string) ([]cloudstack.Template, error)  { return f.templates, nil }
func (f *fakeCloud) OwnISOs(string) ([]cloudstack.ISO, error)            { return f.isos, nil }

func (f *fakeCloud) record(what, id string) error {
	f.removed = append(f.removed, what+" "+id)
	if f.gone[id] {
		return &cloudstack.APIError{Command: what, ErrorCode: 431, Text: "entity does not exist"}
	}
	return nil
}

func (f *fakeCloud) FindVM(id string) (*cloudstack.VM, error) {
	for _, vm := range f.vms {
		if vm.ID == id {
			return vm, nil
		}
	}
	return nil, nil
}
func (f *fakeCloud) VMVolumes(string) ([]cloudstack.Volume, error) { return nil, nil }
func (f *fakeCloud) VMLBRules(string) ([]cloudstack.LBRule, error) { return nil, nil }
func (f *fakeCloud) DestroyVM(id string, _ bool, _ []string) error {
	return f.record("destroyVirtualMachine", id)
}
func (f *fakeCloud) DeleteLBRule(id string) error                      { return f.record("deleteLoadBalancerRule", id) }
func (f *fakeCloud) ReleasePublicIP(id string) error                   { return f.record("disassociateIpAddress", id) }
func (f *fakeCloud) DeleteISO(id string) error                         { return f.record("deleteIso", id) }
func (f *fakeCloud) DeleteVolume(id string) error                      { return f.record("deleteVolume", id) }
func (f *fakeCloud) DeleteSnapshot(id string) error                    { return f.record("deleteSnapshot", id) }
func (f *fakeCloud) DeleteTemplate(id string, _ bool) error            { return f.record("deleteTemplate", id) }
func (f *fakeCloud) PublicIPByID(string) (*cloudstack.PublicIP, error) { return nil, nil }

var (
	now  = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	old  = now.Add(-2 * time.Hour)
	newT = now.Add(-time.Minute)
	dead = "999999999@" + hostname()
)

func hostname() string { h, _ := os.Hostname(); return h }

// incompleteVM is a VM whose create_vm for agent never finished.
func incompleteVM(id, director, vip, agent string, created time.Time) *cloudstack.VM {
	return &cloudstack.VM{ID: id, Name: "vm-" + id, State: "Running", Created: created,
		DisplayName: marks.NewVM(director, vip, agent).DisplayName()}
}

func find(t *testing.T, f *fakeCloud, o orphans.Options) []orphans.Row {
	t.Helper()
	o.Now = now
	if o.OlderThan == 0 {
		o.OlderThan = time.Hour
	}
	rows, err := orphans.Find(f, o)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func ids(rows []orphans.Row) string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Kind+":"+r.ID)
	}
	return strings.Join(out, " ")
}

// TestFindSparesYoungAndUnmarked: an old incomplete VM is listed with its
// address and rule; a young one (its create_vm may still run) is spared
// with what hangs on it; a complete or unmarked VM is never listed.
func TestFindSparesYoungAndUnmarked(t *testing.T) {
	oldVM := incompleteVM("old", "d1", "", "a1", old)
	oldVM.PublicIPID = "ip-old"
	youngVM := incompleteVM("young", "d1", "", "a2", newT)
	complete := &cloudstack.VM{ID: "done", Name: "vm-done", DisplayName: "vm-done", Created: old,
		Tags: map[string]string{marks.DirectorTag: "d1"}}
	operators := &cloudstack.VM{ID: "op", Name: "web", DisplayName: "web", Created: old}
	acquired := map[string]string{marks.AcquiredTag: "true"}
	f := &fakeCloud{
		vms: []*cloudstack.VM{oldVM, youngVM, complete, operators},
		addrs: []*cloudstack.PublicIP{
			{ID: "ip-old", IP: "192.0.2.1", VMID: "old", StaticNAT: true, Tags: acquired, Allocated: old},
			{ID: "ip-young", IP: "192.0.2.2", VMID: "young", StaticNAT: true, Tags: acquired, Allocated: newT},
			{ID: "ip-done", IP: "192.0.2.3", VMID: "done", StaticNAT: true, Tags: acquired, Allocated: old},
			{ID: "ip-loose", IP: "192.0.2.4", Tags: acquired, Allocated: old},
			{ID: "ip-balanced", IP: "192.0.2.6", Tags: acquired, Allocated: old},
			{ID: "ip-operator", IP: "192.0.2.5", Allocated: old},
		},
		rules: []cloudstack.LBRule{
			{ID: "r-old", Description: marks.LB{Director: "d1", Agent: "a1"}.Description()},
			{ID: "r-young", Description: marks.LB{Director: "d1", Agent: "a2"}.Description()},
			{ID: "r-done", Description: marks.LB{Director: "d1", Agent: "a3"}.Description()},
			{ID: "r-operator", Description: "the operator's", PublicIPID: "ip-balanced"},
		},
		members: map[string][]string{"r-old": {"old"}, "r-done": {"done"}},
	}
	rows := find(t, f, orphans.Options{})
	want := "lb-rule:r-old public-ip:ip-old vm:old public-ip:ip-loose"
	if got := ids(rows); got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	if rows[2].Director != "d1" || rows[3].Director != "" {
		t.Errorf("directors %q %q, want d1 and \"\" (an acquired address names none, and comes last)", rows[2].Director, rows[3].Director)
	}
	if got := ids(find(t, f, orphans.Options{Director: "d1"})); got != "lb-rule:r-old public-ip:ip-old vm:old" {
		t.Errorf("-director d1: %s", got)
	}
	if got := ids(find(t, f, orphans.Options{Director: "d2"})); got != "" {
		t.Errorf("-director d2: %s", got)
	}
	// Against `bosh vms --json`, the complete VM the director does not know
	// is listed, with its address and the rule only it is behind.
	known := &orphans.Known{}
	writeKnown(t, known, `{"Tables":[{"Rows":[{"vm_cid":"another"}]}]}`)
	want = "lb-rule:r-old lb-rule:r-done public-ip:ip-old public-ip:ip-done vm:done vm:old public-ip:ip-loose"
	if got := ids(find(t, f, orphans.Options{Known: known})); got != want {
		t.Errorf("-known vm_cid: %s, want %s", got, want)
	}
	// The young rule, with no VM behind it yet, is its running create_vm's.
	f.members["r-young"] = nil
	if got := ids(find(t, f, orphans.Options{OlderThan: 30 * time.Second})); !strings.Contains(got, "lb-rule:r-young") {
		t.Errorf("-older-than 30s: the minute-old VM's rule is not listed: %s", got)
	}
}

// TestFindIntendedAddresses: an address acquired by a create_vm killed
// before its createTags has no tag; the VM's mark names it: it is listed
// with a listed VM and spared with a young one.
func TestFindIntendedAddresses(t *testing.T) {
	f := &fakeCloud{
		vms: []*cloudstack.VM{incompleteVM("old", "d1", "192.0.2.7", "a1", old),
			incompleteVM("young", "d1", "192.0.2.8", "a2", newT)},
		addrs: []*cloudstack.PublicIP{
			{ID: "ip-old", IP: "192.0.2.7", Allocated: old},
			{ID: "ip-young", IP: "192.0.2.8", Allocated: old},
			{ID: "ip-operator", IP: "192.0.2.9", Allocated: old},
			{ID: "ip-snat", IP: "192.0.2.7", SourceNAT: true, Allocated: old},
		},
	}
	rows := find(t, f, orphans.Options{})
	if got := ids(rows); got != "public-ip:ip-old vm:old" || rows[0].Director != "d1" {
		t.Fatalf("rows %s (%+v)", got, rows)
	}
}

// TestFindStorage: disks an interrupted create_disk left, incomplete
// snapshots and templates of dead processes; a running process's, a used
// disk and the director's detached disks, snapshots and stemcells
// (without -known of their kind) are spared.
func TestFindStorage(t *testing.T) {
	self := marks.ThisProcess()
	mine := map[string]string{marks.DirectorTag: "d1"}
	diskFor := func(owner string) string {
		return marks.DiskNamePrefix + "u" + marks.DiskByInfix + owner + "-for-vm1"
	}
	incomplete := func(owner string) string {
		return marks.Template{Director: "d1", Incomplete: true, Owner: owner, Until: now}.Apply("stemcell")
	}
	f := &fakeCloud{
		volumes: []cloudstack.Volume{
			{ID: "v-dead", Name: diskFor(dead), Type: "DATADISK", State: "Allocated", Created: old, Tags: mine},
			{ID: "v-alive", Name: diskFor(self), Type: "DATADISK", State: "Allocated", Created: old, Tags: mine},
			{ID: "v-used", Name: diskFor(dead), Type: "DATADISK", State: "Ready", Created: old, Tags: mine},
			{ID: "v-detached", Name: marks.DiskNamePrefix + "x", Type: "DATADISK", State: "Ready", Created: old, Tags: mine},
			{ID: "v-operator", Name: "data", Type: "DATADISK", State: "Ready", Created: old},
			{ID: "v-attached", Name: marks.DiskNamePrefix + "a", Type: "DATADISK", State: "Ready", VMID: "vm-1",
				Created: old, Tags: mine},
		},
		snapshots: []*cloudstack.Snapshot{
			{ID: "s-dead", State: "BackedUp", Created: old, VolumeID: "v-attached",
				Tags: map[string]string{marks.DirectorTag: "d1", marks.IncompleteTag: dead}},
			{ID: "s-alive", State: "BackedUp", Created: old, Tags: map[string]string{marks.IncompleteTag: self}},
			{ID: "s-busy", State: "BackingUp", Created: old, Tags: map[string]string{marks.IncompleteTag: dead}},
			// Complete: listed against -known snapshot CIDs, but for those
			// of a detached disk (an orphaned disk's, which no bosh command
			// lists) unless the disk is listed.
			{ID: "s-done", State: "BackedUp", Created: old, VolumeID: "v-gone", Tags: mine},
			{ID: "s-named", Name: marks.SnapshotNamePrefix + "u", State: "BackedUp", Created: old, VolumeID: "v-attached"},
			{ID: "s-known", Name: marks.SnapshotNamePrefix + "k", State: "BackedUp", Created: old, VolumeID: "v-attached", Tags: mine},
			{ID: "s-young", Name: marks.SnapshotNamePrefix + "y", State: "BackedUp", Created: newT, Tags: mine},
			{ID: "s-operator", Name: "before-upgrade", State: "BackedUp", Created: old, VolumeID: "v-attached"},
			{ID: "s-orphaned", Name: marks.SnapshotNamePrefix + "o", State: "BackedUp", Created: old, VolumeID: "v-used", Tags: mine},
			{ID: "s-of-lost", Name: marks.SnapshotNamePrefix + "l", State: "BackedUp", Created: old, VolumeID: "v-detached", Tags: mine},
		},
		templates: []cloudstack.Template{
			{ID: "t-dead", DisplayText: incomplete(dead), Created: old},
			{ID: "t-dead", DisplayText: incomplete(dead), Created: old, ZoneID: "second zone's copy"},
			{ID: "t-alive", DisplayText: incomplete(self), Created: old},
			{ID: "t-done", DisplayText: marks.Template{Director: "d1"}.Apply("stemcell"), Created: old},
			{ID: "t-operator", DisplayText: "ubuntu", Created: old},
		},
	}
	if got := ids(find(t, f, orphans.Options{})); got != "volume:v-dead snapshot:s-dead template:t-dead" {
		t.Fatalf("rows %s", got)
	}
	known := &orphans.Known{}
	writeKnown(t, known, `{"Tables":[{"Rows":[{"disk_cid":"v-used"}]}]}`)
	if got := ids(find(t, f, orphans.Options{Known: known})); got != "volume:v-dead volume:v-detached snapshot:s-dead "+
		"snapshot:s-of-lost template:t-dead" {
		t.Fatalf("-known with disk CIDs: %s", got)
	}
	writeKnown(t, known, "v-detached\ns-known\n")
	// A snapshot whose tags name no director comes last.
	if got := ids(find(t, f, orphans.Options{Known: known})); got != "volume:v-dead snapshot:s-dead snapshot:s-done "+
		"template:t-dead template:t-done snapshot:s-named" {
		t.Fatalf("-known with a file of lines (every kind): %s", got)
	}
	snapshots := &orphans.Known{}
	writeKnown(t, snapshots, `{"Tables":[{"Content":"snapshots","Header":{"cid":"CID"},"Rows":[{"instance":"db/1",`+
		`"cid":"s-known","created_at":"x","clean":"true"}]}]}`)
	if got := ids(find(t, f, orphans.Options{Known: snapshots})); got != "volume:v-dead snapshot:s-dead snapshot:s-done "+
		"template:t-dead snapshot:s-named" {
		t.Fatalf("-known with bosh snapshots --json: %s", got)
	}
}

// TestFindISOs: a config drive goes with its VM when that is listed, stays
// with a VM that is not, and alone is listed once its create_vm is gone.
func TestFindISOs(t *testing.T) {
	vm := incompleteVM("old", "d1", "", "a1", old)
	vm.ISOID = "iso-attached"
	running := &cloudstack.VM{ID: "ok", Name: "vm-ok", DisplayName: "vm-ok", ISOID: "iso-running", Created: old}
	mark := func(incomplete bool, owner string) string {
		return marks.Template{Director: "d1", Agent: "a", Incomplete: incomplete, Owner: owner, Until: now}.Apply("drive")
	}
	f := &fakeCloud{
		vms: []*cloudstack.VM{vm, running},
		isos: []cloudstack.ISO{
			{ID: "iso-attached", Name: "vm-old", DisplayText: mark(false, ""), Created: old},
			{ID: "iso-running", Name: "vm-ok", DisplayText: mark(false, ""), Created: old},
			{ID: "iso-left", Name: "vm-x", DisplayText: mark(true, dead), Created: old},
			{ID: "iso-young", Name: "vm-y", DisplayText: mark(true, dead), Created: newT},
			{ID: "iso-alive", Name: "vm-z", DisplayText: mark(true, marks.ThisProcess()), Created: old},
			{ID: "iso-operator", Name: "tools", DisplayText: "VMware tools", Created: old},
		},
	}
	if got := ids(find(t, f, orphans.Options{})); got != "vm:old iso:iso-attached iso:iso-left" {
		t.Fatalf("rows %s", got)
	}
}

// TestDeleteInOrderAndIdempotently: rules and addresses go before the VM,
// the VM before its ISO; gone already counts as deleted; a VM that lost its
// incomplete mark meanwhile is refused.
func TestDeleteInOrderAndIdempotently(t *testing.T) {
	vm := incompleteVM("old", "d1", "", "a1", old)
	f := &fakeCloud{vms: []*cloudstack.VM{vm}, gone: map[string]bool{"ip": true}}
	rows := find(t, f, orphans.Options{})
	rows = append(rows, orphans.Row{Kind: orphans.KindISO, ID: "iso"}, orphans.Row{Kind: orphans.KindPublicIP, ID: "ip"},
		orphans.Row{Kind: orphans.KindLBRule, ID: "rule"})
	if failed := orphans.Delete(f, rows, orphans.Removal{Expunge: true}); failed != 0 {
		t.Fatalf("%d failed: %+v", failed, rows)
	}
	want := "deleteLoadBalancerRule rule,disassociateIpAddress ip,destroyVirtualMachine old,deleteIso iso"
	if got := strings.Join(f.removed, ","); got != want {
		t.Fatalf("removed %s, want %s", got, want)
	}
	for _, r := range rows {
		if !r.Deleted {
			t.Errorf("%s %s not marked deleted", r.Kind, r.ID)
		}
	}
	// The create_vm finished after the listing: its VM is the director's.
	listed := find(t, f, orphans.Options{})
	vm.DisplayName = vm.Name
	f.removed = nil
	if failed := orphans.Delete(f, listed, orphans.Removal{Expunge: true}); failed != 1 || len(f.removed) != 0 ||
		!strings.Contains(listed[0].Error, "no longer carries the CPI's marks") {
		t.Fatalf("a VM that lost its mark: %d failed, removed %v, row %+v", failed, f.removed, listed[0])
	}
}

// TestKnownFiles: the bosh CLI's JSON covers the kinds of its CID columns
// (the header's titles are not CIDs; a cell may hold several disks; a
// "cid" is a snapshot's in the snapshots table, else a stemcell's); a file
// of lines covers every kind; JSON without a CID column is refused.
func TestKnownFiles(t *testing.T) {
	k := &orphans.Known{}
	writeKnown(t, k, `{"Tables":[{"Header":{"vm_cid":"VM CID","disk_cids":"Disk CIDs"},`+
		`"Rows":[{"vm_cid":"vm-1","disk_cids":"d-1\nd-2"},{"vm_cid":"vm-2","disk_cids":""}]}]}`)
	switch {
	case !k.Has("vm-1", "x") || !k.Has("d-2") || k.Has("VM CID") || k.Has(""):
		t.Errorf("CIDs read wrongly")
	case !k.Covers(orphans.KindVM) || !k.Covers(orphans.KindVolume) || k.Covers(orphans.KindTemplate):
		t.Errorf("coverage: vm %v disk %v stemcell %v", k.Covers(orphans.KindVM), k.Covers(orphans.KindVolume),
			k.Covers(orphans.KindTemplate))
	case !k.Unknown(orphans.KindVolume, "d-3") || k.Unknown(orphans.KindVolume, "d-1") || k.Unknown(orphans.KindTemplate, "s"):
		t.Errorf("Unknown wrong")
	}
	// Both `bosh stemcells --json` and `bosh snapshots --json` name their
	// CID column "cid": the table's Content tells them apart.
	for content, kind := range map[string]string{"stemcells": orphans.KindTemplate, "snapshots": orphans.KindSnapshot} {
		other := map[string]string{"stemcells": orphans.KindSnapshot, "snapshots": orphans.KindTemplate}[content]
		byTable := &orphans.Known{}
		writeKnown(t, byTable, `{"Tables":[{"Content":"`+content+`","Header":{"cid":"CID"},"Rows":[{"cid":"c-1"}]}]}`)
		if !byTable.Has("c-1") || !byTable.Covers(kind) || byTable.Covers(other) {
			t.Errorf("%s: c-1 %v, covers %s %v, %s %v", content, byTable.Has("c-1"), kind, byTable.Covers(kind), other,
				byTable.Covers(other))
		}
	}
	writeKnown(t, k, "# stemcells\nsc-1  extra words\n\n")
	if !k.Has("sc-1") || k.Has("extra") {
		t.Errorf("a file of lines: sc-1 %v, extra %v", k.Has("sc-1"), k.Has("extra"))
	}
	for _, kind := range []string{orphans.KindVM, orphans.KindVolume, orphans.KindSnapshot, orphans.KindTemplate} {
		if !k.Covers(kind) {
			t.Errorf("a file of lines does not cover %s", kind)
		}
	}
	for _, bad := range []string{`{"Tables": [`, `{"Lines": ["Succeeded"]}`} {
		if err := (&orphans.Known{}).ReadFile(writeTemp(t, bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if err := (&orphans.Known{}).ReadFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file accepted")
	}
}

// TestTablePrintsAgesAndSizes: ages to the minute, sizes in binary units,
// "-" for what CloudStack does not say, the outcome of -delete first.
func TestTablePrintsAgesAndSizes(t *testing.T) {
	rows := []orphans.Row{
		{Director: "d1", Kind: "volume", ID: "v", Name: "disk", Created: now.Add(-90 * time.Minute), SizeBytes: 3 << 30, Why: "why", Deleted: true},
		{Kind: "lb-rule", ID: "r", Name: "web", Why: "why", Error: "refused"},
		{Kind: "vm", ID: "m", Created: now.Add(-72 * time.Hour), Why: "why"},
	}
	got := fmt.Sprint(orphans.Table(rows, now, true).Rows)
	want := "[[d1 volume v disk 1h30m 3.0 GiB deleted; why] [- lb-rule r web - - NOT deleted; why] [- vm m - 3d - why]]"
	if got != want {
		t.Fatalf("rows\n%s\nwant\n%s", got, want)
	}
	var b strings.Builder
	rows[0].Name = strings.Repeat("n", 60)
	if err := orphans.Write(&b, termtable.Output{Width: 100}, rows, now); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if !strings.HasPrefix(text, "director d1: 1\nKIND") || !strings.Contains(text, "\nno director named (the mark names none): 2\n") ||
		!strings.Contains(text, strings.Repeat("n", 39)+"…  1h30m") {
		t.Errorf("on a terminal:\n%s", text)
	}
	b.Reset()
	if err := orphans.Write(&b, termtable.Output{Width: 100}, nil, now); err != nil || b.String() != "no orphans\n" {
		t.Errorf("nothing on a terminal: %q", b.String())
	}
}

func writeKnown(t *testing.T, k *orphans.Known, text string) {
	t.Helper()
	if err := k.ReadFile(writeTemp(t, text)); err != nil {
		t.Fatal(err)
	}
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "known")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFindLeavesExpungingVMsOut: a VM CloudStack is expunging is no longer
// the CPI's to remove, incomplete or not; a Destroyed one still is.
func TestFindLeavesExpungingVMsOut(t *testing.T) {
	expunging := incompleteVM("expunging", "d1", "", "a1", old)
	expunging.State = cloudstack.VMExpunging
	destroyed := incompleteVM("destroyed", "d1", "", "a2", old)
	destroyed.State = cloudstack.VMDestroyed
	f := &fakeCloud{vms: []*cloudstack.VM{expunging, destroyed}}
	if got := ids(find(t, f, orphans.Options{})); got != "vm:destroyed" {
		t.Fatalf("rows %s, want vm:destroyed alone", got)
	}
}
