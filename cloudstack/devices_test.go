package cloudstack_test

import (
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
)

// XenServer names a disk after its device id as Linux names the nth disk.
func TestDriveLettersFollowLinux(t *testing.T) {
	for n, want := range map[int64]string{0: "a", 1: "b", 25: "z", 26: "aa", 27: "ab", 51: "az", 52: "ba", 701: "zz", 702: "aaa"} {
		vol := &cloudstack.Volume{DeviceID: n}
		if got := vol.GuestPath(hypervisor.XenServer); got != "/dev/xvd"+want {
			t.Errorf("device %d: %q, want /dev/xvd%s", n, got, want)
		}
	}
}

// Device ids are 1, 2, 4, 5 …: 3 is the CD-ROM's.
func TestGuestDiskPathPerHypervisor(t *testing.T) {
	const uuid = "4f3c2b1a-0d9e-4c8b-a7f6-e5d4c3b2a190"
	for _, c := range []struct {
		hypervisor cloudstack.Hypervisor
		device     int64
		want       string
	}{
		{hypervisor.XenServer, 1, "/dev/xvdb"},
		{hypervisor.XenServer, 2, "/dev/xvdc"},
		{hypervisor.XenServer, 4, "/dev/xvde"}, // XenServer names by device number
		{hypervisor.XenServer, 26, "/dev/xvdaa"},
		{hypervisor.VMware, 1, "/dev/sdb"},
		{hypervisor.VMware, 2, "/dev/sdc"},
		{hypervisor.VMware, 4, "/dev/sdd"}, // the third data disk
		{hypervisor.VMware, 5, "/dev/sde"},
		{hypervisor.VMware, 26, "/dev/sdz"},
		{hypervisor.VMware, 27, "/dev/sdaa"},
		{hypervisor.KVM, 2, "/dev/disk/by-id/virtio-4f3c2b1a0d9e4c8ba7f6"},
		{hypervisor.KVM, 4, "/dev/disk/by-id/virtio-4f3c2b1a0d9e4c8ba7f6"},
		{"Simulator", 4, "/dev/sde"},
		{"", 2, "/dev/sdc"},
	} {
		vol := &cloudstack.Volume{ID: uuid, DeviceID: c.device}
		if got := vol.GuestPath(c.hypervisor); got != c.want {
			t.Errorf("%s device %d: %s, want %s", c.hypervisor, c.device, got, c.want)
		}
	}
}

// LibvirtComputingResource.diskUuidToSerial: hyphens out, 20 characters.
func TestKVMSerial(t *testing.T) {
	for in, want := range map[string]string{
		"4f3c2b1a-0d9e-4c8b-a7f6-e5d4c3b2a190": "4f3c2b1a0d9e4c8ba7f6",
		"short-id":                             "shortid",
	} {
		if got := (&cloudstack.Volume{ID: in}).KVMSerial(); got != want {
			t.Errorf("KVMSerial of %q = %q, want %q", in, got, want)
		}
	}
}
