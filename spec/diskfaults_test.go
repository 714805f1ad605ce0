package spec

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// Uncertain outcomes of create_disk and snapshot_disk: CloudStack acted but
// its answer was lost, a poll of the job failed, or the job never finished.
// Each case injects the fault, checks the answer (what was removed or is
// still there, and ok_to_retry only when nothing is left), takes a census
// of CloudStack, and retries as the director would.

// faultEnv has jobs that take 300 ms, so a poll can fail while the job
// runs, a 1 s job timeout, and one transport retry.
func faultEnv(t *testing.T) *env {
	t.Helper()
	return newEnv(t, func(cfg map[string]any) {
		section(cfg, "cloudstack")["job_timeout"] = "1s"
		section(cfg, "cloudstack")["max_retries"] = 1
	}, "-job-latency", "300ms")
}

type faultCase struct {
	name   string
	faults []simulator.Fault
	// retry is the ok_to_retry wanted; says is in the error message.
	retry bool
	says  string
	// left is how many of the call's resources stay in CloudStack.
	left int
}

// dataDisks counts the data volumes CloudStack has, deleted ones left out.
func (e *env) dataDisks() []string {
	e.t.Helper()
	var ids []string
	for _, v := range e.volumes() {
		if v.Type == "DATADISK" && v.State != "Destroy" && v.State != "Expunged" {
			ids = append(ids, v.Id)
		}
	}
	return ids
}

func (e *env) inject(faults []simulator.Fault) {
	e.t.Helper()
	if err := e.sim.Admin.ClearFaults(); err != nil {
		e.t.Fatal(err)
	}
	for _, f := range faults {
		if err := e.sim.Admin.AddFault(f); err != nil {
			e.t.Fatal(err)
		}
	}
}

// check returns the error message.
func (c faultCase) check(t *testing.T, r response) string {
	t.Helper()
	if r.Error == nil || r.Error.Retry != c.retry || !strings.Contains(r.Error.Message, c.says) {
		t.Fatalf("want an error with ok_to_retry %v saying %q, got %s\nstderr:\n%s", c.retry, c.says, r.Stdout, r.Stderr)
	}
	return r.Error.Message
}

var uncertainCreateVolume = []faultCase{
	{name: "lost answer", faults: []simulator.Fault{{Command: "createVolume", Lost: true}},
		retry: true, says: "was deleted"},
	{name: "failed poll", faults: []simulator.Fault{{Command: "queryAsyncJobResult", ErrorCode: 530}},
		retry: true, says: "was deleted"},
	{name: "lost polls", faults: []simulator.Fault{{Command: "queryAsyncJobResult", Lost: true, Times: 2}},
		retry: true, says: "was deleted"},
	{name: "second poll fails", faults: []simulator.Fault{{Command: "queryAsyncJobResult", Skip: 1, ErrorCode: 530}},
		retry: true, says: "was deleted"},
	{name: "job timeout", faults: []simulator.Fault{{Command: "createVolume", Pending: true}},
		retry: true, says: "did not finish within"},
	{name: "failed job", faults: []simulator.Fault{{Command: "createVolume", ErrorCode: 530, ErrorText: "injected"}},
		retry: true, says: "was deleted"},
	{name: "refused request", faults: []simulator.Fault{{Command: "createVolume", ErrorCode: 431, Stage: simulator.StageRequest}},
		retry: false, says: "error 431"},
	{name: "cleanup refused", faults: []simulator.Fault{{Command: "createVolume", Lost: true},
		{Command: "deleteVolume", ErrorCode: 530, ErrorText: "injected"}},
		retry: false, says: "is still in CloudStack", left: 1},
}

