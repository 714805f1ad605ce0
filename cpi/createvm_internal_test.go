package cpi

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

func TestExplainAddressNamesTheHolder(t *testing.T) {
	isolated := &cloudstack.APIError{Command: "deployVirtualMachine", ErrorCode: 533, CSErrorCode: 9999,
		Text: "Unable to acquire Guest IP address for network Ntwk[204|Guest|8]"}
	// What a Shared network answers (IpAddressManagerImpl.fetchNewPublicIp).
	shared := &cloudstack.APIError{Command: "deployVirtualMachine", ErrorCode: 533, CSErrorCode: 9999,
		Text: "Insufficient address capacity"}
	for _, taken := range []*cloudstack.APIError{isolated, shared} {
		explainAddressCase(t, taken)
	}
}

func explainAddressCase(t *testing.T, taken *cloudstack.APIError) {
	cloud := cloudstackmock.NewMockAPI(gomock.NewController(t))
	for ip, tc := range map[string]struct {
		holder *cloudstack.VM
		want   string
	}{
		"10.1.1.5": {&cloudstack.VM{ID: "vm-old", Name: "cpivm-old", State: "Destroyed"},
			"static IP 10.1.1.5 on CloudStack network guest is still held by VM vm-old (cpivm-old), destroyed but not yet expunged"},
		"10.1.1.6": {&cloudstack.VM{ID: "vm-live", Name: "cpivm-live", State: "Running"},
			"static IP 10.1.1.6 on CloudStack network guest is in use by VM vm-live (cpivm-live, Running)"},
		"10.1.1.7": {nil, "CloudStack could not allocate static IP 10.1.1.7 and no VM this account can list holds it: " +
			"perhaps a VM destroyed but not yet expunged does"},
	} {
		cloud.EXPECT().VMWithIP("n1", ip).Return(tc.holder, nil)
		d := &deployment{vms: vms{cloud: cloud}, plan: deployPlan{vmWant: vmWant{networks: networkPlan{nics: []nicPlan{{name: "default",
			net: apiv1.NewNetwork(apiv1.NetworkOpts{Type: "manual", IP: ip}), network: cloudstack.Network{ID: "n1", Name: "guest"}}}}}}}
		err := d.explainAddress(taken)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !cloudstack.IsGuestIPUnavailable(err) {
			t.Errorf("%s (%s): %v; want %q and the CloudStack error kept", ip, taken.Text, err, tc.want)
		}
		if tc.holder == nil || tc.holder.AwaitingExpunge() {
			explainedInTroubleshooting(t, err, tc.want)
		}
	}
	// Another capacity error is no address taken: nothing is looked up
	// (the strict mock fails on VMWithIP).
	other := &cloudstack.APIError{ErrorCode: 533, Text: "Unable to create a deployment for VM instance"}
	if err := (&deployment{vms: vms{cloud: cloud}}).explainAddress(other); err != other { //nolint:errorlint // the very error must come back, not one wrapping it
		t.Errorf("another capacity error was changed: %v", err)
	}
}

// explainedInTroubleshooting: an address error that leaves the operator a
// choice names the troubleshooting table, whose row quotes the error.
func explainedInTroubleshooting(t *testing.T, err error, want string) {
	t.Helper()
	doc, readErr := os.ReadFile("../docs/operators/troubleshooting.md")
	if readErr != nil {
		t.Fatal(readErr)
	}
	symptom := strings.NewReplacer("10.1.1.5", "…", "10.1.1.7", "…", "guest", "…", "vm-old (cpivm-old)", "… (…)").Replace(want)
	symptom, _, _ = strings.Cut(symptom, ": perhaps")
	if !strings.Contains(err.Error(), "docs/operators/troubleshooting.md, VMs and disks") ||
		!strings.Contains(string(doc), symptom) {
		t.Errorf("%v: want it to name the troubleshooting table, with a row quoting %q", err, symptom)
	}
}

// TestTakenAddressIsNotRetried: both gurus' answers to a taken address are
// capacity codes, but a retry moments later would meet the same holder.
func TestTakenAddressIsNotRetried(t *testing.T) {
	for text, retry := range map[string]bool{
		"Unable to acquire Guest IP address for network Ntwk[204|Guest|8]": false,
		"Insufficient address capacity":                                    false,
		"Unable to create a deployment for VM instance":                    true,
	} {
		var typed *Error
		err := vmCreationFailed(&cloudstack.APIError{ErrorCode: 533, CSErrorCode: 9999, Text: text})
		if !errors.As(err, &typed) || typed.retry != retry {
			t.Errorf("%q: %#v, want ok_to_retry %v", text, err, retry)
		}
	}
}

