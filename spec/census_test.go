package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// The census: every CloudStack resource the CPI can create, listed as the
// admin sees it, compared with what the director knows. What the zone held
// before the test (system templates, the operator's addresses) is the
// baseline and never counts.
//
// What counts as existing:
//   - VMs in any state but Expunging. A Destroyed VM awaiting expunge
//     counts: it keeps its addresses and host name until the expunge thread
//     runs (a day by default), and the CPI, allowed to expunge here, never
//     means to leave one. An Expunging VM has already given its NICs back.
//   - volumes in any state but Destroy/Expunged/Expunging (a destroyed
//     volume is storage cleanup's, gone from the operator's view);
//   - snapshots not Destroyed;
//   - public IPs allocated and not the network's source NAT;
//   - templates of every zone, ready or not (an upload in progress too);
//   - ISOs the same way (the config drives of OpenStack KVM stemcells'
//     VMs), each belonging to the VM it is attached to;
//   - affinity groups;
//   - load-balancer rules, which belong to the VMs behind them, and
//     firewall rules, which belong to the load-balancer rule of their
//     address and port (the one open_firewall opened for it), if any;
//   - with a registry (old stemcells), its entries: a VM's belongs to it.
//
// Tags on gone resources do not count: CloudStack removes them with the
// resource, and a stray tag holds nothing.

// resource is one row of the census.
type resource struct {
	Kind, ID, Name, State string
	Tags                  map[string]string
	VMID                  string // the VM a volume is attached to, or an IP's static NAT target
	Members               []string
	since                 string // a public IP's allocation time
	// sweepable: an ISO the CPI left marked incomplete, for the next
	// create_vm's sweep. The crash suite defers it (a killed create_vm
	// cleans nothing up); the lost-answer suite only while CloudStack
	// still refuses to delete it (lostMethod.check), as create_vm's
	// cleanup waits for CloudStack to settle an upload it received.
	sweepable bool
}

// key identifies the resource across censuses. A public IP's row (and id)
// outlives its allocation, so its key is the allocation: the same address
// allocated again is a new resource.
func (r resource) key() string { return r.Kind + " " + r.ID + " " + r.since }

func (r resource) String() string {
	var tags []string
	for k, v := range r.Tags {
		tags = append(tags, k+"="+v)
	}
	sort.Strings(tags)
	s := fmt.Sprintf("%s %s name=%q state=%q tags={%s}", r.Kind, r.ID, r.Name, r.State, strings.Join(tags, ","))
	if r.VMID != "" {
		s += " vm=" + r.VMID
	}
	return s
}

// known is what the director holds: the CIDs it got back and has not
// deleted. A VM's parts (its ROOT volume, its ephemeral disk, its vip, the
// affinity groups and load-balancer rules it is in) belong to it.
type known struct {
	VMs, Disks, Snapshots, Stemcells []string
}

func (k known) has(list []string, id string) bool {
	for _, x := range list {
		if x == id {
			return true
		}
	}
	return false
}

// inventory lists every resource the census counts, now.
func (e *env) inventory() []resource {
	e.t.Helper()
	var out []resource
	c := e.client()
	vp := c.VirtualMachine.NewListVirtualMachinesParams()
	vp.SetListall(true)
	vms, err := c.VirtualMachine.ListVirtualMachines(vp)
	e.must("listVirtualMachines", err)
	for _, vm := range vms.VirtualMachines {
		if vm.State != "Expunging" {
			out = append(out, resource{Kind: "VM", ID: vm.Id, Name: vm.Name + "/" + vm.Displayname, State: vm.State, Tags: tagsOf(vm.Tags)})
		}
	}
	out = append(out, e.isoCensus(vms.VirtualMachines)...)
	for _, v := range e.volumes() {
		switch v.State {
		case "Destroy", "Expunged", "Expunging":
			continue
		}
		out = append(out, resource{Kind: "volume/" + v.Type, ID: v.Id, Name: v.Name, State: v.State, Tags: tagsOf(v.Tags), VMID: v.Virtualmachineid})
	}
	for _, s := range e.snapshots() {
		if s.State != "Destroyed" {
			out = append(out, resource{Kind: "snapshot", ID: s.Id, Name: s.Name, State: s.State, Tags: tagsOf(s.Tags)})
		}
	}
	for _, ip := range e.publicIPs() {
		if !ip.Issourcenat {
			out = append(out, resource{Kind: "public IP", ID: ip.Id, Name: ip.Ipaddress, State: ip.State, Tags: tagsOf(ip.Tags),
				VMID: ip.Virtualmachineid, since: ip.Allocated})
		}
	}
	out = append(out, e.templateCensus()...)
	ap := c.AffinityGroup.NewListAffinityGroupsParams()
	ap.SetListall(true)
	groups, err := c.AffinityGroup.ListAffinityGroups(ap)
	e.must("listAffinityGroups", err)
	for _, g := range groups.AffinityGroups {
		out = append(out, resource{Kind: "affinity group", ID: g.Id, Name: g.Name, State: g.Type, Members: g.VirtualmachineIds})
	}
	out = append(out, e.ruleCensus()...)
	return append(out, e.registryCensus(vms.VirtualMachines)...)
}

