package cloudstack_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// TestErrorNames feeds the classifiers the answers CloudStack gives, and
// near misses.
func TestErrorNames(t *testing.T) {
	destroyText := "Parameter expunge can be passed by Admin only. Or when the allow.user.expunge.recover.vm key is set."
	expungeText := "Expunging a vm can only be done by an Admin. Or when the allow.user.expunge.recover.vm key is set."
	cases := []struct {
		err                      error
		denied, expunge, ipTaken bool
	}{
		// What the jobs answer: ApiAsyncJobDispatcher makes them 530.
		{&cloudstack.APIError{ErrorCode: 530, Text: destroyText}, false, true, false},
		{&cloudstack.APIError{ErrorCode: 530, Text: expungeText}, false, true, false},
		// A synchronous PermissionDeniedException (recoverVirtualMachine).
		{&cloudstack.APIError{ErrorCode: 531, CSErrorCode: 4365,
			Text: "Recovering a vm can only be done by an Admin. Or when the allow.user.expunge.recover.vm key is set."}, true, true, false},
		{&cloudstack.APIError{ErrorCode: 432, CSErrorCode: 9999,
			Text: "The given command does not exist or it is not available for the user"}, true, true, false},
		{&cloudstack.APIError{ErrorCode: 530, CSErrorCode: 4250, Text: "Failed to expunge vm with specified vmId"}, false, false, false},
		{&cloudstack.APIError{ErrorCode: 533, CSErrorCode: 9999,
			Text: "Unable to acquire Guest IP address for network Ntwk[204|Guest|8]"}, false, false, true},
		// A Shared network's requested address is taken
		// (IpAddressManagerImpl.fetchNewPublicIp).
		{&cloudstack.APIError{ErrorCode: 533, CSErrorCode: 9999, Text: "Insufficient address capacity"}, false, false, true},
		{&cloudstack.APIError{ErrorCode: 533, CSErrorCode: 4335, Text: "Unable to create a deployment for VM instance"}, false, false, false},
		{&cloudstack.APIError{ErrorCode: 530, Text: "Insufficient address capacity"}, false, false, false},
		{fmt.Errorf("creating VM: %w", &cloudstack.APIError{ErrorCode: 531, CSErrorCode: 4365}), true, true, false},
		{errors.New("Unable to acquire Guest IP address for network"), false, false, false},
		{errors.New(destroyText), false, false, false},
		{nil, false, false, false},
	}
	for _, c := range cases {
		if got := cloudstack.IsPermissionDenied(c.err); got != c.denied {
			t.Errorf("IsPermissionDenied(%v) = %v", c.err, got)
		}
		if got := cloudstack.IsExpungeRefused(c.err); got != c.expunge {
			t.Errorf("IsExpungeRefused(%v) = %v", c.err, got)
		}
		if got := cloudstack.IsGuestIPUnavailable(c.err); got != c.ipTaken {
			t.Errorf("IsGuestIPUnavailable(%v) = %v", c.err, got)
		}
	}
}

func TestVMWithIPFindsTheNIC(t *testing.T) {
	const net = "11111111-2222-4333-8444-555555555555"
	var gotNetwork string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotNetwork = r.URL.Query().Get("networkid")
		fmt.Fprintf(w, `{"listvirtualmachinesresponse":{"count":2,"virtualmachine":[`+
			`{"id":"a","name":"other","state":"Running","nic":[{"networkid":%q,"ipaddress":"10.1.1.9"}]},`+
			`{"id":"b","name":"old","state":"Destroyed","nic":[{"networkid":%q,"ipaddress":"10.1.1.50"}]}]}}`, net, net)
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	vm, err := c.VMWithIP(net, "10.1.1.50")
	if err != nil || vm == nil || vm.ID != "b" || !vm.AwaitingExpunge() || gotNetwork != net {
		t.Fatalf("VMWithIP = %+v, %v (networkid %q)", vm, err, gotNetwork)
	}
	if vm, err := c.VMWithIP(net, "10.1.1.51"); err != nil || vm != nil {
		t.Fatalf("free address: %+v, %v", vm, err)
	}
}

// The classes cpi/ acts on, through wrapping as cpi/ wraps them: capacity
// is ResourceAllocationException (535), InsufficientCapacityException
// (533) and ResourceUnavailableException (534) (ApiErrorCode); anything else
// CloudStack answers is not.
func TestErrorClasses(t *testing.T) {
	wrapped := func(err error) error { return fmt.Errorf("attaching disk d to VM v: %w", err) }
	for code, capacity := range map[int]bool{533: true, 534: true, 535: true, 530: false, 431: false, 536: false} {
		err := wrapped(&cloudstack.APIError{ErrorCode: code})
		if cloudstack.IsCapacity(err) != capacity || cloudstack.IsJobTimeout(err) || cloudstack.IsUnreachable(err) {
			t.Errorf("code %d: capacity %v, timeout %v, unreachable %v", code, cloudstack.IsCapacity(err),
				cloudstack.IsJobTimeout(err), cloudstack.IsUnreachable(err))
		}
	}
	timeout := wrapped(&cloudstack.JobTimeoutError{Command: "attachVolume", JobID: "j"})
	unreachable := wrapped(&cloudstack.UnreachableError{Endpoint: "e", Err: errors.New("connection reset")})
	if !cloudstack.IsJobTimeout(timeout) || cloudstack.IsCapacity(timeout) || cloudstack.IsUnreachable(timeout) {
		t.Errorf("job timeout misclassified")
	}
	if !cloudstack.IsUnreachable(unreachable) || cloudstack.IsJobTimeout(unreachable) || cloudstack.IsCapacity(unreachable) {
		t.Errorf("unreachable misclassified")
	}
}
