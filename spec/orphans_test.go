package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// `cloudstack-cpi orphans`, through the built binary, after kill -9 of
// the CPI in the middle of create_vm (with a vip and with an lbs entry),
// create_disk, snapshot_disk and create_stemcell.

// orphanRow is one row of `orphans -json`.
type orphanRow struct {
	Director   string `json:"director"`
	Kind       string `json:"kind"`
	ID         string `json:"id"`
	Name       string `json:"name"`
	AgeSeconds *int64 `json:"age_seconds"`
	SizeBytes  int64  `json:"size_bytes"`
	Why        string `json:"why"`
	Deleted    bool   `json:"deleted"`
	Error      string `json:"error"`
}

// orphansRun is one run of the command.
type orphansRun struct {
	rows           []orphanRow
	stdout, stderr string
	code           int
}

func (o orphansRun) ids() []string {
	var ids []string
	for _, r := range o.rows {
		ids = append(ids, r.ID)
	}
	sort.Strings(ids)
	return ids
}

func (o orphansRun) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", o.code, o.stdout, o.stderr)
}

// orphans runs `cloudstack-cpi orphans -configPath … -json args…`.
func (e *env) orphans(args ...string) orphansRun {
	e.t.Helper()
	o := e.orphansText(append([]string{"-json"}, args...)...)
	var doc struct {
		Orphans []orphanRow `json:"orphans"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &doc); err != nil {
		e.t.Fatalf("orphans -json printed no JSON (%v):\n%s", err, o)
	}
	o.rows = doc.Orphans
	return o
}

// orphansText runs the command as an operator does, its output a pipe.
func (e *env) orphansText(args ...string) orphansRun {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cpiBin, append([]string{"orphans", "-configPath", e.config}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	o := orphansRun{stdout: stdout.String(), stderr: stderr.String()}
	switch {
	case errors.As(err, &exit):
		o.code = exit.ExitCode()
	case err != nil:
		e.t.Fatal(err)
	}
	for _, secret := range []string{apiKey, secretKey, "signature="} {
		if strings.Contains(o.stdout+o.stderr, secret) {
			e.t.Fatalf("a secret reached orphans' output:\n%s", o)
		}
	}
	return o
}

// orphanScene is a director whose CPI was killed mid-call five times,
// beside resources the CPI never marked.
type orphanScene struct {
	d        *director
	unmarked []string // the operator's and an earlier CPI's: never listed
	heldDisk string   // a detached persistent disk the director knows
	lostDisk string   // one it forgot (its CID never reached it, say)
}

func newOrphanScene(t *testing.T) *orphanScene {
	e := newEnv(t, nil, "-upload-operation-timeout", uploadTimeout.String())
	stemcell := e.crashStemcell()
	// Unmarked: an earlier CPI's VM with its two disks, deployed through
	// the API, and an operator's public IP for lbs.
	old := e.earlierVM(stemcell, 1)
	s := &orphanScene{unmarked: []string{old.ephemeralID, old.persistentID}}
	c := e.client()
	vp := c.VirtualMachine.NewListVirtualMachinesParams()
	vp.SetName(old.name)
	vms, err := c.VirtualMachine.ListVirtualMachines(vp)
	if err != nil || len(vms.VirtualMachines) != 1 {
		t.Fatalf("listVirtualMachines name=%s: %v", old.name, err)
	}
	s.unmarked = append(s.unmarked, vms.VirtualMachines[0].Id)
	s.d = newDirector(e)
	d := s.d
	d.operatorIPs("192.168.2.70", "192.168.2.71") // the first becomes the source NAT address
	for _, r := range e.inventory() {
		if r.Kind == "public IP" {
			s.unmarked = append(s.unmarked, r.ID)
		}
	}
	d.holds.Stemcells = []string{stemcell}
	d.holds.VMs = []string{e.createVM(stemcell, "10.1.1.70")}
	s.heldDisk = e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, nil)
	d.holds.Disks = []string{s.heldDisk}
	s.lostDisk = e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, nil)
	return s
}

// kill leaves what kill -9 at one call of each method leaves.
func (s *orphanScene) kill() {
	e, d := s.d.e, s.d
	e.killCreateVMDuring(step{command: "enableStaticNat"}, "orphan-vip")
	lbNets := map[string]any{"default": manualNet("10.1.1.72")}
	e.killRequestDuring(step{command: "assignToLoadBalancerRule"}, e.request("create_vm", "orphan-lbs",
		d.holds.Stemcells[0], lbVMType(webEntry("192.168.2.71")), lbNets, []string{}, boshEnv))
	// A create_disk for the VM removes what a killed one left for it: the
	// disk to snapshot comes first.
	attached := e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, d.holds.VMs[0])
	e.attachDisk(d.holds.VMs[0], attached)
	d.holds.Disks = append(d.holds.Disks, attached)
	e.killRequestDuring(step{command: "createTags"}, e.request("create_disk", 1024,
		map[string]any{"disk_offering": "Custom"}, d.holds.VMs[0]))
	e.killRequestDuring(step{command: "createSnapshot"}, e.request("snapshot_disk", attached, diskMeta))
	e.killRequestDuring(step{command: "getUploadParamsForTemplate"}, e.request("create_stemcell", d.stemcellArgs("")...))
}

func TestOrphansListExactlyWhatKillsLeftAndDeleteIt(t *testing.T) {
	s := newOrphanScene(t)
	e, d := s.d.e, s.d
	s.kill()
	extra := e.leaks(d.base, d.holds)
	if len(extra) == 0 {
		t.Fatal("the kills left nothing: the test proves nothing")
	}

	young := e.orphans()
	if young.code != 0 || len(young.rows) != 0 {
		t.Fatalf("orphans with the default -older-than (1h) lists leftovers minutes old:\n%s", young)
	}
	found := e.orphans("-older-than", "0s")
	if found.code != 0 {
		t.Fatalf("orphans -older-than 0s:\n%s", found)
	}
	s.checkExactly(t, extra, found)
	s.checkNeverListed(t, found)
	if mine := e.orphans("-older-than", "0s", "-director", "another-director"); len(mine.rows) != 0 {
		t.Fatalf("-director another-director lists this director's leftovers:\n%s", mine)
	}
	if mine := e.orphans("-older-than", "0s", "-director", "spec-director"); !sameIDs(mine.ids(), found.ids()) {
		t.Fatalf("-director spec-director lists %v, want %v:\n%s", mine.ids(), found.ids(), mine)
	}

	// CloudStack keeps the template of the abandoned upload until it
	// times out.
	time.Sleep(uploadTimeout + time.Second)
	deleted := e.orphans("-older-than", "0s", "-delete")
	if deleted.code != 0 || !sameIDs(deleted.ids(), found.ids()) {
		t.Fatalf("orphans -delete did not delete what it listed (%v):\n%s", found.ids(), deleted)
	}
	for _, r := range deleted.rows {
		if !r.Deleted {
			t.Errorf("%s %s not deleted: %s", r.Kind, r.ID, r.Error)
		}
	}
	if left := e.leaks(d.base, d.holds); len(left) != 1 || left[0].ID != s.lostDisk {
		t.Fatalf("after orphans -delete, CloudStack holds beyond the forgotten disk %s:\n%s", s.lostDisk, describe(left))
	}
	again := e.orphans("-older-than", "0s", "-delete")
	if again.code != 0 || len(again.rows) != 0 {
		t.Fatalf("a second orphans -delete:\n%s", again)
	}
	s.checkHeldSurvive(t)
}

// checkExactly: every leftover the census finds is a row, or goes with
// one (a VM's ROOT and ephemeral volumes, a rule's firewall rule), and
// every row is a leftover.
func (s *orphanScene) checkExactly(t *testing.T, extra []resource, found orphansRun) {
	t.Helper()
	listsExactly(t, extra, found, s.lostDisk)
	want := map[string]int{"vm": 2, "public-ip": 1, "lb-rule": 1, "volume": 1, "snapshot": 1, "template": 1}
	got := map[string]int{}
	for _, r := range found.rows {
		got[r.Kind]++
		if r.AgeSeconds == nil && r.Kind != "lb-rule" || r.Why == "" {
			t.Errorf("row without an age or a reason: %+v", r)
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%d %s rows, want %d:\n%s", got[k], k, n, found)
		}
	}
}

// listsExactly: every resource of the census is a row or goes with one, but
// the forgotten disk, which is never one; every row is in the census.
func listsExactly(t testing.TB, extra []resource, found orphansRun, lostDisk string) {
	t.Helper()
	rows := map[string]orphanRow{}
	for _, r := range found.rows {
		rows[r.ID] = r
	}
	census := map[string]bool{}
	for _, r := range extra {
		census[r.ID] = true
		_, listed := rows[r.ID]
		switch {
		case listed, strings.HasPrefix(r.Kind, "volume/") && rows[r.VMID].Kind == "vm", r.Kind == "volume/DATADISK" && r.ID == lostDisk:
		case (r.Kind == "ISO" || r.Kind == "registry entry") && rows[r.VMID].Kind == "vm":
		case r.Kind == "firewall rule" && lbRuleOn(found.rows, r.Name):
		default:
			t.Errorf("the census finds %s; orphans does not list it", r)
		}
		if r.ID == lostDisk && listed {
			t.Errorf("a detached persistent disk is listed without -known: %s", r)
		}
	}
	for _, r := range found.rows {
		if !census[r.ID] {
			t.Errorf("orphans lists %s %s (%s), which the census does not find", r.Kind, r.ID, r.Why)
		}
	}
}

// lbRuleOn says a listed rule is on the firewall rule's address.
func lbRuleOn(rows []orphanRow, firewall string) bool {
	for _, r := range rows {
		if r.Kind == "lb-rule" && strings.HasSuffix(firewall, " on "+strings.SplitN(r.Name, " on ", 2)[1]) {
			return true
		}
	}
	return false
}

// checkNeverListed: the unmarked resources and what the director holds
// are never rows.
func (s *orphanScene) checkNeverListed(t *testing.T, found orphansRun) {
	t.Helper()
	never := append(append([]string{}, s.unmarked...), s.d.holds.VMs...)
	never = append(append(never, s.d.holds.Disks...), s.d.holds.Stemcells...)
	for _, r := range found.rows {
		for _, id := range never {
			if r.ID == id {
				t.Errorf("orphans lists %s %s, which the CPI did not mark or the director holds (%s)", r.Kind, r.ID, r.Why)
			}
		}
	}
}

// checkHeldSurvive: what the director holds is still there.
func (s *orphanScene) checkHeldSurvive(t *testing.T) {
	t.Helper()
	e := s.d.e
	for _, id := range append(s.d.holds.Disks, s.lostDisk) {
		if v := e.volume(id); v == nil || strings.HasPrefix(v.State, "Destroy") || v.State == "Expunged" {
			t.Errorf("orphans -delete removed disk %s, which was not its to remove", id)
		}
	}
	if r := e.call("has_vm", s.d.holds.VMs[0]).ok(t); string(r.Result) != "true" {
		t.Errorf("orphans -delete removed the director's VM %s", s.d.holds.VMs[0])
	}
}

// TestOrphansKnownListsOnlyUnknownDetachedDisks: with -known, a detached
// disk of the CPI's the director does not know is listed and a known one
// is not, from a file of one CID per line and from the bosh CLI's JSON;
// -delete removes the unknown one.
func TestOrphansKnownListsOnlyUnknownDetachedDisks(t *testing.T) {
	s := newOrphanScene(t)
	e, d := s.d.e, s.d
	if plain := e.orphans("-older-than", "0s"); len(plain.rows) != 0 {
		t.Fatalf("without -known, orphans lists the director's resources:\n%s", plain)
	}
	lines := d.knownFile(t)
	disks := writeFile(t, "disks.json", `{"Tables":[{"Content":"disks","Header":{"disk_cid":"Disk CID"},"Rows":[{"disk_cid":"`+
		s.heldDisk+`","size":"1.0 GiB","deployment":"cf","instance":"db/0","az":"z1","orphaned_at":"x"}]}],"Blocks":null,"Lines":["Succeeded"]}`)
	for _, known := range []string{lines, disks} {
		got := e.orphans("-older-than", "0s", "-known", known)
		if got.code != 0 || len(got.rows) != 1 || got.rows[0].ID != s.lostDisk || got.rows[0].Kind != "volume" {
			t.Fatalf("-known %s: want only the unknown disk %s:\n%s", filepath.Base(known), s.lostDisk, got)
		}
	}
	if young := e.orphans("-known", lines); len(young.rows) != 0 {
		t.Fatalf("-known with the default -older-than lists a disk minutes old:\n%s", young)
	}
	deleted := e.orphans("-older-than", "0s", "-known", lines, "-delete")
	if deleted.code != 0 || len(deleted.rows) != 1 || !deleted.rows[0].Deleted {
		t.Fatalf("-delete -known:\n%s", deleted)
	}
	if again := e.orphans("-older-than", "0s", "-known", lines); len(again.rows) != 0 {
		t.Fatalf("after -delete:\n%s", again)
	}
	if v := e.volume(s.heldDisk); v == nil || v.State != "Allocated" {
		t.Fatalf("the known disk %s is gone: %+v", s.heldDisk, v)
	}
	if left := e.leaks(d.base, d.holds); len(left) != 0 {
		t.Fatalf("the census after -delete -known:\n%s", describe(left))
	}
}

// TestOrphansPrintsLinesOffATerminal: without -json the rows are
// tab-separated lines, and a bad flag is a usage error.
func TestOrphansPrintsLinesOffATerminal(t *testing.T) {
	s := newOrphanScene(t)
	e := s.d.e
	got := e.orphansText("-older-than", "0s", "-known", s.d.knownFile(t))
	lines := strings.Split(strings.TrimSpace(got.stdout), "\n")
	if got.code != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "spec-director\tvolume\t"+s.lostDisk+"\t") {
		t.Fatalf("plain output:\n%s", got)
	}
	if !strings.Contains(got.stderr, "orphans: 1 found (1 volume)") {
		t.Errorf("no summary on stderr:\n%s", got)
	}
	if bad := e.orphansText("-older-than", "soon"); bad.code != 2 {
		t.Errorf("-older-than soon:\n%s", bad)
	}
}

func sameIDs(a, b []string) bool { return strings.Join(a, " ") == strings.Join(b, " ") }

// orphansKnown is the operator's move after a kill that came after the
// call's last step: orphans -known (the CIDs the director holds) lists
// exactly what the kill left, complete and unknown to the director, and
// -delete leaves none of it.
func (d *director) orphansKnown(when string, extra []resource) {
	t := d.e.t
	t.Helper()
	args := []string{"-older-than", "0s", "-known", d.knownFile(t)}
	listsExactly(t, extra, d.e.orphans(args...), "")
	deleted := d.e.orphans(append(args, "-delete")...)
	if left := d.e.leaks(d.base, d.holds); deleted.code != 0 || len(left) != 0 {
		t.Errorf("%s: orphans -known -delete:\n%s\nleft:\n%s", when, deleted, describe(left))
		d.e.sweep(d.base, left)
	}
}

// knownFile is a -known file of every CID the director holds, one a line.
func (d *director) knownFile(t testing.TB) string {
	t.Helper()
	all := append(append(append(append([]string{"# the director's CIDs"}, d.holds.VMs...), d.holds.Disks...),
		d.holds.Snapshots...), d.holds.Stemcells...)
	return writeFile(t, "known.txt", strings.Join(all, "\n")+"\n")
}

// TestOrphansKnownFindsASnapshotFinishedAfterTheKill (issue 24.3):
// snapshot_disk killed while the job that clears its snapshot's incomplete
// mark runs leaves a complete snapshot whose CID the director never got.
// Without -known orphans leaves it alone, as the director's; with -known
// (the director's CIDs, one a line, or `bosh snapshots --json`) it lists
// exactly that snapshot, not the one the director holds; -delete leaves
// nothing, and a second run lists nothing.
func TestOrphansKnownFindsASnapshotFinishedAfterTheKill(t *testing.T) {
	e := newEnv(t, nil, crashSimArgs...)
	d := newDirector(e)
	prepareAttachedDisk("10.1.1.93")(d)
	held := cid(e.call("snapshot_disk", d.holds.Disks[0], diskMeta).ok(t))
	d.holds.Snapshots = []string{held}
	e.killRequestDuring(step{command: "deleteTags"}, e.request("snapshot_disk", d.holds.Disks[0], diskMeta))
	var extra []resource
	complete := e.await(func() bool {
		extra = e.leaks(d.base, d.holds)
		return len(extra) == 1 && extra[0].Kind == "snapshot" && extra[0].State == "BackedUp" &&
			extra[0].Tags[marks.IncompleteTag] == ""
	})
	if !complete {
		t.Fatalf("the kill did not leave one complete snapshot, what the test is for:\n%s", describe(extra))
	}
	if plain := e.orphans("-older-than", "0s"); plain.code != 0 || len(plain.rows) != 0 {
		t.Fatalf("without -known, orphans lists a complete snapshot, which may be the director's:\n%s", plain)
	}
	snapshotsJSON := writeFile(t, "snapshots.json", `{"Tables":[{"Content":"snapshots","Header":{"instance":"Instance",`+
		`"cid":"CID","created_at":"Created At","clean":"Clean"},"Rows":[{"instance":"db/4f3c","cid":"`+held+
		`","created_at":"Tue Dec  1 20:00:00 UTC 2026","clean":"true"}],"Notes":null}],"Blocks":null,"Lines":["Succeeded"]}`)
	lines := d.knownFile(t)
	for _, known := range []string{lines, snapshotsJSON} {
		found := e.orphans("-older-than", "0s", "-known", known)
		if found.code != 0 || len(found.rows) != 1 || found.rows[0].Kind != "snapshot" {
			t.Fatalf("-known %s: want the one snapshot the kill left:\n%s", filepath.Base(known), found)
		}
		listsExactly(t, extra, found, "")
	}
	deleted := e.orphans("-older-than", "0s", "-known", lines, "-delete")
	if deleted.code != 0 || len(deleted.rows) != 1 || !deleted.rows[0].Deleted {
		t.Fatalf("-delete -known:\n%s", deleted)
	}
	if again := e.orphans("-older-than", "0s", "-known", lines); again.code != 0 || len(again.rows) != 0 {
		t.Fatalf("after -delete:\n%s", again)
	}
	d.check("after orphans -known -delete")
	live := false
	for _, snap := range e.snapshots() {
		live = live || snap.Id == held && snap.State == "BackedUp"
	}
	if !live {
		t.Fatalf("orphans -delete removed the snapshot the director holds, %s", held)
	}
	e.call("delete_snapshot", held).ok(t)
	d.holds.Snapshots = nil
	d.check("after the director deleted its snapshot")
}

// TestOrphansTakeAConfigDriveWithItsVM: create_vm of an OpenStack KVM
// stemcell killed while it attaches the config drive ISO leaves the VM and
// its ISO; orphans lists both, and -delete detaches the ISO, destroys the
// VM, then deletes the ISO.
func TestOrphansTakeAConfigDriveWithItsVM(t *testing.T) {
	e := kvmEnv(t, nil)
	d := newDirector(e)
	d.holds.Stemcells = []string{e.openStackStemcell()}
	e.killRequestDuring(step{command: "attachIso"}, e.request("create_vm", "orphan-drive", d.holds.Stemcells[0], smallVM,
		map[string]any{"default": manualNet("10.1.1.73")}, []string{}, boshEnv))
	extra := e.leaks(d.base, d.holds)
	found := e.orphans("-older-than", "0s")
	kinds := map[string]int{}
	for _, r := range found.rows {
		kinds[r.Kind]++
	}
	if found.code != 0 || len(found.rows) != 2 || kinds["vm"] != 1 || kinds["iso"] != 1 {
		t.Fatalf("want the VM and its ISO; the census finds:\n%s\norphans:\n%s", describe(extra), found)
	}
	for _, r := range extra {
		if r.Kind == "ISO" && r.VMID == "" {
			t.Fatalf("the killed create_vm left its ISO unattached, not what the test is for:\n%s", describe(extra))
		}
	}
	if deleted := e.orphans("-older-than", "0s", "-delete"); deleted.code != 0 {
		t.Fatalf("-delete:\n%s", deleted)
	}
	if left := e.leaks(d.base, d.holds); len(left) != 0 {
		t.Fatalf("after -delete:\n%s", describe(left))
	}
	if again := e.orphans("-older-than", "0s"); len(again.rows) != 0 {
		t.Fatalf("a second run:\n%s", again)
	}
}

// TestOrphansTakeAnOldStemcellVMsRegistrySettings: create_vm of an old
// stemcell killed after the deploy leaves the VM and its settings in the
// registry; -delete removes both, as delete_vm does.
func TestOrphansTakeAnOldStemcellVMsRegistrySettings(t *testing.T) {
	e, _ := oldStemcellEnv(t)
	d := newDirector(e)
	d.holds.Stemcells = []string{e.stemcell()}
	e.killRequestDuring(step{command: "createTags"}, e.request("create_vm", "orphan-old", d.holds.Stemcells[0], smallVM,
		map[string]any{"default": manualNet("10.1.1.74")}, []string{}, boshEnv))
	extra := e.leaks(d.base, d.holds)
	entries := 0
	for _, r := range extra {
		if r.Kind == "registry entry" {
			entries++
		}
	}
	found := e.orphans("-older-than", "0s")
	if entries != 1 || len(found.rows) != 1 || found.rows[0].Kind != "vm" {
		t.Fatalf("want one VM and its registry entry; the census finds:\n%s\norphans:\n%s", describe(extra), found)
	}
	if deleted := e.orphans("-older-than", "0s", "-delete"); deleted.code != 0 {
		t.Fatalf("-delete:\n%s", deleted)
	}
	if left := e.leaks(d.base, d.holds); len(left) != 0 {
		t.Fatalf("after -delete:\n%s", describe(left))
	}
}

// TestOrphansAfterKillsAtRandomMoments: the crash test's methods, each
// killed at moments drawn over an uninterrupted call (CRASH_SEED), then,
// instead of the director's next move, orphans: it lists exactly what the
// census finds, -delete leaves none of it, and a second run lists nothing.
// A kill after the method's last step leaves a complete resource, which
// carries no incomplete mark: orphans lists it against -known, the CIDs
// the director holds.
func TestOrphansAfterKillsAtRandomMoments(t *testing.T) {
	kills, seed := crashSettings(t)
	if os.Getenv("CRASH_KILLS") == "" {
		kills = 3 // per method; make test-crash-long's CRASH_KILLS sets more
	}
	names := map[string]bool{"create_vm": true, "create_vm/lbs": true, "create_vm/configdrive": true,
		"create_stemcell/upload": true, "create_disk": true, "snapshot_disk": true}
	for i, m := range crashMethods() {
		if !names[m.name] {
			continue
		}
		t.Run(m.name, func(t *testing.T) { m.orphanRounds(t, kills, rand.New(rand.NewSource(seed+int64(i)))) })
	}
}

func (m crashMethod) orphanRounds(t *testing.T, kills int, rng *rand.Rand) {
	e := m.env(t)
	d := newDirector(e)
	if m.prepare != nil {
		m.prepare(d)
	}
	took := m.measure(d, "orphans-measure")
	tmp := t.TempDir()
	for i := 0; i < kills; i++ {
		after := time.Duration(rng.Int63n(int64(took))) + time.Millisecond
		e.resetCalls()
		o := e.callKilled(e.request(m.method, m.args(d, fmt.Sprintf("orphans-%d", i))...), tmp, killPoint{after: after})
		time.Sleep(100 * time.Millisecond) // a request sent before the kill lands
		calls := e.sequence()
		if o.killed {
			o.calls = calls
		}
		round := fmt.Sprintf("%s round %d (kill after %v of %v: %s)", m.name, i, after.Round(time.Millisecond), took.Round(time.Millisecond), o)
		if !o.killed && o.r.Error == nil {
			// Answered first: what it made is the director's, which
			// orphans lists unless told with -known; nothing to compare.
			m.hold(d, cid(*o.r))
			t.Logf("%s: answered before the kill", round)
			m.release(d)
			continue
		}
		args := []string{"-older-than", "0s"}
		if o.killed && m.finalStep != "" && ran(o.calls, m.finalStep) {
			// The job of the last step goes on after the kill: what it
			// leaves is complete once the job has ended.
			e.await(func() bool { return !strings.Contains(describe(e.leaks(d.base, d.holds)), marks.IncompleteTag) })
			args = append(args, "-known", d.knownFile(t))
			round += ", after the last step: orphans -known"
		}
		extra := e.leaks(d.base, d.holds)
		found := e.orphans(args...)
		listsExactly(t, extra, found, "")
		deleted := e.orphans(append(args, "-delete")...)
		if deleted.code != 0 {
			// An upload CloudStack has not settled: it lets go after its
			// upload timeout.
			time.Sleep(uploadTimeout + time.Second)
			deleted = e.orphans(append(args, "-delete")...)
		}
		if again := e.orphans(args...); deleted.code != 0 || len(again.rows) != 0 {
			t.Errorf("%s: -delete:\n%s\nthen:\n%s", round, deleted, again)
		}
		t.Logf("%s: %d rows deleted", round, len(found.rows))
		d.check(round + ", after orphans -delete")
		m.release(d)
	}
}
