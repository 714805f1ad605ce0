package cpi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

const (
	stemcellID = "5f1a0d3e-0b7c-4c41-9d0f-2a6a1b1c0001"
	vipIP      = "203.0.113.7"
)

// createVMCPI is mockedCPI for create_vm: a director and a current
// stemcell (settings travel as user data), expunge on.
func createVMCPI(t *testing.T) (apiv1.CPI, *cloudstackmock.MockAPI) {
	t.Helper()
	return mockedCPIIn(t, callContext(2), func(*config.Config) {})
}

// callContext is a request's context from director dir-1 for a stemcell
// of that api_version.
func callContext(stemcellAPI int) apiv1.CallContext {
	return apiv1.CloudPropsImpl{RawMessage: json.RawMessage(fmt.Sprintf(
		`{"director_uuid":"dir-1","vm":{"stemcell":{"api_version":%d}}}`, stemcellAPI))}
}

func vmProps(raw string) apiv1.VMCloudProps {
	return apiv1.CloudPropsImpl{RawMessage: json.RawMessage(raw)}
}

func networks(t *testing.T, raw string) apiv1.Networks {
	t.Helper()
	var n apiv1.Networks
	if err := json.Unmarshal([]byte(raw), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// manualNet is one manual network on CloudStack network net-a, static IP.
const manualNet = `{"private":{"type":"manual","ip":"10.0.0.5","netmask":"255.255.255.0","gateway":"10.0.0.1",
	"default":["dns","gateway"],"cloud_properties":{"name":"net-a"}}}`

const withVIP = `{"private":{"type":"manual","ip":"10.0.0.5","netmask":"255.255.255.0","gateway":"10.0.0.1",
	"default":["dns","gateway"],"cloud_properties":{"name":"net-a"}},"public":{"type":"vip","ip":"` + vipIP + `"}}`

var netA = cloudstack.Network{ID: "net-a-id", Name: "net-a", ZoneID: "zone-1", CIDR: "10.0.0.0/24", Gateway: "10.0.0.1"}

// expectResolve is what create_vm looks up before it creates anything, for
// compute_offering "small" and one network net-a.
func expectResolve(cloud *cloudstackmock.MockAPI) {
	cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1", Name: "z1"}}, nil)
	cloud.EXPECT().FindServiceOffering("small").Return(&cloudstack.ServiceOffering{ID: "off-small", Name: "small"}, nil)
	cloud.EXPECT().FindNetworks("zone-1", []string{"net-a"}).Return(map[string]cloudstack.Network{"net-a": netA}, nil)
}

// deployed records the spec create_vm deployed with, and answers as
// CloudStack does: the VM id, and the VM carrying the spec's display name.
type deployed struct {
	spec cloudstack.DeploySpec
}

func (d *deployed) vm() *cloudstack.VM {
	return &cloudstack.VM{ID: "vm-1", Name: d.spec.Name, DisplayName: d.spec.DisplayName, State: "Running",
		ZoneID: "zone-1", NICs: []cloudstack.NIC{{NetworkID: netA.ID, IP: "10.0.0.5"}}}
}

func (d *deployed) answer(id string, err error) func(cloudstack.DeploySpec) (string, *cloudstack.VM, error) {
	return func(s cloudstack.DeploySpec) (string, *cloudstack.VM, error) {
		d.spec = s
		if err != nil {
			return id, nil, err
		}
		return id, d.vm(), nil
	}
}

// taggedWith matches a deploy whose spec puts exactly these tags on the VM
// (their job runs beside the deploy's).
func taggedWith(want map[string]string) gomock.Matcher {
	return gomock.Cond(func(s cloudstack.DeploySpec) bool { return maps.Equal(s.Tags, want) })
}

// expectRemoval is removeVM of a VM create_vm deployed and that still
// carries its incomplete mark: no lbs to leave, then the destroy.
func expectRemoval(cloud *cloudstackmock.MockAPI, destroyErr error) {
	cloud.EXPECT().VMLBRules("vm-1").Return(nil, nil)
	cloud.EXPECT().LBRulesCreatedFor(gomock.Any()).Return(nil, nil)
	cloud.EXPECT().VMVolumes("vm-1").Return([]cloudstack.Volume{{ID: "root-1", Name: "ROOT-1", Type: "ROOT"}}, nil)
	cloud.EXPECT().DestroyVM("vm-1", true, nil).Return(destroyErr)
}

func createVM(c apiv1.CPI, props string, nets apiv1.Networks) (apiv1.VMCID, error) {
	return c.CreateVM(apiv1.NewAgentID("agent-1"), apiv1.NewStemcellCID(stemcellID), vmProps(props), nets, nil,
		apiv1.NewVMEnv(nil))
}

// create_vm deploys with the resolved ids, the incomplete mark as display
// name and the tags that outlive it, and only then gives it its host name as
// display name, which makes it complete.
func TestCreateVMDeploysMarkedThenCompletes(t *testing.T) {
	c, cloud := createVMCPI(t)
	expectResolve(cloud)
	d := &deployed{}
	gomock.InOrder(
		cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil),
		cloud.EXPECT().DeployVM(taggedWith(map[string]string{marks.DirectorTag: "dir-1", marks.AgentTag: "agent-1"})).DoAndReturn(d.answer("vm-1", nil)),
		cloud.EXPECT().SetDisplayName("vm-1", gomock.Any()).DoAndReturn(func(_, name string) error {
			if name != d.spec.Name {
				t.Errorf("completed with display name %q, want the host name %q", name, d.spec.Name)
			}
			return nil
		}),
	)
	cid, err := createVM(c, `{"compute_offering":"small"}`, networks(t, manualNet))
	if err != nil {
		t.Fatalf("create_vm: %v", err)
	}
	if cid.AsString() != "vm-1" {
		t.Errorf("cid %s", cid.AsString())
	}
	s := d.spec
	if s.ZoneID != "zone-1" || s.ServiceOfferingID != "off-small" || s.TemplateID != stemcellID || s.UserData == "" {
		t.Errorf("deployed %+v", s)
	}
	if len(s.NICs) != 1 || s.NICs[0].NetworkID != netA.ID || s.NICs[0].IP != "10.0.0.5" || s.NICs[0].MAC == "" {
		t.Errorf("NICs %+v", s.NICs)
	}
	mark, ok := d.vm().IncompleteMark()
	if !ok || mark.Director != "dir-1" || mark.Agent != "agent-1" || mark.VIP != "" {
		t.Errorf("deployed with display name %q, not the incomplete mark", s.DisplayName)
	}
}

// Bad input is refused before anything is created (the strict mock fails
// on any create) and is never worth a retry.
func TestCreateVMRefusesBadInputBeforeCreating(t *testing.T) {
	for name, tc := range map[string]struct {
		props, nets string
		expect      func(*cloudstackmock.MockAPI)
		says        string
	}{
		"unknown key": {`{"compute_offerin":"small"}`, manualNet, func(*cloudstackmock.MockAPI) {}, "compute_offerin"},
		"no network": {`{"compute_offering":"small"}`, `{"public":{"type":"vip","ip":"` + vipIP + `"}}`,
			func(*cloudstackmock.MockAPI) {}, "at least one manual or dynamic network"},
		"customized offering": {`{"compute_offering":"small"}`, manualNet, func(cloud *cloudstackmock.MockAPI) {
			cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1"}}, nil)
			cloud.EXPECT().FindServiceOffering("small").Return(&cloudstack.ServiceOffering{ID: "off-c", Customized: true}, nil)
		}, "give cpu and ram instead"},
		"IP outside the network": {`{"compute_offering":"small"}`, strings.Replace(manualNet, "10.0.0.5", "10.9.0.5", 1),
			func(cloud *cloudstackmock.MockAPI) { expectResolve(cloud) }, "outside CloudStack network net-a"},
		"the gateway's IP": {`{"compute_offering":"small"}`, strings.Replace(manualNet, `"ip":"10.0.0.5"`, `"ip":"10.0.0.1"`, 1),
			func(cloud *cloudstackmock.MockAPI) { expectResolve(cloud) }, "is the gateway"},
		"two networks on one": {`{"compute_offering":"small"}`, `{"a":{"type":"dynamic","cloud_properties":{"name":"net-a"},
			"default":["gateway"]},"b":{"type":"dynamic","cloud_properties":{"name":"net-a"}}}`, func(cloud *cloudstackmock.MockAPI) {
			cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1"}}, nil)
			cloud.EXPECT().FindServiceOffering("small").Return(&cloudstack.ServiceOffering{ID: "off-small"}, nil)
			cloud.EXPECT().FindNetworks("zone-1", []string{"net-a", "net-a"}).
				Return(map[string]cloudstack.Network{"net-a": netA}, nil)
		}, "one NIC per network"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			tc.expect(cloud)
			_, err := createVM(c, tc.props, networks(t, tc.nets))
			if got := errorType(t, err); got != "Bosh::Clouds::VMCreationFailed" || retryable(t, err) {
				t.Fatalf("got %s (retry %v) %v, want a VMCreationFailed not to retry", got, retryable(t, err), err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
		})
	}
}

// A failed deploy removes the VM CloudStack made anyway; the director may
// retry exactly when CloudStack's answer was a capacity refusal, a job
// time-out or lost on the way, and the cleanup left nothing.
func TestCreateVMCleansUpAFailedDeploy(t *testing.T) {
	for name, tc := range map[string]struct {
		id    string // the id DeployVM gives back ("" when the answer was lost)
		err   error
		retry bool
	}{
		"capacity": {"vm-1", &cloudstack.APIError{Command: "deployVirtualMachine", ErrorCode: 533, CSErrorCode: 4250,
			JobID: "job-1", Text: "Unable to create a deployment for VM"}, true},
		"job time-out": {"vm-1", &cloudstack.JobTimeoutError{Command: "deployVirtualMachine", JobID: "job-1"}, true},
		"restart": {"vm-1", &cloudstack.APIError{Command: "deployVirtualMachine", ErrorCode: 530, JobID: "job-1",
			Interrupted: true, Text: "the job failed without a result"}, true},
		"lost answer":    {"", &cloudstack.UnreachableError{Endpoint: "cs", Err: errors.New("connection reset")}, true},
		"other job fail": {"vm-1", &cloudstack.APIError{Command: "deployVirtualMachine", ErrorCode: 530, Text: "boom"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			expectResolve(cloud)
			d := &deployed{}
			cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
			cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer(tc.id, tc.err))
			// The VM is looked up afresh: by id, or by its host name when
			// the deploy's answer was lost.
			cloud.EXPECT().FindVM(gomock.Any()).DoAndReturn(func(ref string) (*cloudstack.VM, error) {
				if want := firstNonEmpty(tc.id, d.spec.Name); ref != want {
					t.Errorf("looked up %q, want %q", ref, want)
				}
				return d.vm(), nil
			})
			expectRemoval(cloud, nil)
			_, err := createVM(c, `{"compute_offering":"small"}`, networks(t, manualNet))
			if got := errorType(t, err); got != "Bosh::Clouds::VMCreationFailed" || retryable(t, err) != tc.retry {
				t.Fatalf("got %s (retry %v) %v, want VMCreationFailed with retry %v", got, retryable(t, err), err, tc.retry)
			}
			if !strings.Contains(err.Error(), "removed what this create_vm had made: VM vm-1") {
				t.Errorf("error %q does not say the VM was removed", err)
			}
		})
	}
}

// A VM this create_vm deployed that is gone when it fails was removed by
// another create_vm for the agent, which took over: the error says so and
// names the other's VM when CloudStack has one, and is never worth a retry
// (a retry would remove the other's VM in turn), whatever the failure was.
func TestCreateVMTakenOverSaysSo(t *testing.T) {
	tagFailed := &cloudstack.APIError{Command: "createTags", ErrorCode: 431, JobID: "job-2", Text: "Unable to find resource"}
	lost := &cloudstack.UnreachableError{Endpoint: "cs", Err: errors.New("connection reset")}
	other := &cloudstack.VM{ID: "vm-2", Name: "vm-two", State: "Running"}
	for name, tc := range map[string]struct {
		cause  error
		others []*cloudstack.VM
		lookup error
		says   string
	}{
		"the other's VM":  {tagFailed, []*cloudstack.VM{other}, nil, "another create_vm for agent agent-1 took over: it removed VM vm-1 ("},
		"an answer lost":  {lost, []*cloudstack.VM{other}, nil, "and VM vm-2 (vm-two) is the other's"},
		"no other VM":     {tagFailed, nil, nil, "was removed while it ran: another create_vm for agent agent-1"},
		"lookup fails":    {tagFailed, nil, errors.New("list refused"), "looking for its VM failed: list refused"},
		"only gone peers": {tagFailed, []*cloudstack.VM{{ID: "vm-1", State: "Expunging"}}, nil, "was removed while it ran"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			expectResolve(cloud)
			d := &deployed{}
			cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
			cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer("vm-1", tc.cause))
			cloud.EXPECT().FindVM("vm-1").Return(nil, nil)
			cloud.EXPECT().AgentVMs("dir-1", "agent-1").Return(tc.others, tc.lookup)
			_, err := createVM(c, `{"compute_offering":"small"}`, networks(t, manualNet))
			if got := errorType(t, err); got != "Bosh::Clouds::VMCreationFailed" || retryable(t, err) {
				t.Fatalf("got %s (retry %v) %v, want a VMCreationFailed not to retry", got, retryable(t, err), err)
			}
			if !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), tc.cause.Error()) {
				t.Errorf("error %q does not say %q and the failure", err, tc.says)
			}
		})
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// A lost deploy answer after which CloudStack has no VM leaves nothing,
// so the director may retry; a cleanup that fails forbids the retry and
// says what is left.
func TestCreateVMCleanupOutcomes(t *testing.T) {
	lost := &cloudstack.UnreachableError{Endpoint: "cs", Err: errors.New("connection reset")}
	t.Run("nothing made", func(t *testing.T) {
		c, cloud := createVMCPI(t)
		expectResolve(cloud)
		cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
		cloud.EXPECT().DeployVM(gomock.Any()).Return("", nil, lost)
		cloud.EXPECT().FindVM(gomock.Any()).Return(nil, nil)
		_, err := createVM(c, `{"compute_offering":"small"}`, networks(t, manualNet))
		if !retryable(t, err) || strings.Contains(err.Error(), "removed") {
			t.Fatalf("got %v (retry %v), want a retryable failure that removed nothing", err, retryable(t, err))
		}
	})
	t.Run("cleanup fails", func(t *testing.T) {
		c, cloud := createVMCPI(t)
		expectResolve(cloud)
		d := &deployed{}
		cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
		cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer("vm-1", &cloudstack.APIError{
			Command: "deployVirtualMachine", ErrorCode: 533, Text: "Insufficient capacity"}))
		cloud.EXPECT().FindVM("vm-1").DoAndReturn(func(string) (*cloudstack.VM, error) { return d.vm(), nil })
		expectRemoval(cloud, errors.New("destroy refused"))
		_, err := createVM(c, `{"compute_offering":"small"}`, networks(t, manualNet))
		if retryable(t, err) || !strings.Contains(err.Error(), "cleanup left things behind") ||
			!strings.Contains(err.Error(), "destroy refused") {
			t.Fatalf("got %v (retry %v), want no retry and what the cleanup left", err, retryable(t, err))
		}
	})
}

