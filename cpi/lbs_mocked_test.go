package cpi_test

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

const (
	lbIP    = "198.51.100.9"
	lbProps = `{"compute_offering":"small","lbs":[{"name":"web","algorithm":"roundrobin","public_port":80,` +
		`"private_port":8080,"public_ip":"` + lbIP + `"}]}`
)

var (
	lbAddr  = &cloudstack.PublicIP{ID: "ip-lb", IP: lbIP, NetworkID: netA.ID}
	lbMark  = marks.LB{Director: "dir-1", Agent: "agent-1"}
	webRule = cloudstack.LBRule{ID: "rule-web", Name: "web", PublicIPID: "ip-lb", PublicPort: 80, PrivatePort: 8080}
)

// expectLBDeploy is create_vm up to the deploy with lbs: the entry's
// address and its rules are looked up before anything is created, and the
// VM is tagged as one with lbs.
func expectLBDeploy(cloud *cloudstackmock.MockAPI, d *deployed, onIP []cloudstack.LBRule) {
	expectResolve(cloud)
	gomock.InOrder(
		cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil),
		cloud.EXPECT().FindPublicIP("zone-1", lbIP).Return(lbAddr, nil),
		cloud.EXPECT().LBRulesOn("ip-lb").Return(onIP, nil),
		cloud.EXPECT().DeployVM(taggedWith(map[string]string{
			marks.DirectorTag: "dir-1", marks.AgentTag: "agent-1", marks.LBTag: "true"})).DoAndReturn(d.answer("vm-1", nil)),
	)
}

// The VM joins the entry's rule when it exists, and one created for it,
// marked as this create_vm's, when it does not; after a lost answer of the
// create, the rule of that name on the address is the one.
func TestCreateVMJoinsOrCreatesTheLBRule(t *testing.T) {
	for name, tc := range map[string]struct {
		onIP      []cloudstack.LBRule
		createErr error
	}{
		"existing":    {[]cloudstack.LBRule{webRule}, nil},
		"missing":     {nil, nil},
		"lost answer": {nil, &cloudstack.UnreachableError{Endpoint: "cs", Err: errors.New("connection reset")}},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			d := &deployed{}
			expectLBDeploy(cloud, d, tc.onIP)
			if tc.onIP == nil {
				want := cloudstack.LBSpec{Name: "web", Algorithm: "roundrobin", PublicPort: 80, PrivatePort: 8080,
					PublicIPID: "ip-lb", Mark: lbMark}
				if tc.createErr == nil {
					cloud.EXPECT().CreateLBRule(want).Return(&webRule, nil)
				} else {
					cloud.EXPECT().CreateLBRule(want).Return(nil, tc.createErr)
					cloud.EXPECT().LBRulesOn("ip-lb").Return([]cloudstack.LBRule{webRule}, nil)
				}
			}
			cloud.EXPECT().AssignToLBRule("rule-web", "vm-1").Return(nil)
			cloud.EXPECT().SetDisplayName("vm-1", gomock.Any()).Return(nil)
			if _, err := createVM(c, lbProps, networks(t, manualNet)); err != nil {
				t.Fatalf("create_vm: %v", err)
			}
		})
	}
}

// An entry CloudStack would refuse once the VM exists is refused before
// anything is created: an address not allocated, or a rule of the entry's
// name with other ports.
func TestCreateVMRefusesAnLBEntryBeforeCreating(t *testing.T) {
	for name, tc := range map[string]struct {
		addr *cloudstack.PublicIP
		says string
	}{
		"not allocated": {nil, "is not an allocated public IP address"},
		"other ports":   {lbAddr, "with public port 80 and private port 9090"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			expectResolve(cloud)
			cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
			cloud.EXPECT().FindPublicIP("zone-1", lbIP).Return(tc.addr, nil)
			if tc.addr != nil {
				other := webRule
				other.PrivatePort = 9090
				cloud.EXPECT().LBRulesOn("ip-lb").Return([]cloudstack.LBRule{other}, nil)
			}
			_, err := createVM(c, lbProps, networks(t, manualNet))
			if got := errorType(t, err); got != "Bosh::Clouds::VMCreationFailed" || retryable(t, err) ||
				!strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %s (retry %v) %v, want a VMCreationFailed saying %q", got, retryable(t, err), err, tc.says)
			}
		})
	}
}

// When the VM cannot join the rule this create_vm created, the cleanup
// removes the VM and deletes that rule, which no VM is behind.
func TestCreateVMCleanupDeletesTheLBRuleItCreated(t *testing.T) {
	c, cloud := createVMCPI(t)
	d := &deployed{}
	expectLBDeploy(cloud, d, nil)
	created := webRule
	created.Description = lbMark.Description()
	cloud.EXPECT().CreateLBRule(gomock.Any()).Return(&created, nil)
	cloud.EXPECT().AssignToLBRule("rule-web", "vm-1").Return(errors.New("assign refused"))
	cloud.EXPECT().FindVM("vm-1").DoAndReturn(func(string) (*cloudstack.VM, error) { return d.vm(), nil })
	cloud.EXPECT().VMLBRules("vm-1").Return(nil, nil)
	cloud.EXPECT().LBRulesCreatedFor(lbMark).Return([]cloudstack.LBRule{created}, nil)
	cloud.EXPECT().LBRuleVMs("rule-web").Return(nil, nil)
	cloud.EXPECT().DeleteLBRule("rule-web").Return(nil)
	cloud.EXPECT().VMVolumes("vm-1").Return(nil, nil)
	cloud.EXPECT().DestroyVM("vm-1", true, nil).Return(nil)
	_, err := createVM(c, lbProps, networks(t, manualNet))
	if got := errorType(t, err); got != "Bosh::Clouds::VMCreationFailed" || !strings.Contains(err.Error(), "assign refused") {
		t.Fatalf("got %s %v", got, err)
	}
}
