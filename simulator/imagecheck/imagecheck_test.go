package imagecheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
)

func writeImage(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDescribeLikeFile(t *testing.T) {
	ovaBz2, err := testimages.Bzip2(testimages.OVA())
	if err != nil {
		t.Fatal(err)
	}
	iso := make([]byte, 40000)
	copy(iso[32769:], "CD001")
	mbr := make([]byte, 512)
	mbr[510], mbr[511] = 0x55, 0xaa
	for _, c := range []struct {
		data []byte
		z    bool
		want string
	}{
		{testimages.VHD(1 << 30), false, "Microsoft Disk Image, Virtual Server or Virtual PC"},
		{testimages.QCOW2(1 << 30), false, "QEMU QCOW2 Image (v3), 1073741824 bytes"},
		{testimages.OVA(), false, "POSIX tar archive"},
		{iso, false, "ISO 9660 CD-ROM filesystem data"},
		{mbr, false, "DOS/MBR boot sector"},
		{nil, false, "empty"},
		{[]byte("hello"), false, "data"},
		{testimages.Gzip(testimages.QCOW2(1 << 20)), false, "gzip compressed data"},
		{testimages.Gzip(testimages.QCOW2(1 << 20)), true, "QEMU QCOW2 Image (v3), 1048576 bytes (gzip compressed data)"},
		{testimages.Zip("a.vhd", testimages.VHD(1<<20)), true, "Microsoft Disk Image, Virtual Server or Virtual PC (Zip archive data, at least v2.0 to extract)"},
		{ovaBz2, true, "POSIX tar archive (bzip2 compressed data, block size = 100k)"},
	} {
		got, err := describeFile(writeImage(t, "img", c.data), c.z)
		if err != nil || got != c.want {
			t.Errorf("describe = %q, %v; want %q", got, err, c.want)
		}
	}
}

func TestExtensionAccepts(t *testing.T) {
	for _, c := range []struct {
		desc, name string
		ok         bool
	}{
		{"Microsoft Disk Image, Virtual Server or Virtual PC", "x.vhd", true},
		{"Microsoft Disk Image, Virtual Server or Virtual PC (bzip2 compressed data, block size = 900k)", "x.VHD.BZ2", true},
		{"Microsoft Disk Image, Virtual Server or Virtual PC", "x.qcow2", false},
		{"QEMU QCOW2 Image (v3), 1 bytes", "x.qcow2", true},
		{"QEMU QCOW2 Image (v3), 1 bytes", "x.img", true},
		{"data", "x.raw", true},
		{"DOS/MBR boot sector", "x.img", true},
		{"QEMU QCOW2 Image (v3), 1 bytes", "x.raw", false},
		{"POSIX tar archive", "x.ova", true},
		{"POSIX tar archive", "x.vhd", false},
		{"ISO 9660 CD-ROM filesystem data", "x.iso", true},
		{"bzip2 compressed data, block size = 900k", "x.vhd", false},
	} {
		if got := extensionAccepts(c.desc, c.name); got != c.ok {
			t.Errorf("extensionAccepts(%q, %q) = %v", c.desc, c.name, got)
		}
	}
}

func TestVerifyImage(t *testing.T) {
	vhd := testimages.VHD(4 << 30)
	ovaGz := testimages.Gzip(testimages.OVA())
	for _, c := range []struct {
		name, format string
		data         []byte
		size         int64
		err          string
	}{
		{"a.vhd", "VHD", vhd, 4 << 30, ""},
		{"a.vhd.gz", "VHD", testimages.Gzip(vhd), 4 << 30, ""},
		{"a.vhd.zip", "VHD", testimages.Zip("a.vhd", vhd), 4 << 30, ""},
		{"a.ova.gz", "OVA", ovaGz, int64(len(testimages.OVA())), ""},
		{"a.raw", "RAW", make([]byte, 12345), 12345, ""},
		{"a.vhd", "VHD", testimages.QCOW2(1 << 20), 0, "a.vhd is not a valid VHD: no \"conectix\" cookie at offset 0 (found QEMU QCOW2 Image (v3), 1048576 bytes)"},
		{"a.vhd", "VHD", vhd[:len(vhd)-1], 0, "a.vhd is not a valid VHD: no footer"},
		{"a.vhd.gz", "VHD", testimages.Gzip(vhd)[:40], 0, "gzip data invalid: unexpected EOF"},
		{"a.ova.gz", "OVA", ovaGz[:len(ovaGz)-30], 0, "gzip data invalid"},
		{"a.vhd.zip", "VHD", testimages.Zip("a.vhd", vhd)[:100], 0, "zip data invalid"},
		{"a.vhd", "VHD", testimages.Gzip(vhd), 0, "a.vhd holds gzip compressed data but its name has no .gz extension"},
		{"a.qcow2", "QCOW2", append([]byte("QFI\xfb\x00\x00\x00\x07"), make([]byte, 100)...), 0, "a.qcow2 is not a valid QCOW2 image: unsupported version 7"},
		{"a.ova", "OVA", testimages.OVA()[:1000], 0, "a.ova is not a valid OVA"},
	} {
		info, err := Verify(writeImage(t, "img", c.data), c.name, c.format)
		switch {
		case c.err == "" && (err != nil || info.VirtualSize != c.size):
			t.Errorf("%s: %+v, %v; want size %d", c.name, info, err, c.size)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
}

func TestVerifyXzFraming(t *testing.T) {
	if _, err := exec.LookPath("xz"); err != nil {
		t.Fatal("xz (Debian package xz-utils) is needed to make the test image")
	}
	cmd := exec.Command("xz", "-c", "-0")
	cmd.Stdin = strings.NewReader(string(testimages.QCOW2(1 << 20)))
	xz, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	p := writeImage(t, "img", xz)
	if found, err := CheckFileType(p, "a.qcow2.xz"); err != nil || found != "" {
		t.Fatalf("CheckFileType = %q, %v", found, err)
	}
	if _, err := Verify(p, "a.qcow2.xz", "QCOW2"); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(writeImage(t, "cut", xz[:len(xz)-5]), "a.qcow2.xz", "QCOW2"); err == nil {
		t.Fatal("a truncated xz stream passed")
	}
}