// When CloudStack cannot allocate a static IP, the error names who holds
// it, and the director must not retry: a retry will not free the address.
func TestCreateVMNamesWhoHoldsTheStaticIP(t *testing.T) {
	ipTaken := &cloudstack.APIError{Command: "deployVirtualMachine", ErrorCode: 533,
		Text: "Unable to acquire Guest IP address for network Ntwk[204|Guest|8]"}
	for name, tc := range map[string]struct {
		holder *cloudstack.VM
		says   string
	}{
		"destroyed, not expunged": {&cloudstack.VM{ID: "old-1", Name: "vm-old", State: "Destroyed"}, "not yet expunged"},
		"running":                 {&cloudstack.VM{ID: "old-1", Name: "vm-old", State: "Running"}, "in use by VM old-1"},
		"none this account sees":  {nil, "no VM this account can list holds it"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			expectResolve(cloud)
			cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
			cloud.EXPECT().DeployVM(gomock.Any()).Return("", nil, ipTaken)
			cloud.EXPECT().VMWithIP(netA.ID, "10.0.0.5").Return(tc.holder, nil)
			cloud.EXPECT().FindVM(gomock.Any()).Return(nil, nil)
			_, err := createVM(c, `{"compute_offering":"small"}`, networks(t, manualNet))
			if retryable(t, err) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v (retry %v), want no retry and %q", err, retryable(t, err), tc.says)
			}
		})
	}
}

