//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"
)

// TestVPCCreateEnv is the VPC phase (make e2e-vpc, make test-e2e-vpc):
// create-env of the test deployment with its VM on a VPC tier (the
// network's cloud_properties name the tier, as any network). The VM runs
// on the tier with the static IP, the tier is the VPC's with its custom
// network ACL list, the agent answers through that list's rule for its
// mbus port, and delete-env leaves the census as before.
func TestVPCCreateEnv(t *testing.T) {
	c := loadConfig(t)
	if c.VPCID == "" || c.VPCTierID == "" || c.VPC.CreateEnv == "" {
		t.Fatal("the VPC phase needs E2E_VPC_ID, E2E_VPC_TIER_ID and E2E_VPC_CREATE_ENV (make e2e-vpc, then make test-e2e-vpc)")
	}
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
	n, _, err := s.cs.Network.GetNetworkByID(s.VPCTierID)
	if err != nil {
		t.Fatalf("the tier %s: %v", s.VPCTierID, err)
	}
	if n.Name != s.Network || n.Vpcid != s.VPCID || n.Aclid == "" || n.Aclname == "default_allow" || n.Aclname == "default_deny" {
		t.Fatalf("network %s is not tier %s of VPC %s with a custom ACL list: %+v", s.VPCTierID, s.Network, s.VPCID, n)
	}
}
