package spec

import (
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// TestOrphansTakeATemplateKilledDuringItsCopy (issue 24): create_stemcell
// to two zones, killed while its copyTemplate request is held, leaves its
// template marked incomplete in the first zone and, once the copy CloudStack
// still runs has ended, in the second. orphans lists it once, -delete
// removes it from every zone, and a second run lists nothing.
func TestOrphansTakeATemplateKilledDuringItsCopy(t *testing.T) {
	e := twoZoneEnv(t)
	d := newDirector(e)
	e.killCreateStemcellDuring(t, simulator.Fault{Command: "copyTemplate", Delay: 5 * time.Second})
	e.awaitCopied()
	extra := e.leaks(d.base, d.holds)
	found := e.orphans("-older-than", "0s")
	if found.code != 0 || len(found.rows) != 1 || found.rows[0].Kind != "template" {
		t.Fatalf("want the one template the kill left; the census finds:\n%s\norphans:\n%s", describe(extra), found)
	}
	listsExactly(t, extra, found, "")
	if deleted := e.orphans("-older-than", "0s", "-delete"); deleted.code != 0 || !deleted.rows[0].Deleted {
		t.Fatalf("-delete:\n%s", deleted)
	}
	if left := e.census(); len(left) != 0 {
		t.Fatalf("after -delete CloudStack still holds templates %v", left)
	}
	if again := e.orphans("-older-than", "0s"); again.code != 0 || len(again.rows) != 0 {
		t.Fatalf("a second run:\n%s", again)
	}
	d.check("after orphans -delete")
}

// TestOrphansTakeAConfigDriveKilledBeforeItsAttach: create_vm of an
// OpenStack KVM stemcell killed while the request that creates its config
// drive ISO runs leaves the ISO, its bytes never sent, attached to nothing.
// orphans lists exactly what the census finds; -delete (once CloudStack
// lets the abandoned upload go) leaves nothing, and a second run lists
// nothing.
func TestOrphansTakeAConfigDriveKilledBeforeItsAttach(t *testing.T) {
	e := kvmEnv(t, nil, "-upload-operation-timeout", uploadTimeout.String())
	d := newDirector(e)
	d.holds.Stemcells = []string{e.openStackStemcell()}
	e.killRequestDuring(step{command: "getUploadParamsForIso"}, e.request("create_vm", "orphan-iso", d.holds.Stemcells[0],
		smallVM, map[string]any{"default": manualNet("10.1.1.75")}, []string{}, boshEnv))
	extra := e.leaks(d.base, d.holds)
	loose := false
	for _, r := range extra {
		loose = loose || r.Kind == "ISO" && r.VMID == ""
	}
	if !loose {
		t.Fatalf("the kill left no ISO attached to nothing, not what the test is for:\n%s", describe(extra))
	}
	found := e.orphans("-older-than", "0s")
	if found.code != 0 {
		t.Fatalf("orphans:\n%s", found)
	}
	listsExactly(t, extra, found, "")
	deleted := e.orphans("-older-than", "0s", "-delete")
	if deleted.code != 0 {
		// An upload CloudStack has not settled: it lets go after its
		// upload timeout.
		time.Sleep(uploadTimeout + time.Second)
		deleted = e.orphans("-older-than", "0s", "-delete")
	}
	if deleted.code != 0 {
		t.Fatalf("-delete:\n%s", deleted)
	}
	if left := e.leaks(d.base, d.holds); len(left) != 0 {
		t.Fatalf("after -delete:\n%s", describe(left))
	}
	if again := e.orphans("-older-than", "0s"); len(again.rows) != 0 {
		t.Fatalf("a second run:\n%s", again)
	}
}