// converge removes this director's incomplete VM of the same agent (the
// director's retry) or holding the requested address before deploying;
// another director's, or a complete VM, is never touched.
func TestCreateVMConvergesEarlierAttempts(t *testing.T) {
	mark := func(director, vip, agent string) string {
		return marks.NewVM(director, vip, agent).DisplayName()
	}
	for name, tc := range map[string]struct {
		vm     *cloudstack.VM
		remove bool
	}{
		"same agent": {&cloudstack.VM{ID: "old-1", DisplayName: mark("dir-1", "", "agent-1"), State: "Running"}, true},
		"same static IP": {&cloudstack.VM{ID: "old-1", DisplayName: mark("dir-1", "", "agent-0"), State: "Running",
			NICs: []cloudstack.NIC{{NetworkID: netA.ID, IP: "10.0.0.5"}}}, true},
		"another address": {&cloudstack.VM{ID: "old-1", DisplayName: mark("dir-1", "", "agent-0"), State: "Running",
			NICs: []cloudstack.NIC{{NetworkID: netA.ID, IP: "10.0.0.6"}}}, false},
		"another director": {&cloudstack.VM{ID: "old-1", DisplayName: mark("dir-2", "", "agent-1"), State: "Running"}, false},
		"complete":         {&cloudstack.VM{ID: "old-1", DisplayName: "vm-old", State: "Running"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			expectResolve(cloud)
			d := &deployed{}
			var steps []any
			steps = append(steps, cloud.EXPECT().IncompleteVMs("dir-1").Return([]*cloudstack.VM{tc.vm}, nil))
			if tc.remove {
				steps = append(steps,
					cloud.EXPECT().VMLBRules("old-1").Return(nil, nil),
					cloud.EXPECT().LBRulesCreatedFor(gomock.Any()).Return(nil, nil),
					cloud.EXPECT().VMVolumes("old-1").Return(nil, nil),
					cloud.EXPECT().DestroyVM("old-1", true, nil).Return(nil))
			}
			steps = append(steps, cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer("vm-1", nil)))
			gomock.InOrder(steps...)
			cloud.EXPECT().SetDisplayName("vm-1", gomock.Any()).Return(nil)
			if _, err := createVM(c, `{"compute_offering":"small"}`, networks(t, manualNet)); err != nil {
				t.Fatalf("create_vm: %v", err)
			}
		})
	}
}