// ruleCensus lists load-balancer rules with the VMs behind them, and
// firewall rules with the VMs of the load-balancer rule they open.
func (e *env) ruleCensus() []resource {
	e.t.Helper()
	var out []resource
	behind := map[string][]string{} // address id and port → VMs
	for _, r := range e.lbRules() {
		vms := e.lbVMs(r.Id)
		behind[r.Publicipid+":"+r.Publicport] = vms
		out = append(out, resource{Kind: "LB rule", ID: r.Id, Name: r.Name + " on " + r.Publicip, State: r.State,
			Tags: tagsOf(r.Tags), Members: vms})
	}
	for _, f := range e.firewallRules() {
		out = append(out, resource{Kind: "firewall rule", ID: f.Id, Name: fmt.Sprintf("%s %d on %s", f.Protocol, f.Startport, f.Ipaddress),
			State: f.State, Tags: tagsOf(f.Tags), Members: behind[fmt.Sprintf("%s:%d", f.Ipaddressid, f.Startport)]})
	}
	return out
}

// registryCensus lists the registry's entries (one file per instance in
// its store), each with the VM whose name it is kept under, if any.
func (e *env) registryCensus(vms []*csgo.VirtualMachine) []resource {
	e.t.Helper()
	if e.registryStore == "" {
		return nil
	}
	files, err := os.ReadDir(e.registryStore)
	e.must("reading the registry's store", err)
	var out []resource
	for _, f := range files {
		id, ok := strings.CutSuffix(f.Name(), ".json")
		if !ok || f.IsDir() {
			continue
		}
		r := resource{Kind: "registry entry", ID: id, Name: id}
		for _, vm := range vms {
			if vm.Name == id && vm.State != "Expunging" {
				r.VMID = vm.Id
			}
		}
		out = append(out, r)
	}
	return out
}

// templateCensus lists templates of every zone, ready or not, one row per
// template.
func (e *env) templateCensus() []resource {
	e.t.Helper()
	c := e.client()
	p := c.Template.NewListTemplatesParams("all")
	p.SetListall(true)
	resp, err := c.Template.ListTemplates(p)
	e.must("listTemplates", err)
	seen := map[string]bool{}
	var out []resource
	for _, t := range resp.Templates {
		if seen[t.Id] {
			continue
		}
		seen[t.Id] = true
		out = append(out, resource{Kind: "template", ID: t.Id, Name: t.Name, State: t.Status, Tags: tagsOf(t.Tags)})
	}
	return out
}

// isoCensus lists ISOs of every zone, ready or not, one row per ISO, each
// with the VM it is attached to, if any.
func (e *env) isoCensus(vms []*csgo.VirtualMachine) []resource {
	e.t.Helper()
	c := e.client()
	p := c.ISO.NewListIsosParams()
	p.SetIsofilter("all")
	p.SetListall(true)
	resp, err := c.ISO.ListIsos(p)
	e.must("listIsos", err)
	seen := map[string]bool{}
	var out []resource
	for _, iso := range resp.Isos {
		if seen[iso.Id] {
			continue
		}
		seen[iso.Id] = true
		r := resource{Kind: "ISO", ID: iso.Id, Name: iso.Name, State: iso.Status, Tags: tagsOf(iso.Tags)}
		if m, ok := (cloudstack.ISO{DisplayText: iso.Displaytext}).Mark(); ok && m.Incomplete {
			r.sweepable = true
		}
		for _, vm := range vms {
			if vm.Isoid == iso.Id && vm.State != "Expunging" {
				r.VMID = vm.Id
			}
		}
		out = append(out, r)
	}
	return out
}

