package cpi_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/cpi"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// mockedCPI is a CPI over a strict gomock CloudStack layer: a call the
// test did not expect fails it. No registry is configured, so settings
// travel as user data and the registry is never called.
func mockedCPI(t *testing.T, expunge bool) (apiv1.CPI, *cloudstackmock.MockAPI) {
	t.Helper()
	return mockedCPIIn(t, apiv1.CloudPropsImpl{}, func(cfg *config.Config) { cfg.CloudStack.ExpungeVM = &expunge })
}

// mockedCPIIn is mockedCPI serving a request with the call context ctx,
// expunge on, its config edited by edit.
func mockedCPIIn(t *testing.T, ctx apiv1.CallContext, edit func(*config.Config)) (apiv1.CPI, *cloudstackmock.MockAPI) {
	t.Helper()
	c, cloud, _ := loggedCPI(t, ctx, edit)
	return c, cloud
}

// loggedCPI is mockedCPIIn keeping the CPI's log, at debug level.
func loggedCPI(t *testing.T, ctx apiv1.CallContext, edit func(*config.Config)) (apiv1.CPI, *cloudstackmock.MockAPI,
	*bytes.Buffer) {
	t.Helper()
	cloud := cloudstackmock.NewMockAPI(gomock.NewController(t))
	cfg := config.Config{}
	cfg.CloudStack.DefaultZone = "z1"
	expunge := true
	cfg.CloudStack.ExpungeVM = &expunge
	edit(&cfg)
	var logs bytes.Buffer
	c, err := cpi.NewFactory(cfg, cloud, boshlog.NewWriterLogger(boshlog.LevelDebug, &logs)).New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c, cloud, &logs
}

// boshError is what bosh-cpi-go's dispatcher reads of a CPI error.
type boshError interface {
	Type() string
	CanRetry() bool
}

// typedError is what the dispatcher reads of err; an untyped err fails
// the test.
func typedError(t *testing.T, err error) boshError {
	t.Helper()
	var typed boshError
	if !errors.As(err, &typed) {
		t.Fatalf("error %v carries no Bosh::Clouds type", err)
	}
	return typed
}

func errorType(t *testing.T, err error) string {
	t.Helper()
	return typedError(t, err).Type()
}

// retryable is the error's ok_to_retry.
func retryable(t *testing.T, err error) bool {
	t.Helper()
	return typedError(t, err).CanRetry()
}

// expungeRefusals are the answers CloudStack gives an account that may not
// expunge: UserVmManagerImpl.destroyVm's PermissionDeniedException (531,
// cserrorcode 4365), the same thrown inside the job (530 with the
// setting's name), and a role without the command (432).
var expungeRefusals = map[string]error{
	"531": &cloudstack.APIError{Command: "destroyVirtualMachine", ErrorCode: 531, CSErrorCode: 4365,
		Text: "Parameter expunge can be passed by Admin only. Or when the allow.user.expunge.recover.vm key is set."},
	"530 in the job": &cloudstack.APIError{Command: "destroyVirtualMachine", ErrorCode: 530, CSErrorCode: 4250,
		JobID: "job-1", Text: "Parameter expunge can be passed by Admin only. Or when the allow.user.expunge.recover.vm key is set."},
	"432": &cloudstack.APIError{Command: "destroyVirtualMachine", ErrorCode: 432, CSErrorCode: 9999,
		Text: "The user is not allowed to request the API command or the API command does not exist"},
}

// delete_vm destroys with expunge and, when CloudStack refuses this
// account the expunge, destroys again without it: the VM goes, with its
// ephemeral disk (DATA-<vm id>) and not the persistent one.
func TestDeleteVMFallsBackToDestroyWithoutExpunge(t *testing.T) {
	for name, refusal := range expungeRefusals {
		t.Run(name, func(t *testing.T) {
			c, cloud := mockedCPI(t, true)
			vm := &cloudstack.VM{ID: "vm-1", Name: "vm-abc", State: "Running", ZoneID: "zone-1"}
			cloud.EXPECT().FindVM("vm-1").Return(vm, nil)
			cloud.EXPECT().VMVolumes("vm-1").Return([]cloudstack.Volume{
				{ID: "root-1", Name: "ROOT-7", Type: "ROOT"},
				{ID: "eph-1", Name: "DATA-7", Type: "DATADISK"},
				{ID: "disk-1", Name: "bosh-disk-1", Type: "DATADISK"},
			}, nil)
			gomock.InOrder(
				cloud.EXPECT().DestroyVM("vm-1", true, []string{"eph-1"}).Return(refusal),
				cloud.EXPECT().DestroyVM("vm-1", false, []string{"eph-1"}).Return(nil),
			)
			if err := c.DeleteVM(apiv1.NewVMCID("vm-1")); err != nil {
				t.Fatalf("delete_vm: %v", err)
			}
		})
	}
}