// A leftover that cannot be removed stops create_vm before it deploys,
// naming the leftover.
func TestCreateVMStopsWhenALeftoverStays(t *testing.T) {
	c, cloud := createVMCPI(t)
	expectResolve(cloud)
	old := &cloudstack.VM{ID: "old-1", Name: "vm-old", DisplayName: marks.NewVM("dir-1", "", "agent-1").DisplayName(),
		State: "Running"}
	cloud.EXPECT().IncompleteVMs("dir-1").Return([]*cloudstack.VM{old}, nil)
	cloud.EXPECT().VMLBRules("old-1").Return(nil, nil)
	cloud.EXPECT().LBRulesCreatedFor(gomock.Any()).Return(nil, nil)
	cloud.EXPECT().VMVolumes("old-1").Return(nil, nil)
	cloud.EXPECT().DestroyVM("old-1", true, nil).Return(errors.New("destroy refused"))
	_, err := createVM(c, `{"compute_offering":"small"}`, networks(t, manualNet))
	if err == nil || !strings.Contains(err.Error(), "left incomplete by an earlier create_vm for agent agent-1") {
		t.Fatalf("create_vm: %v, want the leftover named", err)
	}
}

// vipCases are the two vips create_vm meets: a free address, which it
// acquires, and one the operator allocated, which it only static-NATs.
var vipCases = map[string]struct {
	found   *cloudstack.PublicIP // what FindPublicIP answers before the deploy
	acquire bool
}{
	"free":                      {nil, true},
	"allocated by the operator": {&cloudstack.PublicIP{ID: "ip-op", IP: vipIP}, false},
}

