//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/fixtures"
)

// What bosh-deployment's files ask for, which its manifest deploys
// unchanged: cloudstack/cpi.yml's last resource pool cloud_properties
// (disk: 25_000, ephemeral_disk_offering and the disk pool's
// disk_offering shared.custom, root_disk_size: 15_000) and bosh.yml's
// disk pool (disk_size: 65536). CloudStack sizes disks in whole GiB; the
// CPI rounds MiB up.
const (
	bdOffering       = "shared.custom"
	bdEphemeralBytes = 25 << 30 // 25_000 MiB
	bdRootBytes      = 15 << 30 // 15_000 MiB
	bdDiskBytes      = 64 << 30 // 65536 MiB
)

// TestCreateEnvBoshDeployment deploys a director's VM as an operator
// moving over from the Go CPI does: bosh-deployment's own bosh.yml and
// cloudstack/cpi.yml, unmodified, with an ops file that swaps the CPI
// release and, as the harness cannot fetch the director's releases, the
// director's jobs for the test release's (hack/e2e/bosh-deployment-ops.yml).
// Then delete-env leaves nothing the API lists.
func TestCreateEnvBoshDeployment(t *testing.T) {
	fixtures.Require(t, "cloudstack/cpi.yml") // the script finds them by the same lookup
	c := loadConfig(t)
	s := newSuite(t, c, c.BoshDeployment)
	greeting := fmt.Sprintf("hello from bosh-deployment's manifest, %d", time.Now().UnixNano())
	before := s.census(t)
	var d deployment
	t.Run("create-env", func(t *testing.T) {
		s.run(t, "create-env", c.ComputeOffering, c.DiskSize, greeting)
		d = s.state(t)
		s.assertDeployed(t, d, c.ComputeOffering, greeting)
		s.assertBoshDeploymentVM(t, d)
		// The census sees what create-env made, so its emptiness after
		// delete-env means something.
		made := strings.Join(leftovers(before, s.census(t)), "\n")
		for _, id := range []string{"VM " + d.VM, "volume " + d.Disk, "template " + d.Template} {
			if !strings.Contains(made, id) {
				t.Errorf("the census does not list %s that create-env made; it lists as new:\n%s", id, made)
			}
		}
	})
	// Whatever create-env did, delete-env takes it away: the next test
	// needs the static IP, and nothing may be left behind.
	t.Run("delete-env", func(t *testing.T) { s.deleteEnv(t, d, before, c.ComputeOffering, c.DiskSize, greeting) })
}

// deleteEnv runs delete-env of a deployment and checks it left nothing of
// it (when create-env got as far as a VM) and nothing the census before
// create-env did not list.
func (s *suite) deleteEnv(t *testing.T, d deployment, before []string, offering string, diskSize int, greeting string) {
	t.Helper()
	s.run(t, "delete-env", offering, diskSize, greeting)
	if d.VM != "" {
		s.assertNothingLeft(t, d)
	}
	if left := leftovers(before, s.census(t)); len(left) > 0 {
		t.Errorf("delete-env left what was not there before create-env:\n%s", strings.Join(left, "\n"))
	}
}

// assertBoshDeploymentVM checks what bosh-deployment's cloud_properties,
// disk pool and cloudstack properties ask for beyond assertDeployed.
func (s *suite) assertBoshDeploymentVM(t *testing.T, d deployment) {
	t.Helper()
	vm := s.vm(t, d.VM)
	if vm == nil {
		t.Fatalf("VM %s is gone", d.VM)
	}
	// cloudstack.default_key_name of the cloudstack job properties.
	if vm.Keypairs != s.KeyPair {
		t.Errorf("VM %s has key pair %q, want %q (cloudstack.default_key_name)", d.VM, vm.Keypairs, s.KeyPair)
	}
	var root, ephemeral []*cloudstack.Volume
	for _, v := range s.volumesOf(t, d.VM) {
		switch {
		case v.Type == "ROOT":
			root = append(root, v)
		case v.Id != d.Disk:
			ephemeral = append(ephemeral, v)
		}
	}
	if len(root) != 1 || root[0].Size != bdRootBytes {
		t.Errorf("VM %s's root volumes %s, want one of %d bytes (root_disk_size: 15_000)", d.VM, describe(root), bdRootBytes)
	}
	if len(ephemeral) != 1 || ephemeral[0].Size != bdEphemeralBytes || ephemeral[0].Diskofferingname != bdOffering {
		t.Errorf("VM %s's ephemeral disks %s, want one of %d bytes on %s (disk: 25_000, ephemeral_disk_offering)",
			d.VM, describe(ephemeral), bdEphemeralBytes, bdOffering)
	}
	if v := s.volume(t, d.Disk); v == nil || v.Size != bdDiskBytes || v.Diskofferingname != bdOffering {
		t.Errorf("persistent disk %s is %s, want %d bytes on %s (disk_size: 65536, disk_offering)",
			d.Disk, describe([]*cloudstack.Volume{v}), bdDiskBytes, bdOffering)
	}
}

