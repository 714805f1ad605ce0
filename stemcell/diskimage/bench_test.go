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

// BenchmarkWriteDynamicVHD converts raw disks of growing size: the bytes
// allocated per conversion (B/op) and the largest heap seen stay the same
// whatever the disk's size, one block's buffer and the BAT. Run with:
// go test ./stemcell/diskimage -run '^$' -bench . -benchtime 1x
func BenchmarkWriteDynamicVHD(b *testing.B) {
	for _, size := range []int64{256 << 20, 1 << 30, 4 << 30} {
		b.Run(fmt.Sprintf("raw-%dMiB", size>>20), func(b *testing.B) {
			b.ReportAllocs()
			peak := heapPeak(b, func() {
				if _, err := diskimage.WriteDynamicVHD(discard{}, &pattern{size: size}, size); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// BenchmarkQCOW2ToVHD converts QCOW2s (made by qemu-img from the same
// pattern, compressed and not) of growing size to a VHD file.
func BenchmarkQCOW2ToVHD(b *testing.B) {
	for _, compressed := range []bool{false, true} {
		for _, size := range []int64{256 << 20, 1 << 30} {
			q := patternQCOW2(b, size, compressed)
			b.Run(fmt.Sprintf("compressed=%t/%dMiB", compressed, size>>20), func(b *testing.B) {
				b.ReportAllocs()
				peak := heapPeak(b, func() {
					if err := convertQCOW2(q); err != nil {
						b.Fatal(err)
					}
				})
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			})
		}
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
