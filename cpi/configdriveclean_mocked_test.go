package cpi_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/cpi"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// create_vm's cleanup of an ISO whose upload CloudStack has not settled:
// deleteIso is refused (TemplateAdapterBase.prepareDelete) until the upload
// monitor's next poll makes the upload Ready or UploadError, so the
// cleanup tries again for one poll and a margin. The director gets
// ok_to_retry only when the ISO is gone; an ISO still there is named, and
// the answer is not retriable.

var errLostAnswer = &cloudstack.UnreachableError{Endpoint: "cs", Err: errors.New("connection reset")}

// settling is the outcome of deleteIso calls on an ISO CloudStack settles
// after busy refusals, or never (busy < 0). It counts the calls.
type settling struct {
	busy, calls int
}

func (s *settling) deleteISO(string) error {
	s.calls++
	if s.busy < 0 || s.calls <= s.busy {
		return errISOBusy
	}
	return nil
}

// cleanupOutcome is one case: how many refusals CloudStack gives before it
// settles, the patience, and what the director must get.
type cleanupOutcome struct {
	busy     int
	patience time.Duration
	retry    bool
	says     string
}

var cleanupOutcomes = map[string]cleanupOutcome{
	"settled within a poll": {busy: 1, patience: 90 * time.Second, retry: true, says: "removed what this create_vm had made"},
	"not settled in time": {busy: -1, patience: 1500 * time.Millisecond, retry: false,
		says: "config drive ISO iso-1 is left in CloudStack, marked incomplete"},
}

// cleanupCase is a case's CPI with its bound, an SSVM answering the POST
// with status, and CloudStack's deleteIso answers.
func cleanupCase(t *testing.T, tc cleanupOutcome, status int) (apiv1.CPI, *cloudstackmock.MockAPI, *httptest.Server,
	*settling) {
	t.Helper()
	t.Cleanup(cpi.SetUploadPatience(tc.patience))
	c, cloud := configDriveCPI(t)
	return c, cloud, (&isoSSVM{}).serve(t, status), &settling{busy: tc.busy}
}

// The SSVM refused the POST: the ISO goes at the monitor's next poll, and
// only then may the director retry.
func TestCreateVMWithConfigDriveRefusedUploadWaitsForTheISOToSettle(t *testing.T) {
	for name, tc := range cleanupOutcomes {
		t.Run(name, func(t *testing.T) {
			c, cloud, srv, del := cleanupCase(t, tc, http.StatusBadRequest)
			var iso cloudstack.ISOSpec
			gomock.InOrder(append(expectUploadStarts(t, cloud, srv, &iso),
				cloud.EXPECT().DeleteISO("iso-1").DoAndReturn(del.deleteISO).MinTimes(1))...)
			start := time.Now()
			_, err := createConfigDriveVM(c, apiv1.NewVMEnv(nil))
			checkCleanupOutcome(t, tc, err, start, del)
			if !strings.Contains(err.Error(), "refused the upload") {
				t.Errorf("the cause is lost: %v", err)
			}
		})
	}
}

// A poll of the ISO's wait whose answer was lost: the VM deployed stopped
// goes, then its ISO once CloudStack has settled the upload.
func TestCreateVMWithConfigDriveVMCleanupWaitsForTheISOToSettle(t *testing.T) {
	for name, tc := range cleanupOutcomes {
		t.Run(name, func(t *testing.T) {
			c, cloud, srv, del := cleanupCase(t, tc, http.StatusOK)
			d := &deployed{}
			var iso cloudstack.ISOSpec
			gomock.InOrder(append(expectUploadStarts(t, cloud, srv, &iso),
				cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer("vm-1", nil)),
				cloud.EXPECT().WaitISO("iso-1", time.Minute).Return(errLostAnswer),
				cloud.EXPECT().FindVM("vm-1").DoAndReturn(func(string) (*cloudstack.VM, error) {
					vm := d.vm()
					vm.State, vm.Tags = "Stopped", map[string]string{marks.ConfigDriveTag: "true"}
					return vm, nil
				}),
			)...)
			expectRemoval(cloud, nil)
			gomock.InOrder(
				cloud.EXPECT().OwnISOs(gomock.Any()).DoAndReturn(func(name string) ([]cloudstack.ISO, error) {
					return []cloudstack.ISO{{ID: "iso-1", Name: name, DisplayText: iso.DisplayText}}, nil
				}),
				cloud.EXPECT().DeleteISO("iso-1").DoAndReturn(del.deleteISO).MinTimes(1),
			)
			start := time.Now()
			_, err := createConfigDriveVM(c, apiv1.NewVMEnv(nil))
			checkCleanupOutcome(t, tc, err, start, del)
		})
	}
}

