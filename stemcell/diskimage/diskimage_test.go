package diskimage_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/fixtures"
	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell/diskimage"
)

// qemu-img, Debian's qemu-utils, is the independent reader: it checks
// the footer and header checksums and the BAT as it opens a VHD (qemu's
// block/vpc.c), compares what a guest reads with the source, and maps
// which blocks are allocated. It has no `check` for VHD ("This image
// format does not support checks"); info, compare and map read it whole.
func qemuImg(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command(fixtures.RequireCommand(t, "qemu-img", "qemu-utils"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("qemu-img %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// content is how a test disk is filled.
type content int

const (
	sparse content = iota // a few written stretches, the rest zeros
	dense                 // every byte written
)

func (c content) String() string { return [...]string{"sparse", "dense"}[c] }

// rawDisk writes a raw disk of size bytes and returns its path.
func rawDisk(t testing.TB, size int64, c content) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "disk.raw")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(size), uint64(c)))
	write := func(at, n int64) {
		n = min(n, size-at) // the disk ends where it ends
		b := make([]byte, max(n, 0))
		for i := range b {
			b[i] = byte(rng.IntN(255) + 1)
		}
		if _, err := f.WriteAt(b, at); err != nil {
			t.Fatal(err)
		}
	}
	if c == dense {
		write(0, size)
	} else {
		// The first sector, a stretch across the second block's end, and
		// the disk's last bytes: blocks 0, 1, 2 (if there) and the last are
		// data.
		write(0, 512)
		write(2*diskimage.BlockSize-1000, 3000)
		write(size-100, 100)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// toVHD converts the disk at src (raw or QCOW2) with the package.
func toVHD(t testing.TB, src, format string) (string, diskimage.VHDStats) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "disk.vhd"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var stats diskimage.VHDStats
	if format == "raw" {
		stats, err = diskimage.WriteDynamicVHD(out, in, st.Size())
	} else {
		q, qerr := diskimage.OpenQCOW2(in, st.Size())
		if qerr != nil {
			t.Fatal(qerr)
		}
		stats, err = diskimage.WriteDynamicVHD(out, q.NewReader(), q.Size())
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out.Name()); err != nil || fi.Size() != stats.FileSize {
		t.Fatalf("the VHD is %v bytes (%v); WriteDynamicVHD said %d", fi.Size(), err, stats.FileSize)
	}
	return out.Name(), stats
}

// dataBlocks are the indexes of the 2 MiB blocks of the raw disk at p
// that hold a byte other than zero.
func dataBlocks(t testing.TB, p string) []int64 {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []int64
	for i := int64(0); i*diskimage.BlockSize < int64(len(raw)); i++ {
		b := raw[i*diskimage.BlockSize : min(int64(len(raw)), (i+1)*diskimage.BlockSize)]
		if slices.ContainsFunc(b, func(c byte) bool { return c != 0 }) {
			blocks = append(blocks, i)
		}
	}
	return blocks
}

// allocatedBlocks are the blocks qemu-img map finds data in.
func allocatedBlocks(t testing.TB, vhd string) []int64 {
	t.Helper()
	var extents []struct {
		Start  int64 `json:"start"`
		Length int64 `json:"length"`
		Data   bool  `json:"data"`
	}
	if err := json.Unmarshal([]byte(qemuImg(t, "map", "--output=json", "-f", "vpc", vhd)), &extents); err != nil {
		t.Fatal(err)
	}
	var blocks []int64
	for _, e := range extents {
		for at := e.Start; e.Data && at < e.Start+e.Length; at += diskimage.BlockSize {
			blocks = append(blocks, at/diskimage.BlockSize)
		}
	}
	return blocks
}

// checkVHD has qemu-img open the VHD (its size from the footer), compare
// it with the source as a guest reads both, and find data in exactly the
// blocks of the source that hold some.
func checkVHD(t *testing.T, vhd, src, srcFormat, raw string, size int64) {
	t.Helper()
	var info struct {
		Format      string `json:"format"`
		VirtualSize int64  `json:"virtual-size"`
	}
	if err := json.Unmarshal([]byte(qemuImg(t, "info", "--output=json", "-f", "vpc", vhd)), &info); err != nil {
		t.Fatal(err)
	}
	if want := (size + 511) / 512 * 512; info.Format != "vpc" || info.VirtualSize != want {
		t.Errorf("qemu-img info: %+v, want a vpc image of %d bytes", info, want)
	}
	if out := qemuImg(t, "compare", "-f", srcFormat, "-F", "vpc", src, vhd); !strings.Contains(out, "Images are identical") {
		t.Errorf("qemu-img compare: %s", out)
	}
	if got, want := allocatedBlocks(t, vhd), dataBlocks(t, raw); !slices.Equal(got, want) {
		t.Errorf("allocated blocks %v, want the data blocks %v", got, want)
	}
}

// sizes: whole blocks, and sizes that end inside a block, one of them not a
// whole sector.
var sizes = []int64{4 << 20, 11<<20 + 512, 7<<20 + 4096, 3<<20 + 100}

func TestRawToVHDReadsBackIdentical(t *testing.T) {
	for _, size := range sizes {
		for _, c := range []content{sparse, dense} {
			t.Run(fmt.Sprintf("%d/%s", size, c), func(t *testing.T) {
				raw := rawDisk(t, size, c)
				vhd, st := toVHD(t, raw, "raw")
				checkVHD(t, vhd, raw, "raw", raw, size)
				if c == sparse && st.Blocks > 4 && st.Allocated != 4 {
					t.Errorf("no block skipped: %+v", st)
				}
			})
		}
	}
}

// qcow2Options are QCOW2s as qemu-img writes them: the default (version
// 3, 64 KiB clusters), version 2, compressed clusters, small clusters
// (several L2 tables) and clusters as big as a VHD block.
var qcow2Options = []struct {
	name string
	args []string
}{
	{"default", nil},
	{"v2", []string{"-o", "compat=0.10"}},
	{"compressed", []string{"-c"}},
	{"4k-clusters", []string{"-o", "cluster_size=4096"}},
	{"2m-clusters", []string{"-o", "cluster_size=2M"}},
}

func TestQCOW2ToVHDReadsBackIdentical(t *testing.T) {
	for _, o := range qcow2Options {
		for _, size := range sizes[1:3] { // sizes that end inside a block, in whole sectors as QCOW2 sizes are
			for _, c := range []content{sparse, dense} {
				t.Run(fmt.Sprintf("%s/%d/%s", o.name, size, c), func(t *testing.T) {
					raw := rawDisk(t, size, c)
					q := filepath.Join(t.TempDir(), "disk.qcow2")
					qemuImg(t, append(append([]string{"convert", "-f", "raw", "-O", "qcow2"}, o.args...), raw, q)...)
					vhd, _ := toVHD(t, q, "qcow2")
					checkVHD(t, vhd, q, "qcow2", raw, size)
				})
			}
		}
	}
}

// Version 3's zero flag on an L2 entry that keeps its cluster's offset
// reads as zeros, not as the cluster's old bytes: the first 1 MiB of a
// dense QCOW2 is flagged here, as qemu flags clusters a guest zeroes.
func TestQCOW2ZeroFlagReadsAsZeros(t *testing.T) {
	size := int64(5 << 20)
	q := filepath.Join(t.TempDir(), "disk.qcow2")
	qemuImg(t, "convert", "-f", "raw", "-O", "qcow2", rawDisk(t, size, dense), q)
	img, err := os.ReadFile(q)
	if err != nil {
		t.Fatal(err)
	}
	l2 := binary.BigEndian.Uint64(img[binary.BigEndian.Uint64(img[40:]):]) & 0x00fffffffffffe00
	for i := range 16 { // 16 clusters of 64 KiB
		e := img[l2+8*uint64(i):]
		binary.BigEndian.PutUint64(e, binary.BigEndian.Uint64(e)|1)
	}
	if err := os.WriteFile(q, img, 0o600); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(t.TempDir(), "as-qemu-reads-it.raw")
	qemuImg(t, "convert", "-f", "qcow2", "-O", "raw", q, raw)
	vhd, _ := toVHD(t, q, "qcow2")
	checkVHD(t, vhd, q, "qcow2", raw, size)
}

// Images that cannot be read as the guest sees them are refused by name,
// and a source shorter than its size fails the write.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.qcow2")
	qemuImg(t, "create", "-f", "qcow2", base, "4M")
	overlay := filepath.Join(dir, "overlay.qcow2")
	qemuImg(t, "create", "-f", "qcow2", "-b", base, "-F", "qcow2", overlay)
	full := filepath.Join(dir, "full.qcow2")
	qemuImg(t, "convert", "-f", "raw", "-O", "qcow2", rawDisk(t, 4<<20, dense), full)
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.qcow2")
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{overlay, "has a backing file"},
		{truncated, "past the end of the file"},
		{rawDisk(t, 4<<20, dense), "not a QCOW2 image"},
	} {
		if err := convertQCOW2(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", filepath.Base(c.path), err, c.want)
		}
	}
	short := strings.NewReader(strings.Repeat("x", 3<<20))
	if _, err := diskimage.WriteDynamicVHD(discard{}, short, 4<<20); err == nil || !strings.Contains(err.Error(), "ends before") {
		t.Errorf("a source shorter than its size: %v", err)
	}
}

func convertQCOW2(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	q, err := diskimage.OpenQCOW2(f, st.Size())
	if err != nil {
		return err
	}
	_, err = diskimage.WriteDynamicVHD(discard{}, q.NewReader(), q.Size())
	return err
}

// discard is an io.WriterAt that keeps nothing.
type discard struct{}

func (discard) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }
