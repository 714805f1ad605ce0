package spec

import (
	"fmt"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// TestARefusedMarkDeletesWhatItWasToMark (issue 24.1): the tag job that
// marks what create_vm and create_disk made, and snapshot_disk's job that
// clears its incomplete mark, refused as a request or failed as a job
// (530, or 533, which is capacity), after CloudStack has made the VM,
// volume or snapshot: the call deletes it, leaves nothing the director does
// not know, and answers ok_to_retry exactly when a retry is worth it
// (create_disk and snapshot_disk always, as nothing is left; create_vm on
// capacity). Then the director's retry succeeds.
func TestARefusedMarkDeletesWhatItWasToMark(t *testing.T) {
	e := faultEnv(t)
	d := newDirector(e)
	d.holds.Stemcells = append(d.holds.Stemcells, e.stemcell())
	vm := e.createVM(d.holds.Stemcells[0], "10.1.1.70")
	d.holds.VMs = append(d.holds.VMs, vm)
	disk := e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, vm)
	d.holds.Disks = append(d.holds.Disks, disk)
	e.attachDisk(vm, disk) // a disk snapshots once a VM has had it
	ip := 71
	for _, m := range []struct {
		method, command, typ string
		args                 func() []any
		hold                 func(cid string)
		retryAlways          bool
	}{
		{"create_disk", "createTags", "NoDiskSpace", func() []any { return []any{1024, map[string]any{"disk_offering": "Custom"}, vm} },
			func(cid string) { d.holds.Disks = append(d.holds.Disks, cid) }, true},
		{"create_vm", "createTags", "VMCreationFailed", func() []any {
			ip++
			return []any{fmt.Sprintf("agent-mark-%d", ip), d.holds.Stemcells[0], smallVM,
				map[string]any{"default": manualNet(fmt.Sprintf("10.1.1.%d", ip))}, []string{}, boshEnv}
		}, func(cid string) { d.holds.VMs = append(d.holds.VMs, cid) }, false},
		{"snapshot_disk", "deleteTags", "NoDiskSpace", func() []any { return []any{disk, diskMeta} },
			func(cid string) { d.holds.Snapshots = append(d.holds.Snapshots, cid) }, true},
	} {
		for _, code := range []int{530, 533} {
			for _, stage := range []string{simulator.StageRequest, ""} {
				name := fmt.Sprintf("%s, %s %d at the %s stage", m.method, m.command, code, firstOf(stage, "job"))
				t.Run(name, func(t *testing.T) {
					e.t = t
					e.inject([]simulator.Fault{{Command: m.command, ErrorCode: code, Stage: stage}})
					r := e.call(m.method, m.args()...)
					e.inject(nil)
					wantRetry := m.retryAlways || code == 533
					if r.Error == nil || r.Error.Retry != wantRetry || (code == 533 && r.Error.Type != "Bosh::Clouds::"+m.typ) {
						t.Fatalf("want an error with ok_to_retry %v (%s on 533), got %s\nstderr:\n%s", wantRetry, m.typ,
							r.Stdout, clip(r.Stderr, 4000))
					}
					d.check(name)
					m.hold(cid(e.call(m.method, m.args()...).ok(t)))
					d.check(name + ", after the director's retry")
				})
			}
		}
	}
}

func firstOf(s, or string) string {
	if s != "" {
		return s
	}
	return or
}
