package spec

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// TestARefusedTemplateListLeavesNoTemplate (issue 24.8): create_stemcell
// to two zones with listTemplates refused (530) once, at each of its calls
// in turn: the sweep, the waits for the upload, the wait for the copy. A
// refused wait fails the call, which deletes its template, waiting for
// CloudStack's upload monitor to settle an upload it has all the bytes of;
// a refused sweep only postpones the sweep. Either way CloudStack holds
// nothing but the stemcell the director got. The upload monitor polls
// every 2 s here, so that a delete right after the refused poll comes
// before it has settled the upload.
func TestARefusedTemplateListLeavesNoTemplate(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) {
		section(cfg, "stemcell")["zones"] = []string{zoneName, "Sandbox-simulator-2"}
	}, "-extra-zone", "Sandbox-simulator-2", "-upload-monitoring-interval", "2s")
	image, props := xenStemcell(t)
	failed := 0
	for skip := 0; ; skip++ {
		e.inject([]simulator.Fault{{Command: "listTemplates", ErrorCode: 530, Stage: simulator.StageRequest, Skip: skip}})
		r := e.call("create_stemcell", image, props)
		fired := e.faultFired()
		e.clearFaults()
		if !fired {
			break // every listTemplates of the call has been refused once
		}
		var known []string
		if r.Error == nil {
			var cid string
			r.decode(t, &cid)
			known = append(known, cid)
		} else {
			failed++
			if !strings.Contains(r.Error.Message, "listTemplates failed") || !strings.Contains(r.Error.Message, "deleted)") {
				t.Errorf("listTemplates refused after %d: %s\nstderr:\n%s", skip, r.Error.Message, clip(r.Stderr, 3000))
			}
		}
		e.assertOnlyKnown(known...)
		for _, cid := range known {
			e.call("delete_stemcell", cid).ok(t)
		}
	}
	if failed < 3 {
		t.Fatalf("only %d refused listTemplates failed create_stemcell: the waits for the upload and the copy were not reached", failed)
	}
}
