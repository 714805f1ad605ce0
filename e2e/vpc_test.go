//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// TestVPCCreateEnv is the VPC phase (make e2e-vpc, make test-e2e-vpc):
// create-env of the test deployment with its VM on a VPC tier (the
// network's cloud_properties name the tier, as any network). The VM runs
// on the tier with the static IP, the tier is the VPC's with its custom
// network ACL list, the agent answers through that list's rule for its
// mbus port, everything of the phase is in its CloudStack project and
// apart from phase 1's, and delete-env leaves the census as before.
func TestVPCCreateEnv(t *testing.T) {
	c := loadConfig(t)
	if c.VPCID == "" || c.VPCTierID == "" || c.VPC.CreateEnv == "" {
		t.Fatal("the VPC phase needs E2E_VPC_ID, E2E_VPC_TIER_ID and E2E_VPC_CREATE_ENV (make e2e-vpc, then make test-e2e-vpc)")
	}
	// Phase 1's resources (its VM, if e2e-up's create-env left it), before
	// newSuite deletes that environment for the static IP.
	phase1 := (&suite{config: c, cs: cloudstack.NewClient(c.APIURL, c.APIKey, c.SecretKey, true)}).census(t)
	t.Logf("outside the project before the phase: %d resources", len(phase1))
	s := newSuite(t, c, c.VPC)
	s.assertTier(t)
	greeting := fmt.Sprintf("hello from the VPC phase, %d", time.Now().UnixNano())
	before := s.census(t)
	var d deployment
	ok := t.Run("create-env", func(t *testing.T) {
		s.run(t, "create-env", c.ComputeOffering, c.DiskSize, greeting)
		d = s.state(t)
		s.assertDeployed(t, d, c.ComputeOffering, greeting)
		vm := s.vm(t, d.VM)
		if len(vm.Nic) != 1 || vm.Nic[0].Networkid != c.VPCTierID {
			t.Errorf("VM %s is not on tier %s alone: %+v", d.VM, c.VPCTierID, vm.Nic)
		}
		s.assertIsolated(t, d.VM, phase1)
	})
	t.Run("delete-env", func(t *testing.T) {
		s.deleteEnv(t, d, before, c.ComputeOffering, c.DiskSize, greeting)
	})
	if !ok {
		t.Fatal("create-env on the VPC tier failed (delete-env ran all the same)")
	}
}

// assertTier checks the network the VM goes to is the VPC's tier with a
// custom ACL list (not default_allow or default_deny), as 50-vpc.sh made it.
func (s *suite) assertTier(t *testing.T) {
	t.Helper()
	n, _, err := s.cs.Network.GetNetworkByID(s.VPCTierID, cloudstack.WithProject(s.ProjectID))
	if err != nil {
		t.Fatalf("the tier %s: %v", s.VPCTierID, err)
	}
	if n.Name != s.Network || n.Vpcid != s.VPCID || n.Aclid == "" || n.Aclname == "default_allow" || n.Aclname == "default_deny" {
		t.Fatalf("network %s is not tier %s of VPC %s with a custom ACL list: %+v", s.VPCTierID, s.Network, s.VPCID, n)
	}
}

// networks lists the networks (of the suite's project, if it has one).
func (s *suite) networks(t *testing.T) []*cloudstack.Network {
	t.Helper()
	p := s.cs.Network.NewListNetworksParams()
	s.scope(p)
	p.SetListall(true)
	r, err := s.cs.Network.ListNetworks(p)
	if err != nil {
		t.Fatalf("listNetworks: %v", err)
	}
	return r.Networks
}

// assertIsolated checks the VPC phase's project keeps the two phases
// apart: the phase's VM is listed with the project's projectid and not
// without it, the tier likewise, and nothing of the project's census is
// in the census outside it, now or as phase 1 left it (outside, taken
// before the phase began), nor any network outside it in the project.
func (s *suite) assertIsolated(t *testing.T, vmID string, outside []string) {
	t.Helper()
	if s.ProjectID == "" {
		t.Fatal("the VPC phase has no project (E2E_VPC_PROJECT_ID): make e2e-vpc with E2E_VPC_PROJECT set")
	}
	out := s.inProject("")
	if !listed(s.vms(t, ""), vmID, vmIDOf) {
		t.Errorf("VM %s is not listed with projectid %s", vmID, s.ProjectID)
	}
	if listed(out.vms(t, ""), vmID, vmIDOf) {
		t.Errorf("VM %s of project %s is listed without projectid", vmID, s.ProjectID)
	}
	inside := s.census(t)
	for _, l := range append(outside, out.census(t)...) {
		if slices.Contains(inside, l) {
			t.Errorf("%s is both outside project %s and in it", l, s.ProjectID)
		}
	}
	netID := func(n *cloudstack.Network) string { return n.Id }
	projectNets, otherNets := s.networks(t), out.networks(t)
	if !listed(projectNets, s.VPCTierID, netID) || listed(otherNets, s.VPCTierID, netID) {
		t.Errorf("tier %s is not listed in project %s alone", s.VPCTierID, s.ProjectID)
	}
	if len(otherNets) == 0 {
		t.Error("no network is listed outside the project: the stock guest network should be")
	}
	for _, n := range otherNets {
		if listed(projectNets, n.Id, netID) {
			t.Errorf("network %s (%s) outside project %s is listed in it", n.Id, n.Name, s.ProjectID)
		}
	}
}

func vmIDOf(vm *cloudstack.VirtualMachine) string { return vm.Id }

// listed says a listing has an item with the given id.
func listed[T any](list []*T, id string, idOf func(*T) string) bool {
	for _, item := range list {
		if idOf(item) == id {
			return true
		}
	}
	return false
}
