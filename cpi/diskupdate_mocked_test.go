package cpi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/cpi"
)

var (
	updateVol = &cloudstack.Volume{ID: "disk-1", Type: "DATADISK", State: "Ready", SizeGB: 10, OfferingID: "off-1"}
	anySize   = &cloudstack.DiskOffering{ID: "off-1", Name: "Any size", Customized: true}
	fast      = &cloudstack.DiskOffering{ID: "off-fast", Name: "fast", Customized: true}
	big50     = &cloudstack.DiskOffering{ID: "off-big", Name: "big", SizeGB: 50}
)

// updater is a CPI over a strict mock whose disk-1 is vol and whose disk
// offering ref is o.
func updater(t *testing.T, vol *cloudstack.Volume, ref string, o *cloudstack.DiskOffering) (cpi.DiskUpdater, *cloudstackmock.MockAPI) {
	t.Helper()
	c, cloud := mockedCPIIn(t, callContext(2), func(*config.Config) {})
	cloud.EXPECT().FindVolume("disk-1").Return(vol, nil)
	if o != nil {
		cloud.EXPECT().FindDiskOffering(ref).Return(o, nil)
	}
	return c.(cpi.DiskUpdater), cloud
}

func updateDisk(u cpi.DiskUpdater, mib int, props string) (apiv1.DiskCID, error) {
	return u.UpdateDisk(apiv1.NewDiskCID("disk-1"), mib, diskProps(props))
}

func on(o *cloudstack.DiskOffering, gb int64) *cloudstack.Volume {
	return &cloudstack.Volume{ID: "disk-1", Type: "DATADISK", State: "Ready", SizeGB: gb, OfferingID: o.ID}
}

// A new disk_offering is changeOfferingForVolume, at the size for a
// customized offering and without one for a fixed offering, which must hold
// the size; a larger size on the same offering is resizeVolume; the same
// size and offering is nothing. The CID stays.
func TestUpdateDiskInPlace(t *testing.T) {
	for name, tc := range map[string]struct {
		mib   int
		props string
		ref   string
		o     *cloudstack.DiskOffering
		want  func(*cloudstackmock.MockAPI)
	}{
		"customized offering": {20 * 1024, `{"disk_offering":"fast"}`, "fast", fast, func(cloud *cloudstackmock.MockAPI) {
			cloud.EXPECT().ChangeVolumeOffering("disk-1", "off-fast", 20).Return(on(fast, 20), nil)
		}},
		"fixed offering": {40 * 1024, `{"disk_offering":"big"}`, "big", big50, func(cloud *cloudstackmock.MockAPI) {
			cloud.EXPECT().ChangeVolumeOffering("disk-1", "off-big", 0).Return(on(big50, 50), nil)
		}},
		"growth": {12*1024 + 1, `{"disk_offering":"Any size"}`, "Any size", anySize, func(cloud *cloudstackmock.MockAPI) {
			cloud.EXPECT().ResizeVolume("disk-1", 13, "").Return(nil)
		}},
		"nothing to do": {10 * 1024, `{"disk_offering":"off-1"}`, "off-1", anySize, func(*cloudstackmock.MockAPI) {}},
		"short after a migration": {30 * 1024, `{"disk_offering":"fast"}`, "fast", fast, func(cloud *cloudstackmock.MockAPI) {
			cloud.EXPECT().ChangeVolumeOffering("disk-1", "off-fast", 30).Return(on(fast, 10), nil)
			cloud.EXPECT().ResizeVolume("disk-1", 30, "").Return(nil)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			u, cloud := updater(t, updateVol, tc.ref, tc.o)
			tc.want(cloud)
			cid, err := updateDisk(u, tc.mib, tc.props)
			if err != nil || cid.AsString() != "disk-1" {
				t.Fatalf("update_disk: %v, %v", cid, err)
			}
		})
	}
}

// A disk grown earlier on its fixed offering still holds what the offering
// gives: nothing to do.
func TestUpdateDiskFixedOfferingGrownEarlier(t *testing.T) {
	u, _ := updater(t, on(big50, 60), "big", big50)
	if _, err := updateDisk(u, 40*1024, `{"disk_offering":"big"}`); err != nil {
		t.Fatal(err)
	}
}

