package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	boshsettings "github.com/cloudfoundry/bosh-agent/v2/settings"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

const (
	diskA  = "4f3c2b1a-0d9e-4c8b-a7f6-e5d4c3b2a190"
	diskB  = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
	serial = "4f3c2b1a0d9e4c8ba7f6" // diskA's, as LibvirtComputingResource.diskUuidToSerial cuts it
)

// devTree lays out a guest's /dev under a temporary directory: device
// nodes as plain files, links (name → target, relative as udev makes them).
func devTree(t *testing.T, devices []string, links map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range devices {
		p := filepath.Join(root, d)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func settingsOf(t *testing.T, doc string) boshsettings.Settings {
	t.Helper()
	var s boshsettings.Settings
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func resolve(t *testing.T, root, doc string, mapped time.Duration) Result {
	t.Helper()
	return Resolve(settingsOf(t, doc), NewResolver(root, mapped, boshlog.NewLogger(boshlog.LevelNone)))
}

func TestXenServerDevicesByNumber(t *testing.T) {
	root := devTree(t, []string{"dev/xvda", "dev/xvdb", "dev/xvdc", "dev/xvde"}, nil)
	res := resolve(t, root, `{"disks":{"ephemeral":{"path":"/dev/sdb","volume_id":"1"},
		"persistent":{"`+diskA+`":{"path":"/dev/xvdc","volume_id":"2","id":"`+serial+`"},
		"`+diskB+`":{"path":"/dev/xvde","volume_id":"4"}}}}`, time.Second)
	if res.Ephemeral == nil || res.Ephemeral.Path != "/dev/xvdb" {
		t.Errorf("ephemeral %+v; the mapped resolver tries /dev/sdb as /dev/xvdb first", res.Ephemeral)
	}
	if res.Persistent[diskA].Path != "/dev/xvdc" || res.Persistent[diskB].Path != "/dev/xvde" {
		t.Errorf("persistent %+v", res.Persistent)
	}
}

// The guest kernel chose vdd for disk A; the by-id link says so, and the
// mapped resolver follows it.
func TestKVMDiskByVirtioSerial(t *testing.T) {
	root := devTree(t, []string{"dev/vda", "dev/vdb", "dev/vdc", "dev/vdd"},
		map[string]string{"dev/disk/by-id/virtio-" + serial: "../../vdd"})
	res := resolve(t, root, `{"disks":{"ephemeral":{"path":"/dev/sdb","volume_id":"1"},
		"persistent":{"`+diskA+`":{"path":"/dev/disk/by-id/virtio-`+serial+`","volume_id":"2","id":"`+serial+`"}}}}`, time.Second)
	if res.Ephemeral.Path != "/dev/vdb" || res.Persistent[diskA].Path != "/dev/vdd" {
		t.Fatalf("got %+v", res)
	}
}

func TestVMwareSCSIDevices(t *testing.T) {
	root := devTree(t, []string{"dev/sda", "dev/sdb", "dev/sdc", "dev/sdd"}, nil)
	res := resolve(t, root, `{"disks":{"ephemeral":{"path":"/dev/sdb","volume_id":"1"},
		"persistent":{"`+diskB+`":{"path":"/dev/sdd","volume_id":"4"}}}}`, time.Second)
	if res.Ephemeral.Path != "/dev/sdb" || res.Persistent[diskB].Path != "/dev/sdd" {
		t.Fatalf("got %+v", res)
	}
}

// The agent's id resolver globs /dev/disk/by-id/*<ID>, and ID is the disk
// CID: a link named after it is found first, whatever the path says.
func TestTheIDResolverMatchesTheDiskCID(t *testing.T) {
	root := devTree(t, []string{"dev/sdq"}, map[string]string{"dev/disk/by-id/scsi-" + diskA: "../../sdq"})
	res := resolve(t, root, `{"disks":{"persistent":{"`+diskA+`":{"path":"/dev/sdz"}}}}`, time.Second)
	if res.Persistent[diskA].Path != "/dev/sdq" {
		t.Fatalf("got %+v", res)
	}
}

func TestAMissingDeviceIsTheAgentsTimeout(t *testing.T) {
	root := devTree(t, []string{"dev/xvda"}, nil)
	res := resolve(t, root, `{"disks":{"persistent":{"`+diskA+`":{"path":"/dev/xvde"}}}}`, 300*time.Millisecond)
	if got := res.Persistent[diskA]; got.Path != "" || !strings.Contains(got.Error, "Timed out getting real device path for /dev/xvde") {
		t.Fatalf("got %+v", got)
	}
}

// An absolute link is read inside the tree, as the guest would: the
// host's /dev/null is not the guest's.
func TestAbsoluteLinksStayInTheTree(t *testing.T) {
	root := devTree(t, []string{"dev/vdc"}, map[string]string{
		"dev/disk/by-id/virtio-" + serial: "/dev/null", "dev/disk/by-id/virtio-other": "/dev/vdc"})
	res := resolve(t, root, `{"disks":{"persistent":{"`+diskA+`":{"path":"/dev/disk/by-id/virtio-`+serial+`"},
		"`+diskB+`":{"path":"/dev/disk/by-id/virtio-other"}}}}`, 200*time.Millisecond)
	if got := res.Persistent[diskA]; got.Path != "" || !strings.Contains(got.Error, "Timed out") {
		t.Errorf("a link to the host's /dev/null: %+v", got)
	}
	if got := res.Persistent[diskB]; got.Path != "/dev/vdc" {
		t.Errorf("an absolute link inside the tree: %+v", got)
	}
}

func TestCommandLine(t *testing.T) {
	root := devTree(t, []string{"dev/xvdb"}, nil)
	var out, errOut bytes.Buffer
	code := run([]string{"-root", root}, strings.NewReader(`{"disks":{"ephemeral":"/dev/sdb"}}`), &out, &errOut)
	var res Result
	if code != 0 || json.Unmarshal(out.Bytes(), &res) != nil || res.Ephemeral == nil || res.Ephemeral.Path != "/dev/xvdb" {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, out.String(), errOut.String())
	}
	for _, args := range [][]string{nil, {"-root", root, "extra"}, {"-root", root, "-log-level", "LOUD"}} {
		if code := run(args, strings.NewReader(`{}`), &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code := run([]string{"-root", root}, strings.NewReader(`not json`), &out, &errOut); code != 2 {
		t.Errorf("bad stdin: exit %d, want 2", code)
	}
}

// The scsi resolver (bosh.io's vSphere stemcell) takes a plain string hint
// as the SCSI unit on the host of the root disk (*:0:0:0, an sd device),
// after asking that host to rescan: units 1 and 3 of host 2 are sdb and
// sdc whatever their letters; the CD-ROM's host (sr0) is not the disks'.
func TestSCSIUnitsOnTheRootDisksHost(t *testing.T) {
	root := devTree(t, []string{"sys/class/scsi_host/host2/scan"}, nil)
	for _, dir := range []string{"1:0:0:0/block/sr0", "2:0:0:0/block/sda", "2:0:1:0/block/sdc", "2:0:3:0/block/sdb"} {
		if err := os.MkdirAll(filepath.Join(root, "sys/bus/scsi/devices", dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	res := Resolve(settingsOf(t, `{"disks":{"system":"0","ephemeral":"1","persistent":{"`+diskA+`":"3"}}}`),
		NewSCSIResolver(root, boshlog.NewLogger(boshlog.LevelNone)))
	if res.Ephemeral == nil || res.Ephemeral.Path != "/dev/sdc" || res.Persistent[diskA].Path != "/dev/sdb" {
		t.Fatalf("ephemeral %+v, persistent %+v", res.Ephemeral, res.Persistent)
	}
	if scan, err := os.ReadFile(filepath.Join(root, "sys/class/scsi_host/host2/scan")); err != nil || string(scan) != "- - -" {
		t.Fatalf("the host's scan file holds %q (%v)", scan, err)
	}
}
