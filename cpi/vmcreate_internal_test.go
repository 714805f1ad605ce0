package cpi

import (
	"errors"
	"strings"
	"testing"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// holderCloud answers VMWithIP from a table.
type holderCloud struct {
	cloudstack.API
	holders map[string]*cloudstack.VM
}

func (h holderCloud) VMWithIP(networkID, ip string) (*cloudstack.VM, error) {
	return h.holders[networkID+"/"+ip], nil
}

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
	cloud := holderCloud{holders: map[string]*cloudstack.VM{
		"n1/10.1.1.5": {ID: "vm-old", Name: "cpivm-old", State: "Destroyed"},
		"n1/10.1.1.6": {ID: "vm-live", Name: "cpivm-live", State: "Running"},
	}}
	for ip, want := range map[string]string{
		"10.1.1.5": "static IP 10.1.1.5 on CloudStack network guest is still held by VM vm-old (cpivm-old), destroyed but not yet expunged",
		"10.1.1.6": "static IP 10.1.1.6 on CloudStack network guest is in use by VM vm-live (cpivm-live, Running)",
		"10.1.1.7": "CloudStack could not allocate static IP 10.1.1.7 and no VM this account can list holds it: perhaps a VM destroyed but not yet expunged does",
	} {
		v := &vmCreation{cpi: CPI{cloud: cloud}, plan: networkPlan{nics: []nicPlan{{name: "default",
			net: apiv1.NewNetwork(apiv1.NetworkOpts{Type: "manual", IP: ip}), network: cloudstack.Network{ID: "n1", Name: "guest"}}}}}
		err := v.explainAddress(taken)
		if err == nil || !strings.Contains(err.Error(), want) || !cloudstack.IsGuestIPUnavailable(err) {
			t.Errorf("%s (%s): %v; want %q and the CloudStack error kept", ip, taken.Text, err, want)
		}
	}
	other := &cloudstack.APIError{ErrorCode: 533, Text: "Unable to create a deployment for VM instance"}
	if err := (&vmCreation{cpi: CPI{cloud: cloud}}).explainAddress(other); err != other {
		t.Errorf("another capacity error was changed: %v", err)
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