// TestSupersedesOnlyThisDirectorsEarlierAttempts: an incomplete VM of this
// director is an earlier attempt when it has the agent id, a requested
// static IP on the same network, or the vip (intended or static NAT); a
// complete VM or another director's never is.
func TestSupersedesOnlyThisDirectorsEarlierAttempts(t *testing.T) {
	v := &deployment{vms: vms{callDeps: callDeps{ctx: CallContext{DirectorUUID: "dir-1"}}},
		plan: deployPlan{vmWant: vmWant{agentID: "agent-new",
			networks: networkPlan{vip: apiv1.NewNetwork(apiv1.NetworkOpts{Type: "vip", IP: "192.168.2.5"})}}},
		spec: cloudstack.DeploySpec{NICs: []cloudstack.NICRequest{{NetworkID: "n1", IP: "10.1.1.5"}, {NetworkID: "n2"}}}}
	mark := func(director, vip, agent string) string {
		return marks.NewVM(director, vip, agent).DisplayName()
	}
	nic := func(network, ip string) []cloudstack.NIC { return []cloudstack.NIC{{NetworkID: network, IP: ip}} }
	for _, c := range []struct {
		what string
		vm   cloudstack.VM
		want bool
	}{
		{"same agent id", cloudstack.VM{DisplayName: mark("dir-1", "", "agent-new")}, true},
		{"same static IP", cloudstack.VM{DisplayName: mark("dir-1", "", "agent-old"), NICs: nic("n1", "10.1.1.5")}, true},
		{"vip intended", cloudstack.VM{DisplayName: mark("dir-1", "192.168.2.5", "agent-old"), NICs: nic("n1", "10.1.1.9")}, true},
		{"vip static NAT", cloudstack.VM{DisplayName: mark("dir-1", "", "agent-old"), PublicIP: "192.168.2.5"}, true},
		{"other addresses", cloudstack.VM{DisplayName: mark("dir-1", "192.168.2.6", "agent-old"), NICs: nic("n1", "10.1.1.9")}, false},
		{"same IP on another network", cloudstack.VM{DisplayName: mark("dir-1", "", "agent-old"), NICs: nic("n3", "10.1.1.5")}, false},
		{"a dynamic NIC's address", cloudstack.VM{DisplayName: mark("dir-1", "", "agent-old"), NICs: nic("n2", "")}, false},
		{"another director", cloudstack.VM{DisplayName: mark("dir-2", "192.168.2.5", "agent-new"), NICs: nic("n1", "10.1.1.5")}, false},
		{"complete", cloudstack.VM{DisplayName: "web_0", NICs: nic("n1", "10.1.1.5"), PublicIP: "192.168.2.5"}, false},
	} {
		if got := v.supersedes(&c.vm); got != c.want {
			t.Errorf("%s: supersedes = %v, want %v", c.what, got, c.want)
		}
	}
}

func TestNetworkCloudPropertiesRefuseUnknownKeys(t *testing.T) {
	manual := func(cp string) apiv1.Networks {
		var nets apiv1.Networks
		raw := `{"default":{"type":"manual","ip":"10.1.1.5","netmask":"255.255.255.0","gateway":"10.1.1.1",` +
			`"cloud_properties":` + cp + `}}`
		if err := json.Unmarshal([]byte(raw), &nets); err != nil {
			t.Fatal(err)
		}
		return nets
	}
	for cp, want := range map[string]string{
		`{"name":"guest","undiscoverable":true}`:   "",
		`{"name":"guest","undiscoverable":"true"}`: "",
		`{"name":"guest","subnet":"x"}`:            `network "default" cloud_properties: unknown field "subnet"`,
		`{}`:                                       `network "default": cloud_properties.name must name a CloudStack network`,
	} {
		_, _, err := planNetworks(manual(cp))
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", cp, err, want)
		}
	}
	var vip apiv1.Networks
	_ = json.Unmarshal([]byte(`{"public":{"type":"vip","ip":"192.168.2.5","cloud_properties":{"nmae":"x"}}}`), &vip)                             //nolint:misspell // the misspelt key is the test's input
	if _, _, err := planNetworks(vip); err == nil || !strings.Contains(err.Error(), `network "public" cloud_properties: unknown field "nmae"`) { //nolint:misspell // the misspelt key the test fed
		t.Errorf("a vip network's unknown key: %v", err)
	}
}

// A manual network's ip, netmask and gateway are IPv4 addresses and a
// netmask, or create_vm refuses it naming the network and the field (issue
// 24.7): CloudStack takes the ip as given and the agent the rest.
func TestManualNetworkAddressesAreChecked(t *testing.T) {
	manual := func(ip, netmask, gateway string) apiv1.Networks {
		var nets apiv1.Networks
		raw := fmt.Sprintf(`{"default":{"type":"manual","ip":%q,"netmask":%q,"gateway":%q,"cloud_properties":{"name":"guest"}}}`,
			ip, netmask, gateway)
		if err := json.Unmarshal([]byte(raw), &nets); err != nil {
			t.Fatal(err)
		}
		return nets
	}
	for _, c := range []struct{ ip, netmask, gateway, want string }{
		{"10.1.1.5", "255.255.255.0", "10.1.1.1", ""},
		{"10.1.1.5", "255.255.240.0", "", ""},
		{"10.1.1.5", "", "10.1.1.1", ""},
		{"", "255.255.255.0", "10.1.1.1", `manual network "default" has no ip`},
		{"10.1.1.5", "x", "10.1.1.1", `manual network "default": netmask "x" is not an IPv4 netmask like 255.255.255.0`},
		{"10.1.1.5", "255.0.255.0", "10.1.1.1", `netmask "255.0.255.0" is not an IPv4 netmask`},
		{"10.1.1.5", "24", "10.1.1.1", `netmask "24" is not an IPv4 netmask`},
		{"10.1.1.5", "ffff:ffff:ffff:ffff::", "10.1.1.1", `netmask "ffff:ffff:ffff:ffff::" is not an IPv4 netmask`},
		{"x", "255.255.255.0", "10.1.1.1", `manual network "default": ip "x" is not an IPv4 address`},
		{"fd00::5", "255.255.255.0", "10.1.1.1", `ip "fd00::5" is not an IPv4 address`},
		{"10.1.1.5", "255.255.255.0", "gw", `manual network "default": gateway "gw" is not an IPv4 address`},
	} {
		_, _, err := planNetworks(manual(c.ip, c.netmask, c.gateway))
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("ip %q netmask %q gateway %q: %v, want %q", c.ip, c.netmask, c.gateway, err, c.want)
		}
	}
}