// The vip is checked before anything is created and acquired only after
// the deploy (so that it never becomes the network's source NAT address),
// then static-NATed to the VM; an address the operator allocated is only
// static-NATed.
func TestCreateVMAcquiresTheVIPAfterTheDeploy(t *testing.T) {
	for name, tc := range vipCases {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			expectResolve(cloud)
			d := &deployed{}
			steps := []any{
				cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil),
				cloud.EXPECT().FindPublicIP("zone-1", vipIP).Return(tc.found, nil),
				cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer("vm-1", nil)),
			}
			ipID := "ip-op"
			if tc.acquire {
				ipID = "ip-new"
				steps = append(steps, cloud.EXPECT().AcquirePublicIP(netA, vipIP).
					Return(&cloudstack.PublicIP{ID: ipID, IP: vipIP}, nil))
			}
			steps = append(steps,
				cloud.EXPECT().EnableStaticNAT(ipID, "vm-1", netA.ID).Return(nil),
				cloud.EXPECT().SetDisplayName("vm-1", gomock.Any()).Return(nil))
			gomock.InOrder(steps...)
			if _, err := createVM(c, `{"compute_offering":"small"}`, networks(t, withVIP)); err != nil {
				t.Fatalf("create_vm: %v", err)
			}
			// The mark names the vip only when this call acquires it.
			mark, _ := d.vm().IncompleteMark()
			if want := map[bool]string{true: vipIP}[tc.acquire]; mark.VIP != want {
				t.Errorf("mark's vip %q, want %q", mark.VIP, want)
			}
		})
	}
}

