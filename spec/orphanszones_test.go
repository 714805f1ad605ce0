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
	e := newEnv(t, func(cfg map[string]any) {
		section(cfg, "stemcell")["zones"] = []string{zoneName, "Sandbox-simulator-2"}
	}, "-extra-zone", "Sandbox-simulator-2", "-upload-operation-timeout", crashOperationTimeout.String())
	d := newDirector(e)
	e.killCreateStemcellDuring(t, simulator.Fault{Command: "copyTemplate", Delay: 5 * time.Second})
	var rows int
	copied := e.await(func() bool {
		rows = 0
		for _, tpl := range e.ourTemplates() {
			if tpl.Isready {
				rows++
			}
		}
		return rows == 2
	})
	if !copied {
		t.Fatalf("the killed call's copy never reached the second zone (%d ready rows): not what the test is for", rows)
	}
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
