package spec

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// TestCreateDiskAfterAnInterruptedOne: create_disk calls for a VM killed
// while their job ran or after it had finished leave never-used volumes
// named for the VM and for their process; the next create_disk for that VM
// removes them at once, since their process is gone, and nothing the
// director uses. A disk of a call that may still run (a live process, or
// one on another host) stays until it is older than any call can last.
func TestCreateDiskAfterAnInterruptedOne(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) {
		cs := section(cfg, "cloudstack")
		cs["job_timeout"], cs["request_timeout"], cs["max_retries"] = "1s", "1s", 0
	})
	const longestCall = 7 * time.Second // job_timeout + 5 request_timeouts + 1 s
	vm := e.createVM(e.stemcell(), "10.1.1.76")
	props := map[string]any{"disk_offering": "Custom"}
	used := e.createDisk(1024, props, vm)
	e.attachDisk(vm, used)
	e.call("detach_disk", vm, used).ok(t) // Ready, detached: it holds data
	attached := e.createDisk(1024, props, vm)
	e.attachDisk(vm, attached)

	for _, f := range []simulator.Fault{
		{Command: "createVolume", Pending: true},                 // killed while the job runs
		{Command: "queryAsyncJobResult", Delay: 3 * time.Second}, // killed after the job finished
	} {
		e.inject([]simulator.Fault{f})
		e.killDuring("createVolume", "create_disk", 1024, props, vm)
	}
	e.inject(nil)
	// The second killed call already removed what the first left.
	if leftovers := e.disksFor(vm); len(leftovers) != 3 {
		t.Fatalf("the killed calls left %v", leftovers)
	}
	host, _ := os.Hostname()
	live := e.volumeNamed(fmt.Sprintf("bosh-disk-live-by-%d@%s-for-%s", os.Getpid(), host, vm))
	remote := e.volumeNamed("bosh-disk-remote-by-1@another-host-for-" + vm)

	fresh := e.createDisk(1024, props, vm)
	e.attachDisk(vm, fresh)
	want := []string{used, attached, fresh, live, remote}
	if got := e.disksFor(vm); !sameSet(got, want) {
		t.Fatalf("create_disk after the kills left %v, want %v", got, want)
	}
	time.Sleep(longestCall)
	last := e.createDisk(1024, props, vm)
	if got, want := e.disksFor(vm), []string{used, attached, fresh, last}; !sameSet(got, want) {
		t.Fatalf("create_disk once the others are older than any call left %v, want %v", got, want)
	}
}

// volumeNamed creates a detached volume of that name, as a create_disk
// call of another process would, and returns its id.
func (e *env) volumeNamed(name string) string {
	e.t.Helper()
	c := e.client()
	zones, err := c.Zone.ListZones(c.Zone.NewListZonesParams())
	if err != nil {
		e.t.Fatal(err)
	}
	offerings, err := c.DiskOffering.ListDiskOfferings(c.DiskOffering.NewListDiskOfferingsParams())
	if err != nil {
		e.t.Fatal(err)
	}
	p := c.Volume.NewCreateVolumeParams()
	p.SetName(name)
	p.SetZoneid(zones.Zones[0].Id)
	for _, o := range offerings.DiskOfferings {
		if o.Name == "Custom" {
			p.SetDiskofferingid(o.Id)
		}
	}
	p.SetSize(1)
	v, err := c.Volume.CreateVolume(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return v.Id
}

func sameSet(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[string]bool{}
	for _, g := range got {
		seen[g] = true
	}
	for _, w := range want {
		if !seen[w] {
			return false
		}
	}
	return true
}

// disksFor lists the live data volumes named for the VM.
func (e *env) disksFor(vm string) []string {
	e.t.Helper()
	var ids []string
	for _, v := range e.volumes() {
		if strings.HasSuffix(v.Name, "-for-"+vm) && v.State != "Destroy" {
			ids = append(ids, v.Id)
		}
	}
	return ids
}

// killDuring runs a CPI call and kills it (SIGKILL) as soon as CloudStack
// has processed command.
func (e *env) killDuring(command, method string, args ...any) {
	e.t.Helper()
	before, err := e.sim.Admin.CountRequests(command)
	if err != nil {
		e.t.Fatal(err)
	}
	reached := func() bool {
		n, err := e.sim.Admin.CountRequests(command)
		return err == nil && n > before
	}
	// settle: into the wait for the job
	o := e.callKilled(e.request(method, args...), e.t.TempDir(),
		killPoint{when: reached, settle: 100 * time.Millisecond, limit: 10 * time.Second, what: "CloudStack's " + command})
	if !o.killed {
		e.t.Fatalf("%s answered before it was killed in %s: %s", method, command, o)
	}
}

// TestCreateDiskConvergesAfterACrashAtEachCall: create_disk for a VM is
// killed just after each CloudStack call it makes, createVolume's and the
// createTags sent beside its job included (the volume exists, untagged,
// while both jobs run); the director's next create_disk for the VM then
// removes what the killed one left, and CloudStack holds exactly the disk
// the director knows, marked with the director and the VM's agent.
func TestCreateDiskConvergesAfterACrashAtEachCall(t *testing.T) {
	e := newEnv(t, nil, "-job-latency", "200ms")
	vm := e.createVM(e.stemcell(), "10.1.1.77")
	props := map[string]any{"disk_offering": "Custom"}
	e.resetCalls()
	first := e.createDisk(1024, props, vm)
	calls := e.callSequence()
	e.call("delete_disk", first).ok(t)
	var steps []step
	seen := map[string]int{}
	for _, c := range calls {
		steps = append(steps, step{command: c, skip: seen[c]})
		seen[c]++
	}
	if seen["createTags"] != 1 {
		t.Fatalf("create_disk made the calls %v", steps)
	}
	for _, s := range steps {
		if !t.Run(s.String(), func(t *testing.T) {
			e.t = t
			e.killRequestDuring(s, e.request("create_disk", 1024, props, vm))
			disk := e.createDisk(1024, props, vm)
			if got := e.disksFor(vm); len(got) != 1 || got[0] != disk {
				t.Fatalf("after the kill and the director's next create_disk CloudStack has %v, the director knows %s", got, disk)
			}
			if tags := tagsOf(e.volume(disk).Tags); tags[marks.DirectorTag] != "spec-director" ||
				tags[marks.AgentTag] != "agent-10.1.1.77" {
				t.Errorf("disk %s has tags %v", disk, tags)
			}
			e.call("delete_disk", disk).ok(t)
		}) {
			break
		}
	}
}