// A vip that is another VM's or its network's source NAT address is
// refused before anything is created.
func TestCreateVMRefusesAVIPItCannotStaticNAT(t *testing.T) {
	for name, tc := range map[string]struct {
		addr *cloudstack.PublicIP
		says string
	}{
		"another VM's": {&cloudstack.PublicIP{ID: "ip-1", IP: vipIP, StaticNAT: true, VMID: "vm-9"},
			"already static NAT to VM vm-9"},
		"source NAT": {&cloudstack.PublicIP{ID: "ip-1", IP: vipIP, SourceNAT: true}, "source NAT address"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			expectResolve(cloud)
			cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
			cloud.EXPECT().FindPublicIP("zone-1", vipIP).Return(tc.addr, nil)
			_, err := createVM(c, `{"compute_offering":"small"}`, networks(t, withVIP))
			if got := errorType(t, err); got != "Bosh::Clouds::VMCreationFailed" || retryable(t, err) ||
				!strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %s (retry %v) %v, want a VMCreationFailed saying %q", got, retryable(t, err), err, tc.says)
			}
		})
	}
}

// When static NAT fails, the cleanup releases the address this call
// acquired with the VM, and never one the operator allocated.
func TestCreateVMReleasesOnlyTheVIPItAcquired(t *testing.T) {
	natFailed := &cloudstack.APIError{Command: "enableStaticNat", ErrorCode: 530, Text: "failed"}
	for name, tc := range vipCases {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			expectResolve(cloud)
			d := &deployed{}
			cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
			cloud.EXPECT().FindPublicIP("zone-1", vipIP).Return(tc.found, nil)
			cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer("vm-1", nil))
			acquired := &cloudstack.PublicIP{ID: "ip-new", IP: vipIP, NetworkID: netA.ID,
				Tags: map[string]string{marks.AcquiredTag: "true"}}
			ipID := "ip-op"
			if tc.acquire {
				ipID = "ip-new"
				cloud.EXPECT().AcquirePublicIP(netA, vipIP).Return(acquired, nil)
			}
			cloud.EXPECT().EnableStaticNAT(ipID, "vm-1", netA.ID).Return(natFailed)
			cloud.EXPECT().FindVM("vm-1").DoAndReturn(func(string) (*cloudstack.VM, error) { return d.vm(), nil })
			if tc.acquire {
				// The VM's mark names the vip it meant to acquire.
				cloud.EXPECT().FindPublicIP("zone-1", vipIP).Return(acquired, nil)
				cloud.EXPECT().ReleasePublicIP("ip-new").Return(nil)
			}
			expectRemoval(cloud, nil)
			_, err := createVM(c, `{"compute_offering":"small"}`, networks(t, withVIP))
			if got := errorType(t, err); got != "Bosh::Clouds::VMCreationFailed" || !strings.Contains(err.Error(), "removed") {
				t.Fatalf("got %s %v, want a VMCreationFailed that removed the VM", got, err)
			}
		})
	}
}