// checkCleanupOutcome checks the answer, the deleteIso calls and the wall
// time: one refusal costs the first wait (1 s); a patience of 1.5 s takes
// two tries, the next wait (2 s) would end after it.
func checkCleanupOutcome(t *testing.T, tc cleanupOutcome, err error, start time.Time, del *settling) {
	t.Helper()
	took := time.Since(start)
	if errorType(t, err) != "Bosh::Clouds::VMCreationFailed" || retryable(t, err) != tc.retry ||
		!strings.Contains(err.Error(), tc.says) {
		t.Fatalf("got %v (ok_to_retry %v), want ok_to_retry %v and %q", err, retryable(t, err), tc.retry, tc.says)
	}
	if !tc.retry && !strings.Contains(err.Error(), "the next create_vm deletes it") {
		t.Errorf("the error does not say who removes the ISO: %v", err)
	}
	if del.calls != 2 || took < time.Second || took > 3*time.Second {
		t.Errorf("%d deleteIso calls in %s, want 2 in about 1 s", del.calls, took)
	}
	t.Logf("failure path: %d deleteIso calls, %s: %v", del.calls, took.Round(10*time.Millisecond), err)
}

// getUploadParamsForIso's answer was lost: CloudStack may have made the
// ISO, which is looked for by its name. None made leaves nothing; one made
// awaits bytes that were never sent, which CloudStack keeps until it
// abandons the upload, so it is not waited for: it is named, no retry.
func TestCreateVMWithConfigDriveUnansweredCreationLooksTheISOUp(t *testing.T) {
	for name, made := range map[string]bool{"none made": false, "made": true} {
		t.Run(name, func(t *testing.T) {
			c, cloud := configDriveCPI(t)
			expectResolve(cloud)
			var spec cloudstack.ISOSpec
			calls := []any{cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil),
				cloud.EXPECT().OwnISOs("").Return(nil, nil),
				cloud.EXPECT().ISOUploadParams(gomock.Any()).DoAndReturn(
					func(s cloudstack.ISOSpec) (*cloudstack.UploadParams, error) {
						spec = s
						return nil, errLostAnswer
					}),
				cloud.EXPECT().OwnISOs(gomock.Any()).DoAndReturn(func(name string) ([]cloudstack.ISO, error) {
					if name != spec.Name {
						t.Errorf("looked for ISOs named %q, want %q", name, spec.Name)
					}
					if !made {
						return nil, nil
					}
					return []cloudstack.ISO{{ID: "iso-1", Name: name, DisplayText: spec.DisplayText},
						{ID: "iso-other", Name: name, DisplayText: "the operator's"}}, nil
				})}
			if made {
				calls = append(calls, cloud.EXPECT().DeleteISO("iso-1").Return(errISOBusy))
			}
			gomock.InOrder(calls...)
			start := time.Now()
			_, err := createConfigDriveVM(c, apiv1.NewVMEnv(nil))
			checkLookedUp(t, err, made, time.Since(start))
		})
	}
}

func checkLookedUp(t *testing.T, err error, made bool, took time.Duration) {
	t.Helper()
	if retryable(t, err) == made || !errors.Is(err, errLostAnswer) {
		t.Fatalf("got %v (ok_to_retry %v)", err, retryable(t, err))
	}
	if made && (!strings.Contains(err.Error(), "config drive ISO iso-1 is left") || took > time.Second) {
		t.Errorf("got %v in %s, want ISO iso-1 named at once", err, took)
	}
}
