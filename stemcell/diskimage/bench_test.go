package diskimage_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell/diskimage"
)

// pattern is a disk of size bytes whose blocks alternate data and zeros,
// generated as it is read: a source as big as wanted with no file.
type pattern struct{ pos, size int64 }

// dataBlock is what pattern's data blocks hold.
var dataBlock = func() []byte {
	b := make([]byte, diskimage.BlockSize)
	for i := range b {
		b[i] = byte(i%251) + 1
	}
	return b
}()

func (p *pattern) Read(b []byte) (int, error) {
	if p.pos >= p.size {
		return 0, io.EOF
	}
	in := p.pos % diskimage.BlockSize
	n := int(min(int64(len(b)), p.size-p.pos, diskimage.BlockSize-in))
	if p.pos/diskimage.BlockSize%2 == 0 {
		copy(b[:n], dataBlock[in:])
	} else {
		clear(b[:n])
	}
	p.pos += int64(n)
	return n, nil
}

// BenchmarkVHDConversion converts raw disks (generated as read, no file)
// and QCOW2s (qemu-img made from the same pattern, compressed and not) of
// growing size to a dynamic VHD, and prints a Markdown table: the bytes
// allocated per conversion (B/op) and the largest live heap seen stay
// the same whatever the disk's size, one block's buffer and the BAT. Run
// with: make bench-vhd
func BenchmarkVHDConversion(b *testing.B) {
	type row struct {
		source    string
		size      int64
		took      time.Duration
		allocated uint64
		peak      uint64
	}
	var rows []row
	measure := func(source string, size int64, convert func() error) {
		b.Run(fmt.Sprintf("%s/%dMiB", source, size>>20), func(b *testing.B) {
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			peak := heapPeak(b, func() {
				if err := convert(); err != nil {
					b.Fatal(err)
				}
			})
			took := time.Since(start) / time.Duration(b.N)
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			rows = append(rows, row{source, size, took, (after.TotalAlloc - before.TotalAlloc) / uint64(b.N), peak})
		})
	}
	for _, size := range []int64{256 << 20, 1 << 30, 4 << 30} {
		measure("raw", size, func() error {
			_, err := diskimage.WriteDynamicVHD(discard{}, &pattern{size: size}, size)
			return err
		})
	}
	for _, compressed := range []bool{false, true} {
		for _, size := range []int64{256 << 20, 1 << 30} {
			q := patternQCOW2(b, size, compressed)
			source := "QCOW2"
			if compressed {
				source = "QCOW2, compressed"
			}
			measure(source, size, func() error { return convertQCOW2(q) })
		}
	}
	fmt.Print("\nA disk whose 2 MiB blocks alternate data and zeros, converted to a dynamic VHD (written to no file):\n\n")
	fmt.Println("| source | disk | seconds | bytes allocated | peak live heap |")
	fmt.Println("|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %d MiB | %.2f | %.2f MiB | %.2f MiB |\n", r.source, r.size>>20, r.took.Seconds(),
			float64(r.allocated)/(1<<20), float64(r.peak)/(1<<20))
	}
}

func patternQCOW2(b *testing.B, size int64, compressed bool) string {
	b.Helper()
	dir := b.TempDir()
	raw := filepath.Join(dir, "disk.raw")
	f, err := os.Create(raw)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(f, &pattern{size: size}); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	q := filepath.Join(dir, "disk.qcow2")
	args := []string{"convert", "-f", "raw", "-O", "qcow2", raw, q}
	if compressed {
		args = append(args, "-c")
	}
	qemuImg(b, args...)
	if err := os.Remove(raw); err != nil {
		b.Fatal(err)
	}
	return q
}

// heapPeak runs f b.N times, sampling the live heap every few
// milliseconds, and returns the largest sample above the heap before.
func heapPeak(b *testing.B, f func()) uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var top uint64
		var s runtime.MemStats
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&s)
			top = max(top, s.HeapAlloc-min(s.HeapAlloc, base))
			select {
			case <-stop:
				peak <- top
				return
			case <-tick.C:
			}
		}
	}()
	b.ResetTimer()
	for range b.N {
		f()
	}
	b.StopTimer()
	close(stop)
	return <-peak
}