func (e *env) must(what string, err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("census: %s: %v", what, err)
	}
}

// ledger is a census baseline: the rows that were there before.
type ledger map[string]bool

func (e *env) baseline() ledger {
	e.t.Helper()
	l := ledger{}
	for _, r := range e.inventory() {
		l[r.key()] = true
	}
	return l
}

// extras are the resources that are neither in the baseline nor known to
// the director (directly or as a known VM's part).
func (e *env) extras(base ledger, k known) []resource {
	e.t.Helper()
	var out []resource
	for _, r := range e.inventory() {
		if base[r.key()] || k.owns(r) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// owns says whether a resource is the director's or a part of one of its VMs.
func (k known) owns(r resource) bool {
	switch {
	case r.Kind == "VM":
		return k.has(k.VMs, r.ID)
	case strings.HasPrefix(r.Kind, "volume/"):
		return k.has(k.Disks, r.ID) || (r.VMID != "" && k.has(k.VMs, r.VMID))
	case r.Kind == "snapshot":
		return k.has(k.Snapshots, r.ID)
	case r.Kind == "public IP":
		return r.VMID != "" && k.has(k.VMs, r.VMID)
	case r.Kind == "template":
		// An OpenStack or vSphere stemcell's CID is its template's id, prefixed.
		return k.has(k.Stemcells, r.ID) || k.has(k.Stemcells, "configdrive-"+r.ID) || k.has(k.Stemcells, "cdrom-"+r.ID)
	case r.Kind == "ISO":
		return r.VMID != "" && k.has(k.VMs, r.VMID)
	case r.Kind == "registry entry":
		return r.VMID != "" && k.has(k.VMs, r.VMID)
	case r.Kind == "affinity group", r.Kind == "LB rule", r.Kind == "firewall rule":
		for _, m := range r.Members {
			if k.has(k.VMs, m) {
				return true
			}
		}
	}
	return false
}

// leaks is the census: the extras, after giving jobs the killed or
// interrupted CPI left running a moment to finish (a resource a job creates
// after the census is a leak all the same, so the census waits until two
// looks agree).
func (e *env) leaks(base ledger, k known) []resource {
	e.t.Helper()
	prev := e.extras(base, k)
	for i := 0; i < 10; i++ {
		time.Sleep(100 * time.Millisecond)
		now := e.extras(base, k)
		if sameRows(prev, now) {
			return now
		}
		prev = now
	}
	return prev
}

func sameRows(a, b []resource) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].String() != b[i].String() {
			return false
		}
	}
	return true
}

func describe(rs []resource) string {
	var lines []string
	for _, r := range rs {
		lines = append(lines, "  "+r.String())
	}
	return strings.Join(lines, "\n")
}

