package cpi

import (
	"encoding/json"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

func TestDriveLettersFollowLinux(t *testing.T) {
	for n, want := range map[int64]string{0: "a", 1: "b", 25: "z", 26: "aa", 27: "ab", 51: "az", 52: "ba", 701: "zz", 702: "aaa"} {
		if got := driveLetters(n); got != want {
			t.Errorf("driveLetters(%d) = %q, want %q", n, got, want)
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
		{cloudstack.XenServer, 1, "/dev/xvdb"},
		{cloudstack.XenServer, 2, "/dev/xvdc"},
		{cloudstack.XenServer, 4, "/dev/xvde"}, // XenServer names by device number
		{cloudstack.XenServer, 26, "/dev/xvdaa"},
		{cloudstack.VMware, 1, "/dev/sdb"},
		{cloudstack.VMware, 2, "/dev/sdc"},
		{cloudstack.VMware, 4, "/dev/sdd"}, // the third data disk
		{cloudstack.VMware, 5, "/dev/sde"},
		{cloudstack.VMware, 26, "/dev/sdz"},
		{cloudstack.VMware, 27, "/dev/sdaa"},
		{cloudstack.KVM, 2, "/dev/disk/by-id/virtio-4f3c2b1a0d9e4c8ba7f6"},
		{cloudstack.KVM, 4, "/dev/disk/by-id/virtio-4f3c2b1a0d9e4c8ba7f6"},
		{"Simulator", 4, "/dev/sde"},
		{"", 2, "/dev/sdc"},
	} {
		vol := &cloudstack.Volume{ID: uuid, DeviceID: c.device}
		if got := guestDiskPath(c.hypervisor, vol); got != c.want {
			t.Errorf("%s device %d: %s, want %s", c.hypervisor, c.device, got, c.want)
		}
	}
}

func TestDiskHintCarriesDeviceIDAndSerial(t *testing.T) {
	hint := diskHint(cloudstack.XenServer, &cloudstack.Volume{ID: "4f3c2b1a-0d9e-4c8b-a7f6-e5d4c3b2a190", DeviceID: 4})
	if hint["volume_id"] != "4" || hint["id"] != "4f3c2b1a0d9e4c8ba7f6" || hint["path"] != "/dev/xvde" {
		t.Fatalf("hint %v", hint)
	}
}

// LibvirtComputingResource.diskUuidToSerial: hyphens out, 20 characters.
func TestKVMSerial(t *testing.T) {
	for in, want := range map[string]string{
		"4f3c2b1a-0d9e-4c8b-a7f6-e5d4c3b2a190": "4f3c2b1a0d9e4c8ba7f6",
		"short-id":                             "shortid",
	} {
		if got := kvmSerial(in); got != want {
			t.Errorf("kvmSerial(%q) = %q, want %q", in, got, want)
		}
	}
}

type rawMeta string

func (m rawMeta) MarshalJSON() ([]byte, error) { return []byte(m), nil }

func TestMetadataTagsEncodeNestedValuesAsJSON(t *testing.T) {
	got := metadataTags(rawMeta(`{"director":"d","index":0,"big":12345678901234567890,"ok":true,"none":null,
		"empty":"","env":{"b":[1,"x<y"],"a":{"c":null}},"list":[]}`))
	want := map[string]string{"director": "d", "index": "0", "big": "12345678901234567890", "ok": "true",
		"empty": "", "env": `{"a":{"c":null},"b":[1,"x<y"]}`, "list": "[]"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if !json.Valid([]byte(got["env"])) {
		t.Errorf("env is not JSON: %s", got["env"])
	}
}

func TestMetadataTagsOfUnreadableMetadataAreEmpty(t *testing.T) {
	if got := metadataTags(rawMeta(`[1,2]`)); len(got) != 0 {
		t.Fatalf("got %v", got)
	}
}