func TestCreateDiskResolvesUncertainOutcomes(t *testing.T) {
	e := faultEnv(t)
	props := map[string]any{"disk_offering": "Custom"}
	for _, c := range uncertainCreateVolume {
		t.Run(c.name, func(t *testing.T) {
			e.t = t
			e.inject(c.faults)
			msg := c.check(t, e.call("create_disk", 1024, props, nil))
			left := e.dataDisks()
			if len(left) != c.left {
				t.Fatalf("%d data volumes left, want %d", len(left), c.left)
			}
			for _, id := range left {
				if !strings.Contains(msg, id) {
					t.Fatalf("volume %s is left but the error does not name it", id)
				}
				e.call("delete_disk", id).ok(t)
			}
			e.inject(nil)
			disk := e.createDisk(1024, props, nil)
			if got := e.dataDisks(); len(got) != 1 || got[0] != disk {
				t.Fatalf("after the retry CloudStack has %v, the director knows %s", got, disk)
			}
			e.call("delete_disk", disk).ok(t)
		})
	}
}

var uncertainSnapshot = []faultCase{
	{name: "lost answer", faults: []simulator.Fault{{Command: "createSnapshot", Lost: true}},
		retry: true, says: "was deleted"},
	// The poll fails while the job still runs: the CPI waits it out.
	{name: "failed poll", faults: []simulator.Fault{{Command: "queryAsyncJobResult", ErrorCode: 530}},
		retry: true, says: "was deleted"},
	{name: "lost polls", faults: []simulator.Fault{{Command: "queryAsyncJobResult", Lost: true, Times: 2}},
		retry: true, says: "was deleted"},
	{name: "failed job", faults: []simulator.Fault{{Command: "createSnapshot", ErrorCode: 530, ErrorText: "injected"}},
		retry: true, says: "was deleted"},
	{name: "refused request", faults: []simulator.Fault{{Command: "createSnapshot", ErrorCode: 431, Stage: simulator.StageRequest}},
		retry: false, says: "error 431"},
	{name: "cleanup refused", faults: []simulator.Fault{{Command: "createSnapshot", Lost: true},
		{Command: "deleteSnapshot", ErrorCode: 530, ErrorText: "injected"}},
		retry: false, says: "is still in CloudStack", left: 1},
	// Last: a job that never finishes keeps its snapshot BackingUp for
	// good, which CloudStack will not delete.
	{name: "job timeout", faults: []simulator.Fault{{Command: "createSnapshot", Pending: true}},
		retry: false, says: "is still BackingUp", left: 1},
}

func TestSnapshotDiskResolvesUncertainOutcomes(t *testing.T) {
	e := faultEnv(t)
	vm := e.createVM(e.stemcell(), "10.1.1.75")
	disk := e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, vm)
	e.attachDisk(vm, disk) // a disk has storage, so snapshots, once a VM has had it
	for _, c := range uncertainSnapshot {
		t.Run(c.name, func(t *testing.T) {
			e.t = t
			e.inject(c.faults)
			msg := c.check(t, e.call("snapshot_disk", disk, diskMeta))
			left := e.snapshots()
			if len(left) != c.left {
				t.Fatalf("%d snapshots left, want %d", len(left), c.left)
			}
			for _, s := range left {
				if !strings.Contains(msg, s.Id) || !strings.HasPrefix(s.Name, "bosh-snapshot-") {
					t.Fatalf("snapshot %s (%s) is left but the error does not name it", s.Id, s.Name)
				}
				if s.State == "BackingUp" {
					return // CloudStack will never let it go
				}
				e.call("delete_snapshot", s.Id).ok(t)
			}
			e.inject(nil)
			var snap string
			e.call("snapshot_disk", disk, diskMeta).ok(t).decode(t, &snap)
			if got := e.snapshots(); len(got) != 1 || got[0].Id != snap || tagsOf(got[0].Tags)["bosh-director-uuid"] != "spec-director" {
				t.Fatalf("after the retry CloudStack has %+v, the director knows %s", got, snap)
			}
			e.call("delete_snapshot", snap).ok(t)
		})
	}
}