// cpu and ram run on a customized offering (a constrained one first), with
// only what it leaves open sent; an ephemeral disk with no offering goes
// on the customized disk offering, in whole GiB; an earlier CPI's
// stemcell CID names its template; the affinity group is found or made;
// and create_vm (v2) answers a dynamic network with the address
// CloudStack gave its NIC.
func TestCreateVMV2ResolvesSizesDisksAndGroups(t *testing.T) {
	c, cloud := createVMCPI(t)
	cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1", Name: "z1"}}, nil)
	cloud.EXPECT().FindTemplateByName("cpitemplate-1", "zone-1").Return(&cloudstack.Template{ID: stemcellID}, nil)
	cloud.EXPECT().ServiceOfferings().Return([]cloudstack.ServiceOffering{
		{ID: "off-small", Name: "small", CPUs: 1, MemoryMB: 512, CPUsFixed: true, MemoryFixed: true, SpeedFixed: true},
		{ID: "off-custom", Name: "custom", Customized: true, MinCPUs: 1, MaxCPUs: 8, MinMemoryMB: 32, MaxMemoryMB: 8192},
		{ID: "off-constrained", Name: "constrained", Customized: true, Constrained: true, SpeedFixed: true,
			CPUSpeed: 1000, MinCPUs: 1, MaxCPUs: 4, MinMemoryMB: 512, MaxMemoryMB: 4096},
	}, nil)
	cloud.EXPECT().FindNetworks("zone-1", []string{"net-a"}).Return(map[string]cloudstack.Network{"net-a": netA}, nil)
	cloud.EXPECT().CustomDiskOffering().Return(&cloudstack.DiskOffering{ID: "off-disk", Name: "Custom", Customized: true}, nil)
	cloud.EXPECT().FindOrCreateAffinityGroup("ag", "").Return("ag-1", nil)
	cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
	var spec cloudstack.DeploySpec
	cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(func(s cloudstack.DeploySpec) (string, *cloudstack.VM, error) {
		spec = s
		return "vm-1", &cloudstack.VM{ID: "vm-1", Name: s.Name, State: "Running", NICs: []cloudstack.NIC{
			{NetworkID: netA.ID, IP: "10.0.0.42", Netmask: "255.255.255.0", Gateway: "10.0.0.1", MAC: s.NICs[0].MAC}}}, nil
	})
	cloud.EXPECT().SetDisplayName("vm-1", gomock.Any()).Return(nil)
	props := `{"cpu":2,"ram":2048,"cpu_speed":1000,"ephemeral_disk_size":4097,"root_disk_size":10240,"affinity_group":"ag"}`
	nets := networks(t, `{"private":{"type":"dynamic","default":["dns","gateway"],"cloud_properties":{"name":"net-a"}}}`)
	cid, got, err := c.CreateVMV2(apiv1.NewAgentID("agent-1"), apiv1.NewStemcellCID("cpitemplate-1"), vmProps(props),
		nets, nil, apiv1.NewVMEnv(nil))
	if err != nil || cid.AsString() != "vm-1" {
		t.Fatalf("create_vm: %v %v", cid, err)
	}
	if spec.TemplateID != stemcellID || spec.ServiceOfferingID != "off-constrained" || spec.CPUs != 2 ||
		spec.MemoryMB != 2048 || spec.CPUSpeed != 0 || spec.RootDiskGB != 10 {
		t.Errorf("deployed %+v", spec)
	}
	if spec.DataDiskOfferingID != "off-disk" || spec.DataDiskGB != 5 || len(spec.AffinityGroupIDs) != 1 ||
		spec.AffinityGroupIDs[0] != "ag-1" || spec.NICs[0].IP != "" {
		t.Errorf("deployed %+v", spec)
	}
	if n := got["private"]; n == nil || n.IP() != "10.0.0.42" || n.Gateway() != "10.0.0.1" {
		t.Errorf("answered networks %+v", got)
	}
}

// cpu and ram no customized offering takes are refused, naming every
// customized offering's limits.
func TestCreateVMRefusesSizesNoOfferingTakes(t *testing.T) {
	c, cloud := createVMCPI(t)
	cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1", Name: "z1"}}, nil)
	cloud.EXPECT().ServiceOfferings().Return([]cloudstack.ServiceOffering{
		{ID: "off-custom", Name: "custom", Customized: true, MinCPUs: 1, MaxCPUs: 2, MinMemoryMB: 32, MaxMemoryMB: 1024},
	}, nil)
	_, err := createVM(c, `{"cpu":4,"ram":2048}`, networks(t, manualNet))
	if got := errorType(t, err); got != "Bosh::Clouds::VMCreationFailed" || retryable(t, err) ||
		!strings.Contains(err.Error(), `"custom" takes 1 to 2 CPUs`) {
		t.Fatalf("got %s %v", got, err)
	}
}