// Without disk_offering the disk type's offering is the configured default,
// as for create_disk.
func TestUpdateDiskDefaultOffering(t *testing.T) {
	c, cloud := mockedCPIIn(t, callContext(2), func(cfg *config.Config) { cfg.CloudStack.DefaultDiskOffering = "fast" })
	cloud.EXPECT().FindVolume("disk-1").Return(updateVol, nil)
	cloud.EXPECT().FindDiskOffering("fast").Return(fast, nil)
	cloud.EXPECT().ChangeVolumeOffering("disk-1", "off-fast", 10).Return(on(fast, 10), nil)
	if _, err := updateDisk(c.(cpi.DiskUpdater), 10*1024, `{}`); err != nil {
		t.Fatal(err)
	}
}

// What CloudStack cannot do in place is NotSupported, so the director copies
// the disk: a smaller disk, CloudStack's refusals (431 from its checks, 432
// without the command) and a resize a running XenServer VM cannot take.
func TestUpdateDiskNotSupported(t *testing.T) {
	refused := &cloudstack.APIError{Command: "changeOfferingForVolume", ErrorCode: 431, CSErrorCode: 4350, JobID: "j",
		Text: "Disk offering size strictness does not match with new disk offering."}
	missing := &cloudstack.APIError{Command: "changeOfferingForVolume", ErrorCode: 432, CSErrorCode: 9999,
		Text: "The user is not allowed to request the API command or the API command does not exist"}
	for name, tc := range map[string]struct {
		vol   *cloudstack.Volume
		mib   int
		ref   string
		o     *cloudstack.DiskOffering
		calls func(*cloudstackmock.MockAPI)
	}{
		"shrink":                  {updateVol, 5 * 1024, "off-1", anySize, func(*cloudstackmock.MockAPI) {}},
		"shrink onto an offering": {updateVol, 5 * 1024, "fast", fast, func(*cloudstackmock.MockAPI) {}},
		"smaller fixed offering":  {on(fast, 60), 40 * 1024, "big", big50, func(*cloudstackmock.MockAPI) {}},
		"refused": {updateVol, 10 * 1024, "fast", fast, func(cloud *cloudstackmock.MockAPI) {
			cloud.EXPECT().ChangeVolumeOffering("disk-1", "off-fast", 10).Return(nil, refused)
		}},
		"no changeOfferingForVolume": {updateVol, 10 * 1024, "fast", fast, func(cloud *cloudstackmock.MockAPI) {
			cloud.EXPECT().ChangeVolumeOffering("disk-1", "off-fast", 10).Return(nil, missing)
		}},
		"resize refused": {updateVol, 20 * 1024, "off-1", anySize, func(cloud *cloudstackmock.MockAPI) {
			cloud.EXPECT().ResizeVolume("disk-1", 20, "").Return(refused)
		}},
		"running XenServer VM": {attached(updateVol), 20 * 1024, "fast", fast, func(cloud *cloudstackmock.MockAPI) {
			cloud.EXPECT().FindVM("vm-1").Return(&cloudstack.VM{ID: "vm-1", State: "Running", Hypervisor: hypervisor.XenServer}, nil)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			u, cloud := updater(t, tc.vol, tc.ref, tc.o)
			tc.calls(cloud)
			_, err := updateDisk(u, tc.mib, `{"disk_offering":"`+tc.ref+`"}`)
			if got := errorType(t, err); got != "Bosh::Clouds::NotSupported" {
				t.Fatalf("got %s: %v", got, err)
			}
		})
	}
}

func attached(v *cloudstack.Volume) *cloudstack.Volume {
	a := *v
	a.VMID = "vm-1"
	return &a
}

// An attached disk changes where CloudStack resizes it online (KVM), or
// where its size stays.
func TestUpdateDiskAttached(t *testing.T) {
	u, cloud := updater(t, attached(updateVol), "fast", fast)
	cloud.EXPECT().FindVM("vm-1").Return(&cloudstack.VM{ID: "vm-1", State: "Running", Hypervisor: hypervisor.KVM}, nil)
	cloud.EXPECT().ChangeVolumeOffering("disk-1", "off-fast", 20).Return(on(fast, 20), nil)
	if _, err := updateDisk(u, 20*1024, `{"disk_offering":"fast"}`); err != nil {
		t.Fatal(err)
	}
	u, cloud = updater(t, attached(updateVol), "fast", fast)
	cloud.EXPECT().ChangeVolumeOffering("disk-1", "off-fast", 10).Return(on(fast, 10), nil)
	if _, err := updateDisk(u, 10*1024, `{"disk_offering":"fast"}`); err != nil {
		t.Fatal(err)
	}
}

