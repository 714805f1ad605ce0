package cpi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

func TestDiskHintCarriesDeviceIDAndSerial(t *testing.T) {
	vol := &cloudstack.Volume{ID: "4f3c2b1a-0d9e-4c8b-a7f6-e5d4c3b2a190", DeviceID: 4}
	hint := diskHint(&cloudstack.VM{Hypervisor: hypervisor.XenServer}, vol)
	if hint["volume_id"] != "4" || hint["id"] != "4f3c2b1a0d9e4c8ba7f6" || hint["path"] != "/dev/xvde" {
		t.Fatalf("hint %v", hint)
	}
}

// A XenServer VM with a config drive (bosh.io's OpenStack stemcell) gets
// the path alone; on KVM such a VM keeps the serial its hint's path names.
func TestDiskHintOfAnOpenStackStemcellOnXenServerIsThePathAlone(t *testing.T) {
	vol := &cloudstack.Volume{ID: "4f3c2b1a-0d9e-4c8b-a7f6-e5d4c3b2a190", DeviceID: 4}
	xen := &cloudstack.VM{Hypervisor: hypervisor.XenServer, Tags: map[string]string{marks.ConfigDriveTag: "true"}}
	if hint := diskHint(xen, vol); len(hint) != 1 || hint["path"] != "/dev/xvde" {
		t.Fatalf("hint %v", hint)
	}
	kvm := &cloudstack.VM{Hypervisor: hypervisor.KVM, ISOID: "iso-1"}
	if hint := diskHint(kvm, vol); hint["id"] != "4f3c2b1a0d9e4c8ba7f6" {
		t.Fatalf("hint %v", hint)
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

// A vSphere stemcell's VM gets the SCSI unit CloudStack reports, not the
// device id; a volume without one is refused, naming what to check.
func TestUnitHint(t *testing.T) {
	vm := &cloudstack.VM{ID: "vm-1", Hypervisor: hypervisor.VMware}
	hint, err := unitHint(vm, &cloudstack.Volume{ID: "vol-1", DeviceID: 4, SCSIUnit: 3, HasSCSIUnit: true})
	if b, _ := hint.MarshalJSON(); err != nil || string(b) != `"3"` {
		t.Fatalf("hint %s, %v", b, err)
	}
	if _, err := unitHint(vm, &cloudstack.Volume{ID: "vol-1", DeviceID: 4}); err == nil ||
		!strings.Contains(err.Error(), "dataDiskController") {
		t.Fatalf("got %v", err)
	}
}
