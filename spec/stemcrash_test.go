package spec

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// The crash and lost-answer suite of create_stemcell: whatever happens to a
// call, what the director does next (the next create_stemcell, or
// delete_stemcell of what it knows) leaves CloudStack holding only the
// stemcells the director knows.

// crashOperationTimeout is the simulator's upload.operation.timeout in these
// tests: a template whose bytes never came is abandoned, and so deletable,
// after it.
const crashOperationTimeout = 2 * time.Second

// crashEnv is an env publishing by upload, by the in-call WebDAV server
// ("webdav") or through a WebDAV daemon on the same host ("daemon").
func crashEnv(t *testing.T, publish string) *env {
	t.Helper()
	var daemon *serveProc
	dir := t.TempDir()
	if publish == "daemon" {
		daemon = startServe(t, daemonConfig(dir))
	}
	return newEnv(t, func(cfg map[string]any) {
		switch publish {
		case "webdav":
			webdavConfig(cfg)
		case "daemon":
			section(cfg, "stemcell")["publish"] = "webdav"
			w := section(cfg, "webdav")
			w["daemon_url"], w["dir"] = daemon.url("webdav"), dir
		}
	}, "-upload-operation-timeout", crashOperationTimeout.String())
}

func xenStemcell(t *testing.T) (string, map[string]any) {
	return writeImage(t, bzippedVHD(t)), stemcellMF("cloudstack", "xen", "vhdx")
}

// census is the ids of every template of the account, in every zone and
// state (templatefilter=self), sorted.
func (e *env) census() []string {
	e.t.Helper()
	var ids []string
	for _, tpl := range e.ourTemplates() {
		if !slices.Contains(ids, tpl.Id) {
			ids = append(ids, tpl.Id)
		}
	}
	slices.Sort(ids)
	return ids
}

// assertOnlyKnown fails unless CloudStack holds exactly the known stemcells.
func (e *env) assertOnlyKnown(known ...string) {
	e.t.Helper()
	known = slices.DeleteFunc(slices.Clone(known), func(s string) bool { return s == "" })
	slices.Sort(known)
	if got := e.census(); !slices.Equal(got, known) {
		e.t.Fatalf("CloudStack holds templates %v; the director knows %v", got, known)
	}
}

// converge is what the director does after a create_stemcell that may have
// left something: the next create_stemcell (which must succeed), then
// delete_stemcell of everything it knows. The census after each step shows
// only what it knows. A leftover whose bytes never came is deletable only
// once CloudStack abandoned it, so that is waited out first when needed.
func (e *env) converge(known ...string) {
	e.t.Helper()
	if len(e.census()) > len(slices.DeleteFunc(slices.Clone(known), func(s string) bool { return s == "" })) {
		time.Sleep(crashOperationTimeout + 500*time.Millisecond)
	}
	image, props := xenStemcell(e.t.(*testing.T))
	var cid string
	r := e.call("create_stemcell", image, props).ok(e.t)
	r.decode(e.t, &cid)
	e.assertOnlyKnown(append(known, cid)...)
	for _, id := range append(known, cid) {
		if id != "" {
			e.call("delete_stemcell", id).ok(e.t)
		}
	}
	e.assertOnlyKnown()
}

// killCreateStemcellDuring starts create_stemcell, waits until the CPI is inside the
// call the fault delays, and kills it with SIGKILL.
func (e *env) killCreateStemcellDuring(t *testing.T, f simulator.Fault) {
	t.Helper()
	e.killCreateStemcellHeld(t, f)
	e.clearFaults()
}

// killCreateStemcellHeld is killCreateStemcellDuring with the fault rule
// left in place: a delayed request stays held (clearing the rules ends the
// delay, and a held upload's bytes may already sit in the SSVM's buffer).
func (e *env) killCreateStemcellHeld(t *testing.T, f simulator.Fault) {
	t.Helper()
	if err := e.sim.Admin.AddFault(f); err != nil {
		t.Fatal(err)
	}
	image, props := xenStemcell(t)
	o := e.callKilled(e.request("create_stemcell", image, props), t.TempDir(),
		killPoint{when: e.faultFired, settle: 100 * time.Millisecond, limit: 30 * time.Second, what: f.Command})
	if !o.killed {
		t.Fatalf("create_stemcell answered before it was killed in %s: %s", f.Command, o)
	}
}

func (e *env) clearFaults() {
	e.t.Helper()
	if err := e.sim.Admin.ClearFaults(); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) faultFired() bool {
	e.t.Helper()
	faults, err := e.sim.Admin.Faults()
	if err != nil {
		e.t.Fatal(err)
	}
	// A rule that has fired as often as it may is dropped.
	return len(faults) == 0 || faults[0].Fired > 0
}