// Bad input and failures of the work itself are no reason to copy: a
// CloudError (capacity is NoDiskSpace, which the director may retry), and a
// missing disk DiskNotFound.
func TestUpdateDiskErrors(t *testing.T) {
	failed := &cloudstack.APIError{Command: "changeOfferingForVolume", ErrorCode: 530, JobID: "j",
		Text: "Volume change offering operation failed for volume ID: disk-1 due to resize volume operation failed"}
	full := &cloudstack.APIError{Command: "changeOfferingForVolume", ErrorCode: 535, JobID: "j", Text: "primary storage limit"}
	for name, tc := range map[string]struct {
		change error
		after  *cloudstack.Volume
		want   string
	}{
		"failed":         {failed, nil, "Bosh::Clouds::CloudError"},
		"capacity":       {full, nil, "Bosh::Clouds::NoDiskSpace"},
		"other offering": {nil, on(anySize, 20), "Bosh::Clouds::CloudError"},
	} {
		t.Run(name, func(t *testing.T) {
			u, cloud := updater(t, updateVol, "fast", fast)
			cloud.EXPECT().ChangeVolumeOffering("disk-1", "off-fast", 20).Return(tc.after, tc.change)
			_, err := updateDisk(u, 20*1024, `{"disk_offering":"fast"}`)
			if got := errorType(t, err); got != tc.want {
				t.Fatalf("got %s: %v", got, err)
			}
		})
	}
	t.Run("fixed offering too small", func(t *testing.T) {
		u, _ := updater(t, updateVol, "big", big50)
		if got := errorType(t, func() error { _, err := updateDisk(u, 60*1024, `{"disk_offering":"big"}`); return err }()); got != "Bosh::Clouds::CloudError" {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("bad cloud_properties", func(t *testing.T) {
		c, _ := mockedCPIIn(t, callContext(2), func(*config.Config) {})
		_, err := updateDisk(c.(cpi.DiskUpdater), 1024, `{"disk_ofering":"fast"}`)
		if got := errorType(t, err); got != "Bosh::Clouds::CloudError" {
			t.Fatalf("got %s: %v", got, err)
		}
	})
	t.Run("no size", func(t *testing.T) {
		c, _ := mockedCPIIn(t, callContext(2), func(*config.Config) {})
		if got := errorType(t, func() error { _, err := updateDisk(c.(cpi.DiskUpdater), 0, `{}`); return err }()); got != "Bosh::Clouds::CloudError" {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("missing disk", func(t *testing.T) {
		c, cloud := mockedCPIIn(t, callContext(2), func(*config.Config) {})
		cloud.EXPECT().FindVolume("disk-1").Return(nil, nil)
		if got := errorType(t, func() error { _, err := updateDisk(c.(cpi.DiskUpdater), 1024, `{}`); return err }()); got != "Bosh::Clouds::DiskNotFound" {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("missing offering", func(t *testing.T) {
		c, cloud := mockedCPIIn(t, callContext(2), func(*config.Config) {})
		cloud.EXPECT().FindVolume("disk-1").Return(updateVol, nil)
		cloud.EXPECT().FindDiskOffering("fastest").Return(nil, errors.New(`CloudStack has no disk offering "fastest"`))
		_, err := updateDisk(c.(cpi.DiskUpdater), 1024, `{"disk_offering":"fastest"}`)
		if got := errorType(t, err); got != "Bosh::Clouds::CloudError" ||
			!strings.Contains(err.Error(), `update_disk of disk disk-1: CloudStack has no disk offering "fastest"`) {
			t.Fatalf("got %s: %v", got, err)
		}
	})
	t.Run("lookup fails", func(t *testing.T) {
		c, cloud := mockedCPIIn(t, callContext(2), func(*config.Config) {})
		cloud.EXPECT().FindVolume("disk-1").Return(nil, errors.New("connection refused"))
		if got := errorType(t, func() error { _, err := updateDisk(c.(cpi.DiskUpdater), 1024, `{}`); return err }()); got != "Bosh::Clouds::CloudError" {
			t.Fatalf("got %s", got)
		}
	})
}