// sweep removes leaked resources as an operator would by hand, so the next
// round starts clean, and adds what CloudStack will not remove yet to the
// baseline, so each leak is counted once.
func (e *env) sweep(base ledger, rs []resource) {
	e.t.Helper()
	c := e.client()
	fail := func(r resource, err error) {
		if err != nil {
			e.t.Logf("sweep: %s: %v", r, err)
		}
	}
	// A leaked VM takes its leaked data volumes with it (volumeids).
	for _, r := range rs {
		if r.Kind == "VM" {
			p := c.VirtualMachine.NewDestroyVirtualMachineParams(r.ID)
			p.SetExpunge(true)
			var data []string
			for _, v := range rs {
				if v.Kind == "volume/DATADISK" && v.VMID == r.ID {
					data = append(data, v.ID)
				}
			}
			if len(data) > 0 {
				p.SetVolumeids(data)
			}
			_, err := c.VirtualMachine.DestroyVirtualMachine(p)
			fail(r, err)
		}
	}
	for _, r := range rs {
		var err error
		switch r.Kind {
		case "volume/DATADISK":
			if r.VMID != "" {
				continue // expunged with its leaked VM
			}
			_, err = c.Volume.DeleteVolume(c.Volume.NewDeleteVolumeParams(r.ID))
		case "public IP":
			_, err = c.Address.DisassociateIpAddress(c.Address.NewDisassociateIpAddressParams(r.ID))
		case "snapshot":
			_, err = c.Snapshot.DeleteSnapshot(c.Snapshot.NewDeleteSnapshotParams(r.ID))
		case "template":
			_, err = c.Template.DeleteTemplate(c.Template.NewDeleteTemplateParams(r.ID))
		case "ISO":
			if r.VMID != "" { // attached to a VM the director holds no more
				_, err = c.ISO.DetachIso(c.ISO.NewDetachIsoParams(r.VMID))
				fail(r, err)
			}
			_, err = c.ISO.DeleteIso(c.ISO.NewDeleteIsoParams(r.ID))
		case "LB rule":
			_, err = c.LoadBalancer.DeleteLoadBalancerRule(c.LoadBalancer.NewDeleteLoadBalancerRuleParams(r.ID))
		case "firewall rule":
			if e.firewallRuleLive(r.ID) { // not revoked with its load-balancer rule
				_, err = c.Firewall.DeleteFirewallRule(c.Firewall.NewDeleteFirewallRuleParams(r.ID))
			}
		case "affinity group":
			p := c.AffinityGroup.NewDeleteAffinityGroupParams()
			p.SetId(r.ID)
			_, err = c.AffinityGroup.DeleteAffinityGroup(p)
		case "registry entry":
			err = os.Remove(filepath.Join(e.registryStore, r.ID+".json"))
		}
		fail(r, err)
	}
	e.settleSweep(base, rs)
}

// settleSweep waits until the swept resources are gone (some removals
// finish in a job of their own); what CloudStack keeps is added to the
// baseline, so it is counted once.
func (e *env) settleSweep(base ledger, rs []resource) {
	e.t.Helper()
	swept := map[string]bool{}
	for _, r := range rs {
		swept[r.key()] = true
	}
	var left []resource
	for i := 0; i < 20; i++ {
		left = nil
		for _, r := range e.inventory() {
			if swept[r.key()] {
				left = append(left, r)
			}
		}
		if len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, r := range left {
		e.t.Logf("sweep: CloudStack keeps %s; it is not counted again", r)
		base[r.key()] = true
	}
}

// TestCensusSeesWhatTheDirectorDoesNotKnow: the census counts nothing the
// director holds (nor a held VM's ROOT volume, ephemeral disk, vip and
// affinity group), and everything it has forgotten, of every kind the CPI
// creates, a Destroyed VM included; the sweep then removes it all.
func TestCensusSeesWhatTheDirectorDoesNotKnow(t *testing.T) {
	e := newEnv(t, nil)
	e.allocateIP("192.168.2.108", "192.168.2.109") // the operator's, for lbs
	d := newDirector(e)
	d.holds.Stemcells = []string{e.stemcell()}
	vipNets := func(ip, vip string) map[string]any {
		return map[string]any{"default": manualNet(ip), "public": map[string]any{"type": "vip", "ip": vip}}
	}
	props := map[string]any{"compute_offering": "Small Instance", "ephemeral_disk_size": 1024,
		"ephemeral_disk_offering": "Custom", "affinity_group": "census"}
	vmOf := func(agent, ip, vip string) string {
		return cid(e.call("create_vm", agent, d.holds.Stemcells[0], props, vipNets(ip, vip), []string{}, boshEnv).ok(t))
	}
	d.holds.VMs = []string{vmOf("census-1", "10.1.1.110", "192.168.2.110")}
	d.holds.Disks = []string{e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, nil)}
	e.attachDisk(d.holds.VMs[0], d.holds.Disks[0])
	if extra := e.leaks(d.base, d.holds); len(extra) != 0 {
		t.Fatalf("the census counts what the director holds:\n%s", describe(extra))
	}

	// Forgotten: a VM in another affinity group and behind a load-balancer
	// rule with its firewall rule, a disk, a snapshot, a stemcell.
	props["affinity_group"] = "census-forgotten"
	props["lbs"] = []map[string]any{webEntry("192.168.2.109")}
	lostVM := vmOf("census-2", "10.1.1.111", "192.168.2.111")
	lostDisk := e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, nil)
	lostSnap := cid(e.call("snapshot_disk", d.holds.Disks[0], diskMeta).ok(t))
	lostStemcell := e.stemcell()
	c := e.client()
	if _, err := c.VirtualMachine.DestroyVirtualMachine(c.VirtualMachine.NewDestroyVirtualMachineParams(lostVM)); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	extra := e.leaks(d.base, d.holds)
	for _, r := range extra {
		kinds[r.Kind]++
		if r.ID == lostVM && r.State != "Destroyed" {
			t.Errorf("the forgotten VM is %s, want Destroyed (without expunge)", r.State)
		}
	}
	// The Destroyed VM's ROOT volume is in Destroy, gone with the VM; its
	// ephemeral disk is still attached to it.
	want := map[string]int{"VM": 1, "volume/ROOT": 0, "volume/DATADISK": 2, "snapshot": 1, "public IP": 1,
		"template": 1, "affinity group": 1, "LB rule": 1, "firewall rule": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("census: %d %s, want %d; extras (forgot VM %s, disk %s, snapshot %s, stemcell %s):\n%s",
				kinds[k], k, n, lostVM, lostDisk, lostSnap, lostStemcell, describe(extra))
		}
	}
	e.sweep(d.base, extra)
	for _, r := range extra {
		if d.base[r.key()] {
			t.Errorf("the sweep could not remove %s", r)
		}
	}
	if left := e.leaks(d.base, d.holds); len(left) != 0 {
		t.Fatalf("after the sweep:\n%s", describe(left))
	}
}