// TestStemcellKilledAtEachStep kills create_stemcell with SIGKILL inside
// each step that creates or follows its template (held there by a delay on
// the step's request): the creating request in flight, the bytes on their
// way, the wait for CloudStack. The
// next create_stemcell removes what the dead call left. Not covered, and
// not coverable: a kill after CloudStack took the incomplete mark off
// (updateTemplate) and before the director read the answer leaves a
// finished stemcell the director does not know.
func TestStemcellKilledAtEachStep(t *testing.T) {
	// Long enough to kill the CPI inside the request; short, because the
	// SSVM's receiver sleeps it out with the request body unread.
	hold := simulator.Fault{Delay: 5 * time.Second}
	cases := []struct {
		name, publish, command string
		skip                   int
	}{
		{"upload/creating the template", "upload", "getUploadParamsForTemplate", 0},
		{"upload/posting the bytes", "upload", "upload", 0},
		{"upload/waiting for the template", "upload", "listTemplates", 1},
		{"webdav/registering the template", "webdav", "registerTemplate", 0},
		{"webdav/waiting for the download", "webdav", "listTemplates", 1},
		{"daemon/waiting for the download", "daemon", "listTemplates", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := crashEnv(t, c.publish)
			f := hold
			f.Command, f.Skip = c.command, c.skip
			e.killCreateStemcellDuring(t, f)
			// CloudStack finishes a request whose client died; a held
			// creating request runs once the connection is gone.
			deadline := time.Now().Add(5 * time.Second)
			for len(e.census()) == 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if left := e.census(); len(left) != 1 {
				t.Fatalf("the killed call should have left its template, CloudStack holds %v", left)
			}
			e.converge()
		})
	}
}

// TestStemcellLostAnswerAtEachCall loses the answer of each CloudStack call
// a create_stemcell makes, in turn (the call reaches CloudStack, which acts;
// the answer never reaches the CPI), by upload, by WebDAV and through the
// WebDAV daemon. Whatever the
// CPI answers, the census shows only what the director knows after its next
// create_stemcell, and that retry succeeds.
func TestStemcellLostAnswerAtEachCall(t *testing.T) {
	for _, publish := range []string{"upload", "webdav", "daemon"} {
		base := crashEnv(t, publish)
		image, props := xenStemcell(t)
		var cid string
		base.call("create_stemcell", image, props).ok(t).decode(t, &cid)
		base.eachCall(publish+"/", func(t *testing.T, lose simulator.Fault) {
			e := crashEnv(t, publish)
			if err := e.sim.Admin.AddFault(lose); err != nil {
				t.Fatal(err)
			}
			image, props := xenStemcell(t)
			r := e.call("create_stemcell", image, props)
			e.clearFaults() // a fault that did not fire must not hit the census
			var got string
			if r.Error == nil {
				r.decode(t, &got)
			} else if left := e.census(); len(left) > 0 && !strings.Contains(r.Error.Message, "is left in CloudStack") {
				t.Fatalf("CloudStack holds %v, but the error does not say what is left: %s", left, r.Error.Message)
			}
			e.converge(got)
		})
	}
}

// eachCall runs one subtest per CloudStack call in the simulator's request
// log, each given the fault that loses that call's answer (the n-th of its
// command).
func (e *env) eachCall(prefix string, run func(t *testing.T, lose simulator.Fault)) {
	t := e.t.(*testing.T)
	reqs, err := e.sim.Admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, req := range reqs {
		skip := seen[req.Command]
		seen[req.Command]++
		lose := simulator.Fault{Command: req.Command, Lost: true, Skip: skip}
		t.Run(fmt.Sprintf("%s%s#%d", prefix, req.Command, skip+1), func(t *testing.T) { run(t, lose) })
	}
}

// TestConnectionResetAfterGetUploadParams: the answer of
// getUploadParamsForTemplate is lost on a kept-alive connection after
// CloudStack created the template. Nothing below the CPI sends it again:
// CloudStack holds exactly one template, and create_stemcell's error names
// it as left (CloudStack deletes no template awaiting its upload).
func TestConnectionResetAfterGetUploadParams(t *testing.T) {
	e := crashEnv(t, "upload")
	if err := e.sim.Admin.AddFault(simulator.Fault{Command: "getUploadParamsForTemplate", Lost: true}); err != nil {
		t.Fatal(err)
	}
	image, props := xenStemcell(t)
	r := e.call("create_stemcell", image, props)
	e.clearFaults()
	left := e.census()
	if len(left) != 1 {
		t.Fatalf("want exactly the one template the lost call created, CloudStack holds %v", left)
	}
	if n := e.calls()["getUploadParamsForTemplate"]; n != 1 {
		t.Errorf("getUploadParamsForTemplate reached CloudStack %d times", n)
	}
	if r.Error == nil || !strings.Contains(r.Error.Message, "template "+left[0]+" (") ||
		!strings.Contains(r.Error.Message, "is left in CloudStack") {
		t.Fatalf("the error should name the template left: %s", r.Stdout)
	}
	e.converge()
}

