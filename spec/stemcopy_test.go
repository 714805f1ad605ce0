package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// twoZoneEnv publishes stemcells to the default zone and copies them to a
// second one.
func twoZoneEnv(t *testing.T) *env {
	t.Helper()
	return newEnv(t, func(cfg map[string]any) {
		section(cfg, "stemcell")["zones"] = []string{zoneName, "Sandbox-simulator-2"}
	}, "-extra-zone", "Sandbox-simulator-2", "-upload-operation-timeout", crashOperationTimeout.String())
}

// TestTwoZoneStemcellLostAnswerAtEachCall (issue 24.8): the answer of each
// CloudStack call a create_stemcell to two zones makes is lost in turn,
// its copyTemplate and the polls of the copy's job included. Whatever the
// CPI answers, an error names what it left, and after the director's next
// create_stemcell CloudStack holds, in every zone, only what it knows.
func TestTwoZoneStemcellLostAnswerAtEachCall(t *testing.T) {
	base := twoZoneEnv(t)
	image, props := xenStemcell(t)
	var cid string
	base.call("create_stemcell", image, props).ok(t).decode(t, &cid)
	if base.calls()["copyTemplate"] != 1 {
		t.Fatalf("the uninterrupted create_stemcell made no copy: not what the test is for (%v)", base.calls())
	}
	base.eachCall("", func(t *testing.T, lose simulator.Fault) {
		e := twoZoneEnv(t)
		if err := e.sim.Admin.AddFault(lose); err != nil {
			t.Fatal(err)
		}
		image, props := xenStemcell(t)
		r := e.call("create_stemcell", image, props)
		e.clearFaults()
		var got string
		if r.Error == nil {
			r.decode(t, &got)
		} else if left := e.census(); len(left) > 0 && !strings.Contains(r.Error.Message, "template "+left[0]+" (") {
			t.Fatalf("CloudStack holds %v, but the error does not name it: %s", left, r.Error.Message)
		}
		e.converge(got)
	})
}

// TestTwoZoneStemcellKilledDuringItsCopy (issue 24.8): create_stemcell to
// two zones killed while its copyTemplate request is held leaves its
// template, marked incomplete, in both zones once the copy has run; the
// director's next create_stemcell removes it from every zone, and CloudStack
// then holds only what the director knows.
func TestTwoZoneStemcellKilledDuringItsCopy(t *testing.T) {
	e := twoZoneEnv(t)
	e.killCreateStemcellDuring(t, simulator.Fault{Command: "copyTemplate", Delay: 5 * time.Second})
	e.awaitCopied()
	e.converge()
}

// awaitCopied waits until the one template a killed create_stemcell left is
// ready in both zones: its copy, which CloudStack runs on, has ended.
func (e *env) awaitCopied() {
	e.t.Helper()
	var ready int
	copied := e.await(func() bool {
		ready = 0
		for _, tpl := range e.ourTemplates() {
			if tpl.Isready {
				ready++
			}
		}
		return ready == 2
	})
	if !copied {
		e.t.Fatalf("the killed call's copy never reached the second zone (%d ready rows): not what the test is for", ready)
	}
}