// Any other refusal of the destroy is the director's CloudError, with no
// second attempt.
func TestDeleteVMDoesNotRetryOtherDestroyFailures(t *testing.T) {
	c, cloud := mockedCPI(t, true)
	vm := &cloudstack.VM{ID: "vm-1", Name: "vm-abc", State: "Running"}
	cloud.EXPECT().FindVM("vm-1").Return(vm, nil)
	cloud.EXPECT().VMVolumes("vm-1").Return(nil, nil)
	cloud.EXPECT().DestroyVM("vm-1", true, nil).Return(&cloudstack.APIError{Command: "destroyVirtualMachine",
		ErrorCode: 530, CSErrorCode: 4250, JobID: "job-1", Text: "Failed to destroy vm"})
	err := c.DeleteVM(apiv1.NewVMCID("vm-1"))
	if got := errorType(t, err); got != "Bosh::Clouds::CloudError" {
		t.Fatalf("delete_vm: %s %v, want a CloudError", got, err)
	}
}

// A Destroyed VM an account may not expunge is left to CloudStack's
// expunge thread: delete_vm succeeds and destroys nothing more.
func TestDeleteVMLeavesADestroyedVMItMayNotExpunge(t *testing.T) {
	for name, refusal := range expungeRefusals {
		t.Run(name, func(t *testing.T) {
			c, cloud := mockedCPI(t, true)
			cloud.EXPECT().FindVM("vm-1").Return(&cloudstack.VM{ID: "vm-1", Name: "vm-abc", State: "Destroyed"}, nil)
			cloud.EXPECT().ExpungeVM("vm-1").Return(refusal)
			if err := c.DeleteVM(apiv1.NewVMCID("vm-1")); err != nil {
				t.Fatalf("delete_vm: %v", err)
			}
		})
	}
}

// With expunge_vm false the VM is destroyed once, without expunge.
func TestDeleteVMWithoutExpungeDestroysOnce(t *testing.T) {
	c, cloud := mockedCPI(t, false)
	cloud.EXPECT().FindVM("vm-1").Return(&cloudstack.VM{ID: "vm-1", Name: "vm-abc", State: "Stopped"}, nil)
	cloud.EXPECT().VMVolumes("vm-1").Return(nil, nil)
	cloud.EXPECT().DestroyVM("vm-1", false, nil).Return(nil)
	if err := c.DeleteVM(apiv1.NewVMCID("vm-1")); err != nil {
		t.Fatalf("delete_vm: %v", err)
	}
}

// attach_disk attaches only a disk that is free and in the VM's zone;
// anything else is a CloudError before CloudStack is asked to attach.
func TestAttachDiskRefusesAnotherZoneOrAnotherVM(t *testing.T) {
	vm := &cloudstack.VM{ID: "vm-1", State: "Running", ZoneID: "zone-1", Hypervisor: hypervisor.XenServer}
	for name, vol := range map[string]*cloudstack.Volume{
		"another zone": {ID: "disk-1", Type: "DATADISK", ZoneID: "zone-2", State: "Ready"},
		"another VM":   {ID: "disk-1", Type: "DATADISK", ZoneID: "zone-1", State: "Ready", VMID: "vm-2"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := mockedCPI(t, true)
			cloud.EXPECT().FindVM("vm-1").Return(vm, nil)
			cloud.EXPECT().FindVolume("disk-1").Return(vol, nil)
			_, err := c.AttachDiskV2(apiv1.NewVMCID("vm-1"), apiv1.NewDiskCID("disk-1"))
			if got := errorType(t, err); got != "Bosh::Clouds::CloudError" {
				t.Fatalf("attach_disk: %s %v, want a CloudError", got, err)
			}
		})
	}
}