// TestDeleteStemcellLostAnswerAtEachCall loses the answer of each call
// delete_stemcell makes; the director's retry of delete_stemcell succeeds
// and CloudStack is left with nothing.
func TestDeleteStemcellLostAnswerAtEachCall(t *testing.T) {
	base := crashEnv(t, "upload")
	image, props := xenStemcell(t)
	var cid string
	base.call("create_stemcell", image, props).ok(t).decode(t, &cid)
	base.resetCalls()
	base.call("delete_stemcell", cid).ok(t)
	base.eachCall("", func(t *testing.T, lose simulator.Fault) {
		e := crashEnv(t, "upload")
		image, props := xenStemcell(t)
		var cid string
		e.call("create_stemcell", image, props).ok(t).decode(t, &cid)
		if err := e.sim.Admin.AddFault(lose); err != nil {
			t.Fatal(err)
		}
		r := e.call("delete_stemcell", cid)
		e.clearFaults()
		if r.Error != nil {
			e.call("delete_stemcell", cid).ok(t) // the director's retry
		}
		e.assertOnlyKnown()
	})
}

// TestStemcellCopyWithAnUncertainOutcome: copying the template to a second
// zone ends in a failed poll (queryAsyncJobResult answers an error) or a job
// that never finishes (job_timeout). The copy may still be running, so the
// template may or may not go at once; either way the error says which, and
// after the director's next create_stemcell CloudStack holds only what it
// knows.
func TestStemcellCopyWithAnUncertainOutcome(t *testing.T) {
	for name, f := range map[string]simulator.Fault{
		"failed poll": {Command: "queryAsyncJobResult", ErrorCode: 530, Stage: simulator.StageRequest},
		"job timeout": {Command: "copyTemplate", Pending: true},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(cfg map[string]any) {
				section(cfg, "stemcell")["zones"] = []string{zoneName, "Sandbox-simulator-2"}
				section(cfg, "cloudstack")["job_timeout"] = "2s"
			}, "-extra-zone", "Sandbox-simulator-2", "-upload-operation-timeout", crashOperationTimeout.String())
			if err := e.sim.Admin.AddFault(f); err != nil {
				t.Fatal(err)
			}
			image, props := xenStemcell(t)
			r := e.call("create_stemcell", image, props)
			e.clearFaults()
			if r.Error == nil {
				t.Fatalf("create_stemcell succeeded despite the %s", name)
			}
			if left := e.census(); len(left) == 0 && !strings.Contains(r.Error.Message, "deleted)") ||
				len(left) > 0 && !strings.Contains(r.Error.Message, "template "+left[0]+" (") {
				t.Fatalf("CloudStack holds %v; the error does not say so: %s", left, r.Error.Message)
			}
			e.converge()
		})
	}
}

// TestDeleteStemcellRemovesLeftovers: delete_stemcell sweeps too. A killed
// create_stemcell left a template awaiting bytes that never come; while
// CloudStack refuses to delete it, delete_stemcell logs that it remains;
// once CloudStack abandoned it, the next delete_stemcell removes it.
func TestDeleteStemcellRemovesLeftovers(t *testing.T) {
	e := crashEnv(t, "upload")
	var first, second string
	for _, cid := range []*string{&first, &second} {
		image, props := xenStemcell(t)
		e.call("create_stemcell", image, props).ok(t).decode(t, cid)
	}
	// The dead call's upload stays held until the first delete_stemcell
	// has seen it: released, its bytes (already sent) could complete it and
	// the upload monitor make it deletable before that call runs.
	e.killCreateStemcellHeld(t, simulator.Fault{Command: "upload", Delay: 5 * time.Second})
	r := e.call("delete_stemcell", first).ok(t)
	if !strings.Contains(r.Stderr, "1 template(s) that interrupted create_stemcell calls left remain") {
		t.Errorf("delete_stemcell should log the leftover CloudStack does not let go of yet:\n%s", r.Stderr)
	}
	if left := e.census(); len(left) != 2 || !slices.Contains(left, second) {
		t.Fatalf("after the first delete_stemcell CloudStack holds %v", left)
	}
	e.clearFaults()
	time.Sleep(crashOperationTimeout + 500*time.Millisecond)
	r = e.call("delete_stemcell", second).ok(t)
	if !strings.Contains(r.Stderr, "removed 1 template(s) that interrupted create_stemcell calls left") {
		t.Errorf("delete_stemcell should log the leftover it removed:\n%s", r.Stderr)
	}
	e.assertOnlyKnown()
}