// An incomplete VM of an earlier attempt that meant to acquire the
// requested vip is removed first, with the address it acquired but never
// tagged: its mark's intent is what makes that address the CPI's.
func TestCreateVMConvergesAnAttemptHoldingTheVIP(t *testing.T) {
	c, cloud := createVMCPI(t)
	expectResolve(cloud)
	old := &cloudstack.VM{ID: "old-1", Name: "vm-old", ZoneID: "zone-1", State: "Running",
		DisplayName: marks.NewVM("dir-1", vipIP, "agent-0").DisplayName(),
		NICs:        []cloudstack.NIC{{NetworkID: netA.ID, IP: "10.0.0.9"}}}
	untagged := &cloudstack.PublicIP{ID: "ip-old", IP: vipIP, NetworkID: netA.ID}
	d := &deployed{}
	gomock.InOrder(
		cloud.EXPECT().IncompleteVMs("dir-1").Return([]*cloudstack.VM{old}, nil),
		cloud.EXPECT().FindPublicIP("zone-1", vipIP).Return(untagged, nil),
		cloud.EXPECT().ReleasePublicIP("ip-old").Return(nil),
		cloud.EXPECT().VMLBRules("old-1").Return(nil, nil),
		cloud.EXPECT().LBRulesCreatedFor(gomock.Any()).Return(nil, nil),
		cloud.EXPECT().VMVolumes("old-1").Return(nil, nil),
		cloud.EXPECT().DestroyVM("old-1", true, nil).Return(nil),
		cloud.EXPECT().FindPublicIP("zone-1", vipIP).Return(nil, nil),
		cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer("vm-1", nil)),
		cloud.EXPECT().AcquirePublicIP(netA, vipIP).Return(&cloudstack.PublicIP{ID: "ip-new", IP: vipIP}, nil),
		cloud.EXPECT().EnableStaticNAT("ip-new", "vm-1", netA.ID).Return(nil),
		cloud.EXPECT().SetDisplayName("vm-1", gomock.Any()).Return(nil),
	)
	if _, err := createVM(c, `{"compute_offering":"small"}`, networks(t, withVIP)); err != nil {
		t.Fatalf("create_vm: %v", err)
	}
}

// With auto_anti_affinity a VM with no affinity_group goes into its
// director's group for its instance group, of the configured type.
func TestCreateVMAutoAntiAffinity(t *testing.T) {
	c, cloud := mockedCPIIn(t, callContext(2), func(cfg *config.Config) {
		cfg.CloudStack.AutoAntiAffinity = true
		cfg.CloudStack.AffinityGroupType = "host anti-affinity"
	})
	expectResolve(cloud)
	d := &deployed{}
	cloud.EXPECT().FindOrCreateAffinityGroup("dir-1-web", "host anti-affinity").Return("ag-1", nil)
	cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
	cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer("vm-1", nil))
	cloud.EXPECT().SetDisplayName("vm-1", gomock.Any()).Return(nil)
	env := apiv1.NewVMEnv(map[string]any{"bosh": map[string]any{"group": "web"}})
	_, err := c.CreateVM(apiv1.NewAgentID("agent-1"), apiv1.NewStemcellCID(stemcellID), vmProps(`{"compute_offering":"small"}`),
		networks(t, manualNet), nil, env)
	if err != nil || len(d.spec.AffinityGroupIDs) != 1 || d.spec.AffinityGroupIDs[0] != "ag-1" {
		t.Fatalf("create_vm: %v, affinity groups %v", err, d.spec.AffinityGroupIDs)
	}
}

// cpu and ram with compute_offering name the customized offering to run
// them on: a fixed offering is refused, and so are sizes outside its
// limits, before anything is created.
func TestCreateVMRefusesANamedOfferingThatCannotTakeTheSizes(t *testing.T) {
	for name, tc := range map[string]struct {
		offering cloudstack.ServiceOffering
		says     string
	}{
		"fixed": {cloudstack.ServiceOffering{ID: "off-s", Name: "small", CPUs: 1, MemoryMB: 512, CPUsFixed: true,
			MemoryFixed: true}, "is not customized, so cpu and ram cannot be set"},
		"too small": {cloudstack.ServiceOffering{ID: "off-c", Name: "custom", Customized: true, MinCPUs: 1, MaxCPUs: 2,
			MinMemoryMB: 32, MaxMemoryMB: 1024}, "the VM asks for 4 CPUs"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1", Name: "z1"}}, nil)
			cloud.EXPECT().FindServiceOffering("named").Return(&tc.offering, nil)
			_, err := createVM(c, `{"compute_offering":"named","cpu":4,"ram":2048}`, networks(t, manualNet))
			if got := errorType(t, err); got != "Bosh::Clouds::VMCreationFailed" || retryable(t, err) ||
				!strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %s %v, want %q", got, err, tc.says)
			}
		})
	}
}