// A free disk in the VM's zone is attached, and the hint names the device
// CloudStack chose; one attached to the VM already is not attached again.
func TestAttachDiskInTheVMsZone(t *testing.T) {
	vm := &cloudstack.VM{ID: "vm-1", State: "Running", ZoneID: "zone-1", Hypervisor: hypervisor.XenServer}
	free := &cloudstack.Volume{ID: "disk-1", Type: "DATADISK", ZoneID: "zone-1", State: "Ready"}
	attached := &cloudstack.Volume{ID: "disk-1", Type: "DATADISK", ZoneID: "zone-1", State: "Ready", VMID: "vm-1",
		DeviceID: 4}

	c, cloud := mockedCPI(t, true)
	cloud.EXPECT().FindVM("vm-1").Return(vm, nil).Times(2)
	gomock.InOrder(
		cloud.EXPECT().FindVolume("disk-1").Return(free, nil),
		cloud.EXPECT().AttachVolume("disk-1", "vm-1").Return(attached, nil),
		cloud.EXPECT().FindVolume("disk-1").Return(attached, nil),
	)
	for range 2 {
		hint, err := c.AttachDiskV2(apiv1.NewVMCID("vm-1"), apiv1.NewDiskCID("disk-1"))
		if err != nil {
			t.Fatalf("attach_disk: %v", err)
		}
		if b, _ := hint.MarshalJSON(); string(b) != `{"id":"disk1","path":"/dev/xvde","volume_id":"4"}` {
			t.Fatalf("hint %s", b)
		}
	}
}

// A CloudStack capacity refusal of the attach is NoDiskSpace, which the
// director may retry.
func TestAttachDiskCapacityIsNoDiskSpace(t *testing.T) {
	c, cloud := mockedCPI(t, true)
	cloud.EXPECT().FindVM("vm-1").Return(&cloudstack.VM{ID: "vm-1", State: "Running", ZoneID: "zone-1"}, nil)
	cloud.EXPECT().FindVolume("disk-1").Return(&cloudstack.Volume{ID: "disk-1", Type: "DATADISK", ZoneID: "zone-1"}, nil)
	cloud.EXPECT().AttachVolume("disk-1", "vm-1").Return(nil, &cloudstack.APIError{Command: "attachVolume",
		ErrorCode: 533, CSErrorCode: 4250, JobID: "job-1", Text: "Insufficient capacity"})
	_, err := c.AttachDiskV2(apiv1.NewVMCID("vm-1"), apiv1.NewDiskCID("disk-1"))
	var typed boshError
	if !errors.As(err, &typed) || typed.Type() != "Bosh::Clouds::NoDiskSpace" || !typed.CanRetry() {
		t.Fatalf("attach_disk: %v, want a retryable NoDiskSpace", err)
	}
}

// resize_disk grows a disk in place on a customized offering, and moves a
// disk on a fixed one onto CloudStack's "Custom"; the same size asks
// CloudStack nothing more.
func TestResizeDiskGrowsOntoACustomizedOffering(t *testing.T) {
	vol := &cloudstack.Volume{ID: "disk-1", Type: "DATADISK", State: "Ready", SizeGB: 10, OfferingID: "off-1"}
	custom := &cloudstack.DiskOffering{ID: "off-custom", Name: "Custom", Customized: true}
	for name, tc := range map[string]struct {
		offering *cloudstack.DiskOffering
		target   string
	}{
		"customized": {&cloudstack.DiskOffering{ID: "off-1", Name: "Any size", Customized: true}, ""},
		"fixed":      {&cloudstack.DiskOffering{ID: "off-1", Name: "Small", SizeGB: 10}, "off-custom"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := mockedCPI(t, true)
			cloud.EXPECT().FindVolume("disk-1").Return(vol, nil).Times(2)
			cloud.EXPECT().FindDiskOffering("off-1").Return(tc.offering, nil)
			if tc.target != "" {
				cloud.EXPECT().FindDiskOffering("Custom").Return(custom, nil)
			}
			cloud.EXPECT().ResizeVolume("disk-1", 20, tc.target).Return(nil)
			if err := c.ResizeDisk(apiv1.NewDiskCID("disk-1"), 20*1024); err != nil {
				t.Fatalf("resize_disk: %v", err)
			}
			if err := c.ResizeDisk(apiv1.NewDiskCID("disk-1"), 10*1024); err != nil {
				t.Fatalf("resize_disk to its own size: %v", err)
			}
		})
	}
}