// TestCensusCountsRegistryEntries: with a registry, a held VM's entry is
// the VM's; an entry no VM has is counted, and the sweep removes it.
func TestCensusCountsRegistryEntries(t *testing.T) {
	e, _ := oldStemcellEnv(t)
	d := newDirector(e)
	d.holds.Stemcells = []string{e.stemcell()}
	d.holds.VMs = []string{e.createVM(d.holds.Stemcells[0], "10.1.1.112")}
	if extra := e.leaks(d.base, d.holds); len(extra) != 0 {
		t.Fatalf("the census counts what the director holds:\n%s", describe(extra))
	}
	stray := filepath.Join(e.registryStore, "vm-gone.json")
	if err := os.WriteFile(stray, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	extra := e.leaks(d.base, d.holds)
	if len(extra) != 1 || extra[0].Kind != "registry entry" || extra[0].ID != "vm-gone" {
		t.Fatalf("census with a stray registry entry:\n%s", describe(extra))
	}
	e.sweep(d.base, extra)
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatalf("the sweep left %s (%v)", stray, err)
	}
}

// TestCensusCountsISOs: a held VM's config drive ISO is the VM's; detached
// by hand, it belongs to nobody, is counted, and the sweep removes it.
func TestCensusCountsISOs(t *testing.T) {
	e := kvmEnv(t, nil)
	d := newDirector(e)
	d.holds.Stemcells = []string{e.openStackStemcell()}
	d.holds.VMs = []string{e.createVM(d.holds.Stemcells[0], "10.1.1.113")}
	if extra := e.leaks(d.base, d.holds); len(extra) != 0 {
		t.Fatalf("the census counts what the director holds:\n%s", describe(extra))
	}
	c := e.client()
	if _, err := c.ISO.DetachIso(c.ISO.NewDetachIsoParams(d.holds.VMs[0])); err != nil {
		t.Fatal(err)
	}
	extra := e.leaks(d.base, d.holds)
	if len(extra) != 1 || extra[0].Kind != "ISO" || extra[0].VMID != "" {
		t.Fatalf("census with a detached ISO:\n%s", describe(extra))
	}
	e.sweep(d.base, extra)
	if left := e.leaks(d.base, d.holds); len(left) != 0 || d.base[extra[0].key()] {
		t.Fatalf("after the sweep:\n%s", describe(left))
	}
}