// describe names volumes for a failure message.
func describe(vs []*cloudstack.Volume) string {
	var out []string
	for _, v := range vs {
		if v == nil {
			out = append(out, "(none)")
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %s %d bytes on %q", v.Id, v.Name, v.Type, v.Size, v.Diskofferingname))
	}
	return "[" + strings.Join(out, "; ") + "]"
}

// census lists, through the API, everything of the kinds the CPI makes
// (in the environment's project, if it has one): one "kind id name" line
// each.
func (s *suite) census(t *testing.T) []string {
	t.Helper()
	var out []string
	add := func(kind string, lines []string) {
		for _, l := range lines {
			out = append(out, kind+" "+l)
		}
	}
	add("VM", names(s.vms(t, ""), func(vm *cloudstack.VirtualMachine) string {
		if gone(vm) {
			return ""
		}
		return vm.Id + " " + vm.Name
	}))
	add("volume", names(s.volumes(t, nil), func(v *cloudstack.Volume) string { return v.Id + " " + v.Name }))
	add("template", names(s.templates(t, ""), func(tpl *cloudstack.Template) string { return tpl.Id + " " + tpl.Name }))
	// The config drive ISOs create_vm makes for OpenStack stemcells.
	add("ISO", names(s.isos(t, ""), func(iso *cloudstack.Iso) string { return iso.Id + " " + iso.Name }))
	add("tag", names(s.tags(t, ""), func(tag *cloudstack.Tag) string {
		return tag.Resourcetype + " " + tag.Resourceid + " " + tag.Key
	}))
	// A source NAT address belongs to an isolated network (acquired when
	// its first VM implements it), not to a VM.
	add("public IP", names(s.allPublicIPs(t), func(ip *cloudstack.PublicIpAddress) string {
		if ip.Issourcenat {
			return ""
		}
		return ip.Id + " " + ip.Ipaddress
	}))
	add("affinity group", names(s.affinityGroups(t), func(g *cloudstack.AffinityGroup) string { return g.Id + " " + g.Name }))
	add("snapshot", names(s.snapshots(t), func(snap *cloudstack.Snapshot) string { return snap.Id + " " + snap.Name }))
	sort.Strings(out)
	return out
}

// names gives the name of each item of a listing, leaving out those named "".
func names[T any](list []*T, name func(*T) string) []string {
	var out []string
	for _, item := range list {
		if n := name(item); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// leftovers are the lines of after that before does not have.
func leftovers(before, after []string) []string {
	had := map[string]bool{}
	for _, l := range before {
		had[l] = true
	}
	var left []string
	for _, l := range after {
		if !had[l] {
			left = append(left, l)
		}
	}
	return left
}

func (s *suite) affinityGroups(t *testing.T) []*cloudstack.AffinityGroup {
	t.Helper()
	p := s.cs.AffinityGroup.NewListAffinityGroupsParams()
	s.scope(p)
	p.SetListall(true)
	r, err := s.cs.AffinityGroup.ListAffinityGroups(p)
	if err != nil {
		t.Fatalf("listAffinityGroups: %v", err)
	}
	return r.AffinityGroups
}

func (s *suite) snapshots(t *testing.T) []*cloudstack.Snapshot {
	t.Helper()
	p := s.cs.Snapshot.NewListSnapshotsParams()
	s.scope(p)
	p.SetListall(true)
	r, err := s.cs.Snapshot.ListSnapshots(p)
	if err != nil {
		t.Fatalf("listSnapshots: %v", err)
	}
	return r.Snapshots
}
