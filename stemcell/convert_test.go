package stemcell_test

import (
	"encoding/binary"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/fixtures"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell"
)

// bosh.io's OpenStack stemcells go to XenServer as a VHD converted from
// their image; a stemcell of no infrastructure that says QCOW2 for Xen is
// still refused (TestChoose).
func TestChooseConvertsOpenStackImagesForXenServer(t *testing.T) {
	for format, from := range map[string]string{"qcow2": "QCOW2", "raw": "RAW"} {
		got, err := stemcell.Choose(stemcell.Spec{Infrastructure: "openstack", Hypervisor: "kvm", DiskFormat: format,
			CloudStackHypervisor: "XenServer"})
		if want := (stemcell.Target{Hypervisor: "XenServer", Format: "VHD", From: from}); err != nil || got != want {
			t.Errorf("%s: Choose = %+v, %v; want %+v", format, got, err, want)
		}
	}
}

// diskData is a disk of 5 MiB and a sector, data at its start, in its
// third 2 MiB block and at its end, zeros between.
func diskData() []byte {
	d := make([]byte, 5<<20+512)
	copy(d, "bosh root disk")
	for i := 4<<20 + 10; i < 4<<20+5000; i++ {
		d[i] = byte(i)
	}
	d[len(d)-1] = 0xee
	return d
}

func TestPrepareConvertsOpenStackImagesToVHD(t *testing.T) {
	data := diskData()
	raw := write(t, "disk.raw", data)
	for _, c := range []struct {
		name, from string
		image      []byte
	}{
		{"qcow2 tgz", "QCOW2", testimages.OpenStackTgz(testimages.QCOW2Of(data))},
		{"raw tgz", "RAW", testimages.OpenStackTgz(data)},
		{"bare qcow2", "QCOW2", testimages.QCOW2Of(data)},
		{"bare raw", "RAW", data},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			target := stemcell.Target{Hypervisor: "XenServer", Format: "VHD", From: c.from}
			img, err := stemcell.Prepare(write(t, "image", c.image), target, tmp)
			if err != nil {
				t.Fatal(err)
			}
			vhd, err := os.ReadFile(img.Path)
			if err != nil || img.Extension != ".vhd" || int64(len(vhd)) != img.Size || !strings.Contains(img.Converted, "dynamic VHD") {
				t.Fatalf("%+v (%v)", img, err)
			}
			footer := vhd[len(vhd)-512:]
			if string(vhd[:8]) != "conectix" || string(footer[:8]) != "conectix" || string(footer[28:32]) != "tap\x00" ||
				binary.BigEndian.Uint64(footer[48:]) != uint64(len(data)) {
				t.Fatalf("not the dynamic VHD of a %d-byte disk: footer %q", len(data), footer[:64])
			}
			qemuCompare(t, raw, img.Path)
			img.Cleanup()
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("Cleanup left %v in the temporary directory", left)
			}
		})
	}
}

// qemuCompare has qemu-img compare the raw disk with the VHD.
func qemuCompare(t *testing.T, raw, vhd string) {
	t.Helper()
	qemu := fixtures.RequireCommand(t, "qemu-img", "qemu-utils")
	out, err := exec.Command(qemu, "compare", "-f", "raw", "-F", "vpc", raw, vhd).CombinedOutput()
	if err != nil {
		t.Fatalf("qemu-img compare: %v\n%s", err, out)
	}
}

func TestPrepareRefusesWhatItCannotConvert(t *testing.T) {
	data := diskData()
	xenFrom := func(from string) stemcell.Target {
		return stemcell.Target{Hypervisor: "XenServer", Format: "VHD", From: from}
	}
	for _, c := range []struct {
		name   string
		image  []byte
		target stemcell.Target
		want   string
	}{
		{"qcow2 declared raw", testimages.OpenStackTgz(testimages.QCOW2Of(data)), xenFrom("RAW"), "its root.img is QCOW2 data, not the RAW"},
		{"raw declared qcow2", testimages.OpenStackTgz(data), xenFrom("QCOW2"), "its root.img: not a QCOW2 image"},
		{"a VHD declared qcow2", testimages.VHD(4 << 20), xenFrom("QCOW2"), "its content is VHD data"},
		{"truncated tgz", testimages.OpenStackTgz(data)[:2000], xenFrom("RAW"), "ends before its size says"},
		{"no root.img", testimages.Gzip(testimages.Tar(testimages.Entry{Name: "other", Data: data})), xenFrom("RAW"), "no root.img"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			img, err := stemcell.Prepare(write(t, "image", c.image), c.target, tmp)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Prepare = %+v, %v; want %q", img, err, c.want)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("a refused conversion left %v", left)
			}
		})
	}
}