// What CloudStack cannot do is NotSupported, so the director copies the
// disk to a new one instead: shrinking, or growing a disk on a fixed
// offering with no customized one to move to. A size of 0 or less is a
// CloudError before CloudStack is asked anything.
func TestResizeDiskRefusals(t *testing.T) {
	vol := &cloudstack.Volume{ID: "disk-1", Type: "DATADISK", State: "Ready", SizeGB: 10, OfferingID: "off-1"}
	t.Run("shrink", func(t *testing.T) {
		c, cloud := mockedCPI(t, true)
		cloud.EXPECT().FindVolume("disk-1").Return(vol, nil)
		if got := errorType(t, c.ResizeDisk(apiv1.NewDiskCID("disk-1"), 5*1024)); got != "Bosh::Clouds::NotSupported" {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("fixed, no Custom", func(t *testing.T) {
		c, cloud := mockedCPI(t, true)
		cloud.EXPECT().FindVolume("disk-1").Return(vol, nil)
		cloud.EXPECT().FindDiskOffering("off-1").Return(&cloudstack.DiskOffering{ID: "off-1", Name: "Small", SizeGB: 10}, nil)
		cloud.EXPECT().FindDiskOffering("Custom").Return(nil, errors.New(`CloudStack has no disk offering "Custom"`))
		if got := errorType(t, c.ResizeDisk(apiv1.NewDiskCID("disk-1"), 20*1024)); got != "Bosh::Clouds::NotSupported" {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("no size", func(t *testing.T) {
		c, _ := mockedCPI(t, true)
		if got := errorType(t, c.ResizeDisk(apiv1.NewDiskCID("disk-1"), 0)); got != "Bosh::Clouds::CloudError" {
			t.Fatalf("got %s", got)
		}
	})
}

// delete_vm releases the vip when the CPI acquired it (which ends its
// static NAT too) and only ends the static NAT of an address the operator
// allocated.
func TestDeleteVMReleasesOnlyTheVIPTheCPIAcquired(t *testing.T) {
	for name, tc := range map[string]struct {
		addr    *cloudstack.PublicIP
		release bool
	}{
		"acquired": {&cloudstack.PublicIP{ID: "ip-1", IP: "203.0.113.7", VMID: "vm-1", StaticNAT: true,
			Tags: map[string]string{marks.AcquiredTag: "true"}}, true},
		"the operator's": {&cloudstack.PublicIP{ID: "ip-1", IP: "203.0.113.7", VMID: "vm-1", StaticNAT: true}, false},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := mockedCPI(t, true)
			vm := &cloudstack.VM{ID: "vm-1", Name: "vm-abc", State: "Running", PublicIPID: "ip-1", PublicIP: "203.0.113.7"}
			cloud.EXPECT().FindVM("vm-1").Return(vm, nil)
			cloud.EXPECT().PublicIPByID("ip-1").Return(tc.addr, nil)
			if tc.release {
				cloud.EXPECT().ReleasePublicIP("ip-1").Return(nil)
			} else {
				cloud.EXPECT().DisableStaticNAT("ip-1").Return(nil)
			}
			cloud.EXPECT().VMVolumes("vm-1").Return(nil, nil)
			cloud.EXPECT().DestroyVM("vm-1", true, nil).Return(nil)
			if err := c.DeleteVM(apiv1.NewVMCID("vm-1")); err != nil {
				t.Fatalf("delete_vm: %v", err)
			}
		})
	}
}

// A VM a job still works on is waited for, and what that job left is
// removed: here it ended Destroyed, which an account that may expunge
// expunges.
func TestDeleteVMWaitsForABusyVM(t *testing.T) {
	c, cloud := mockedCPI(t, true)
	gomock.InOrder(
		cloud.EXPECT().FindVM("vm-1").Return(&cloudstack.VM{ID: "vm-1", Name: "vm-abc", State: "Stopping"}, nil),
		cloud.EXPECT().SettledVM("vm-1", gomock.Any()).Return(&cloudstack.VM{ID: "vm-1", Name: "vm-abc", State: "Destroyed"}, nil),
		cloud.EXPECT().ExpungeVM("vm-1").Return(nil),
	)
	if err := c.DeleteVM(apiv1.NewVMCID("vm-1")); err != nil {
		t.Fatalf("delete_vm: %v", err)
	}
}
