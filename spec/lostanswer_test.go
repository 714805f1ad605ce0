package spec

import (
	"fmt"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// The lost-answer test (issue 11): for every mutating method, every
// CloudStack call of an uninterrupted run is made again with its answer
// lost (the command runs, the connection drops before the answer), one
// call at a time: the k-th call of a command is hit with a `lost` fault
// that skips the first k. Async polls (queryAsyncJobResult) and the upload
// POST (command "upload") are calls like any other. Then the director's
// next step: a CID it got back is kept; otherwise the same call again (for
// create_vm with a new agent_id unless the answer was ok_to_retry); that
// retry must succeed, and the census must show nothing beyond what the
// director holds.

// lostMethod is one method and the director's moves around it.
type lostMethod struct {
	name, method string
	edit         func(cfg map[string]any)
	simArgs      []string
	// prepare makes, once, what every case needs; before makes what one
	// case acts on (the VM delete_vm deletes).
	prepare, before func(d *director)
	args            func(d *director, agent string) []any
	// done records a successful answer; undo brings the director back to
	// what prepare left.
	done func(d *director, r response)
	undo func(d *director)
	// awaits: as crashMethod.awaits; registry: as crashMethod.registry.
	awaits, registry bool
	// drive: its config drive ISOs are deferred only while CloudStack
	// refuses to delete them (see check).
	drive bool
}

// call is one CloudStack call of an uninterrupted run: a command and its
// occurrence among that command's calls.
type call struct {
	command string
	k       int
	job     bool // an async command that queued a job, or a poll of one
}

func TestLostAnswerAtEveryCallLeavesNothing(t *testing.T) {
	var rows []*tally
	for _, m := range lostMethods() {
		t.Run(m.name, func(t *testing.T) { rows = append(rows, m.run(t)) })
	}
	printTallies(t, "lost-answer test", rows, false)
}

func (m lostMethod) run(t *testing.T) *tally {
	tl := &tally{method: m.name}
	e := newEnv(t, m.edit, m.simArgs...)
	if m.registry {
		e, _ = oldStemcellEnv(t, m.simArgs...)
	}
	d := newDirector(e)
	d.deferUploads = m.awaits
	if m.prepare != nil {
		m.prepare(d)
	}
	m.step(d)
	e.resetCalls()
	agent := "lost-measure"
	m.done(d, d.callOK(m.method, m.args(d, agent)...))
	calls := e.sequence()
	m.undo(d)
	tl.calls = len(calls)
	m.check(d, "after an uninterrupted "+m.name)
	for i, c := range calls {
		name := fmt.Sprintf("%s, answer of %s #%d lost (call %d of %d)", m.name, c.command, c.k+1, i+1, len(calls))
		tl.cases++
		before := d.leaks
		fired, ok := m.lose(d, c, fmt.Sprintf("lost-%d", i), name)
		if fired {
			tl.faults++
		}
		if !ok {
			tl.failed++
		}
		m.check(d, name+", after the director's next step")
		m.undo(d)
		m.check(d, name+", after the director undid it")
		if d.leaks > before {
			tl.dirty++
		}
	}
	if before := d.leaks; m.awaits {
		time.Sleep(uploadTimeout + time.Second)
		d.deferUploads = false
		m.step(d)
		m.done(d, d.callOK(m.method, m.args(d, "lost-settle")...))
		m.undo(d)
		m.check(d, m.name+": after the upload timeout, the call and its undoing once more")
		if d.leaks > before {
			tl.dirty++
		}
	}
	tl.leaks = d.leaks
	return tl
}

// check is the director's census. create_vm's cleanup waits for CloudStack
// to settle the upload of a config drive ISO before deleting it, so for
// create_vm/configdrive an ISO is deferred only while CloudStack still
// refuses to delete it (awaitingUpload), not for its mark alone: one
// CloudStack has settled but that is still marked for the next create_vm's
// sweep is a leak here (the crash suite, whose killed calls clean nothing
// up, defers it).
func (m lostMethod) check(d *director, when string) {
	d.e.t.Helper()
	if m.drive {
		var settled []resource
		for _, r := range d.e.leaks(d.base, d.holds) {
			if r.Kind == "ISO" && r.sweepable && !awaitingUpload(r.State) {
				settled = append(settled, r)
			}
		}
		d.count(when+" (settled ISOs left for the next sweep)", settled)
	}
	d.check(when)
}

// checkNothingNew: after ok_to_retry nothing this call made may be left,
// not even an upload CloudStack has not settled (the director retries with
// the same agent_id and never hears of it); what an earlier case left
// pending (named in its error, the next create_vm's to sweep) is not this
// call's.
func (m lostMethod) checkNothingNew(d *director, pending ledger, when string) {
	d.e.t.Helper()
	var made []resource
	for _, r := range d.e.leaks(d.base, d.holds) {
		if !pending[r.key()] {
			made = append(made, r)
		}
	}
	d.count(when, made)
	d.check(when)
}

// pending is what the census now defers (checks swept all else).
func (d *director) pending() ledger {
	d.e.t.Helper()
	l := ledger{}
	for _, r := range d.e.extras(d.base, d.holds) {
		l[r.key()] = true
	}
	return l
}

// count counts rows as leaks, names them and sweeps them.
func (d *director) count(when string, rows []resource) {
	d.e.t.Helper()
	if len(rows) == 0 {
		return
	}
	d.leaks += len(rows)
	d.e.t.Errorf("%s: %d CloudStack resources beyond what the director knows (%s):\n%s", when, len(rows), d.holds,
		describe(rows))
	d.e.sweep(d.base, rows)
}

// step runs before, if any.
func (m lostMethod) step(d *director) {
	if m.before != nil {
		m.before(d)
	}
}

// lose runs the method with the answer of one call lost, then the
// director's next step. It says whether the fault fired and whether the
// director ended with a success.
func (m lostMethod) lose(d *director, c call, agent, name string) (fired, ok bool) {
	e := d.e
	e.t.Helper()
	m.step(d)
	pending := d.pending()
	if err := e.sim.Admin.AddFault(simulator.Fault{Command: c.command, Lost: true, Skip: c.k}); err != nil {
		e.t.Fatal(err)
	}
	r := e.call(m.method, m.args(d, agent)...)
	left, err := e.sim.Admin.Faults()
	if err != nil {
		e.t.Fatal(err)
	}
	fired = len(left) == 0
	if err := e.sim.Admin.ClearFaults(); err != nil {
		e.t.Fatal(err)
	}
	if !fired {
		e.t.Logf("%s: the call was not reached this time (%s)", name, outcome{r: &r})
	}
	if r.Error == nil {
		m.done(d, r)
		return fired, true
	}
	if r.Error.Retry {
		m.checkNothingNew(d, pending, name+", answered ok_to_retry (nothing may be left behind, nor await its upload)")
	} else {
		agent += "-next"
	}
	again := e.call(m.method, m.args(d, agent)...)
	if again.Error != nil {
		e.t.Errorf("%s: first answer %s; the director's retry failed: %s: %s\nstderr:\n%s", name, outcome{r: &r},
			again.Error.Type, clip(again.Error.Message, 2000), clip(again.Stderr, 4000))
		return fired, false
	}
	m.done(d, again)
	return fired, true
}

// sequence is the CloudStack calls since the last reset, in order, each
// with its occurrence among its command's calls.
func (e *env) sequence() []call {
	e.t.Helper()
	reqs, err := e.sim.Admin.Requests()
	if err != nil {
		e.t.Fatal(err)
	}
	seen := map[string]int{}
	var out []call
	for _, r := range reqs {
		out = append(out, call{r.Command, seen[r.Command], r.JobID != "" || r.Command == "queryAsyncJobResult"})
		seen[r.Command]++
	}
	return out
}

func lostMethods() []lostMethod {
	networks := map[string]any{"default": manualNet("10.1.1.95"), "public": map[string]any{"type": "vip", "ip": "192.168.2.95"}}
	custom := map[string]any{"disk_offering": "Custom"}
	stemcell := func(d *director) { d.holds.Stemcells = append(d.holds.Stemcells, d.e.stemcell()) }
	vm := func(d *director) {
		stemcell(d)
		d.holds.VMs = append(d.holds.VMs, d.e.createVM(d.holds.Stemcells[0], "10.1.1.96"))
	}
	vmAndDisk := func(d *director) {
		vm(d)
		d.holds.Disks = append(d.holds.Disks, d.e.createDisk(1024, custom, d.holds.VMs[0]))
	}
	attached := func(d *director) {
		vmAndDisk(d)
		d.e.attachDisk(d.holds.VMs[0], d.holds.Disks[0])
	}
	vmArgs := func(d *director, agent string) []any {
		return []any{agent, d.holds.Stemcells[0], smallVM, networks, []string{}, boshEnv}
	}
	// The director's first VM, disk or snapshot stays; later ones are
	// the cases'.
	releaseVMs := func(from int) func(d *director) {
		return func(d *director) {
			for len(d.holds.VMs) > from {
				d.callOK("delete_vm", d.holds.VMs[from])
				d.holds.VMs = append(d.holds.VMs[:from], d.holds.VMs[from+1:]...)
			}
		}
	}
	releaseDisks := func(from int) func(d *director) {
		return func(d *director) {
			for len(d.holds.Disks) > from {
				d.callOK("delete_disk", d.holds.Disks[from])
				d.holds.Disks = append(d.holds.Disks[:from], d.holds.Disks[from+1:]...)
			}
		}
	}
	releaseSnapshots := func(d *director) {
		for _, id := range d.holds.Snapshots {
			d.callOK("delete_snapshot", id)
		}
		d.holds.Snapshots = nil
	}
	releaseStemcells := func(d *director) {
		for _, id := range d.holds.Stemcells {
			d.callOK("delete_stemcell", id)
		}
		d.holds.Stemcells = nil
	}
	holdVM := func(d *director, r response) { d.holds.VMs = append(d.holds.VMs, cid(r)) }
	holdDisk := func(d *director, r response) { d.holds.Disks = append(d.holds.Disks, cid(r)) }
	holdSnapshot := func(d *director, r response) { d.holds.Snapshots = append(d.holds.Snapshots, cid(r)) }
	holdStemcell := func(d *director, r response) { d.holds.Stemcells = append(d.holds.Stemcells, cid(r)) }
	nothing := func(*director, response) {}
	none := func(*director) {}
	last := func(list []string) string { return list[len(list)-1] }
	uploads := []string{"-upload-operation-timeout", uploadTimeout.String()}
	createVM := lostMethod{name: "create_vm", method: "create_vm", prepare: stemcell, args: vmArgs, done: holdVM, undo: releaseVMs(0)}
	deleteVM := lostMethod{name: "delete_vm", method: "delete_vm", prepare: stemcell,
		before: func(d *director) { d.holds.VMs = append(d.holds.VMs, d.e.createVM(d.holds.Stemcells[0], "10.1.1.97")) },
		args:   func(d *director, _ string) []any { return []any{last(d.holds.VMs)} },
		done:   func(d *director, _ response) { d.holds.VMs = d.holds.VMs[:len(d.holds.VMs)-1] }, undo: releaseVMs(0)}
	oldCreateVM, oldDeleteVM := createVM, deleteVM
	// With lbs: the rule is created, tagged and joined by create_vm, and
	// deleted by the delete_vm of its only VM.
	lbProps := lbVMType(webEntry("192.168.2.94"))
	lbArgs := func(d *director, agent string) []any {
		return []any{agent, d.holds.Stemcells[0], lbProps, networks, []string{}, boshEnv}
	}
	lbPrepare := func(d *director) {
		stemcell(d)
		d.operatorIPs("192.168.2.93", "192.168.2.94") // the first becomes the source NAT address
	}
	lbCreateVM := lostMethod{name: "create_vm/lbs", method: "create_vm", prepare: lbPrepare, args: lbArgs, done: holdVM,
		undo: releaseVMs(0)}
	lbDeleteVM := deleteVM
	lbDeleteVM.name, lbDeleteVM.prepare = "delete_vm/lbs", lbPrepare
	lbDeleteVM.before = func(d *director) {
		d.holds.VMs = append(d.holds.VMs, cid(d.e.call("create_vm", lbArgs(d, "lost-lb-victim")...).ok(d.e.t)))
	}
	oldCreateVM.name, oldCreateVM.registry = "create_vm/registry", true
	oldDeleteVM.name, oldDeleteVM.registry = "delete_vm/registry", true
	// bosh.io's OpenStack stemcell on KVM, its config drive ISO by upload
	// (the CPI's default without webdav.listen): an ISO CloudStack created
	// but whose bytes were never sent (getUploadParamsForIso's answer lost)
	// waits for CloudStack's upload timeout; create_vm waits for one it
	// received to settle (one monitor poll) and deletes it.
	driveCreateVM := createVM
	driveCreateVM.name, driveCreateVM.awaits, driveCreateVM.drive = "create_vm/configdrive", true, true
	driveCreateVM.simArgs = append([]string{"-hypervisor", "KVM"}, uploads...)
	driveCreateVM.prepare = func(d *director) { d.holds.Stemcells = append(d.holds.Stemcells, d.e.openStackStemcell()) }
	// The same stemcell on XenServer: its template a VHD converted from
	// the QCOW2 (create_stemcell/openstack-xen), its VMs' config drives
	// as on KVM.
	xenDriveCreateVM := driveCreateVM
	xenDriveCreateVM.name, xenDriveCreateVM.simArgs = "create_vm/configdrive-xen", uploads
	xenDriveCreateVM.prepare = func(d *director) {
		d.holds.Stemcells = append(d.holds.Stemcells, d.e.openStackXenStemcell("qcow2"))
	}
	// bosh.io's vSphere stemcell on VMware: its VMs' CD-ROM ISOs take the
	// config drive's path, the deploy asks for UEFI and lsilogic.
	vmwareDriveCreateVM := driveCreateVM
	vmwareDriveCreateVM.name = "create_vm/cdrom-vmware"
	vmwareDriveCreateVM.simArgs = append([]string{"-hypervisor", "VMware"}, uploads...)
	vmwareDriveCreateVM.prepare = func(d *director) {
		d.holds.Stemcells = append(d.holds.Stemcells, d.e.vSphereStemcell())
	}
	return []lostMethod{
		createVM, deleteVM, oldCreateVM, oldDeleteVM, lbCreateVM, lbDeleteVM, driveCreateVM, xenDriveCreateVM,
		vmwareDriveCreateVM,
		{name: "reboot_vm", method: "reboot_vm", prepare: vm,
			args: func(d *director, _ string) []any { return []any{d.holds.VMs[0]} }, done: nothing, undo: none},
		{name: "set_vm_metadata", method: "set_vm_metadata", prepare: vm,
			args: func(d *director, agent string) []any { return []any{d.holds.VMs[0], map[string]any{"name": agent}} },
			done: nothing, undo: none},
		{name: "create_disk", method: "create_disk",
			args: func(*director, string) []any { return []any{1024, custom, nil} }, done: holdDisk, undo: releaseDisks(0)},
		{name: "delete_disk", method: "delete_disk",
			before: func(d *director) { d.holds.Disks = append(d.holds.Disks, d.e.createDisk(1024, custom, nil)) },
			args:   func(d *director, _ string) []any { return []any{last(d.holds.Disks)} },
			done:   func(d *director, _ response) { d.holds.Disks = d.holds.Disks[:len(d.holds.Disks)-1] }, undo: releaseDisks(0)},
		{name: "attach_disk", method: "attach_disk", prepare: vmAndDisk,
			args: func(d *director, _ string) []any { return []any{d.holds.VMs[0], d.holds.Disks[0]} }, done: nothing,
			undo: func(d *director) { d.callOK("detach_disk", d.holds.VMs[0], d.holds.Disks[0]) }},
		{name: "detach_disk", method: "detach_disk", prepare: vmAndDisk,
			before: func(d *director) { d.e.attachDisk(d.holds.VMs[0], d.holds.Disks[0]) },
			args:   func(d *director, _ string) []any { return []any{d.holds.VMs[0], d.holds.Disks[0]} }, done: nothing, undo: none},
		{name: "resize_disk", method: "resize_disk",
			prepare: func(d *director) { d.holds.Disks = append(d.holds.Disks, d.e.createDisk(1024, custom, nil)) },
			before:  func(d *director) { d.size += 1024 },
			args:    func(d *director, _ string) []any { return []any{d.holds.Disks[0], 1024 + d.size} }, done: nothing, undo: none},
		{name: "update_disk", method: "update_disk",
			before: func(d *director) { d.holds.Disks = append(d.holds.Disks, d.e.createDisk(1024, custom, nil)) },
			args: func(d *director, _ string) []any {
				return []any{last(d.holds.Disks), 20480, map[string]any{"disk_offering": "Medium"}}
			}, done: nothing, undo: releaseDisks(0)},
		{name: "set_disk_metadata", method: "set_disk_metadata",
			prepare: func(d *director) { d.holds.Disks = append(d.holds.Disks, d.e.createDisk(1024, custom, nil)) },
			args: func(d *director, agent string) []any {
				return []any{d.holds.Disks[0], map[string]any{"director": "spec-director", "instance_id": agent}}
			}, done: nothing, undo: none},
		{name: "snapshot_disk", method: "snapshot_disk", prepare: attached,
			args: func(d *director, _ string) []any { return []any{d.holds.Disks[0], diskMeta} }, done: holdSnapshot, undo: releaseSnapshots},
		{name: "delete_snapshot", method: "delete_snapshot", prepare: attached,
			before: func(d *director) {
				var id string
				d.e.call("snapshot_disk", d.holds.Disks[0], diskMeta).ok(d.e.t).decode(d.e.t, &id)
				d.holds.Snapshots = append(d.holds.Snapshots, id)
			},
			args: func(d *director, _ string) []any { return []any{last(d.holds.Snapshots)} },
			done: func(d *director, _ response) { d.holds.Snapshots = d.holds.Snapshots[:len(d.holds.Snapshots)-1] },
			undo: releaseSnapshots},
		{name: "create_stemcell/upload", method: "create_stemcell", simArgs: uploads, awaits: true,
			args: (*director).stemcellArgs, done: holdStemcell, undo: releaseStemcells},
		{name: "create_stemcell/webdav", method: "create_stemcell", simArgs: uploads, awaits: true, edit: webdavConfig,
			args: (*director).stemcellArgs, done: holdStemcell, undo: releaseStemcells},
		{name: "create_stemcell/openstack-xen", method: "create_stemcell", simArgs: uploads, awaits: true,
			args: (*director).openStackStemcellArgs, done: holdStemcell, undo: releaseStemcells},
		{name: "delete_stemcell", method: "delete_stemcell", simArgs: uploads, awaits: true,
			before: func(d *director) {
				var id string
				d.e.call("create_stemcell", d.stemcellArgs("")...).ok(d.e.t).decode(d.e.t, &id)
				d.holds.Stemcells = append(d.holds.Stemcells, id)
			},
			args: func(d *director, _ string) []any { return []any{last(d.holds.Stemcells)} },
			done: func(d *director, _ response) { d.holds.Stemcells = d.holds.Stemcells[:len(d.holds.Stemcells)-1] },
			undo: releaseStemcells},
	}
}
