package stemcell

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
)

// incompressible is n bytes bzip2 cannot shrink, so that they fill blocks
// (100 kB each at bzip2 -1, as testimages.Bzip2 compresses).
func incompressible(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

func bzFile(t *testing.T, data ...[]byte) (*os.File, int64) {
	t.Helper()
	var all []byte
	for _, d := range data {
		out, err := testimages.Bzip2(d)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, out...) // several data: a file of several streams, as pbzip2 writes
	}
	return openData(t, all)
}

// openData is a file holding data, open for reading until the test ends.
func openData(t *testing.T, data []byte) (*os.File, int64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "image.bz2")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, int64(len(data))
}

// The end of bzip2 data is read from its last blocks alone: one block, many
// blocks, a last block too short for the tail (the one before it is decoded
// too), around each block boundary.
func TestBzip2TailFromTheLastBlocks(t *testing.T) {
	const block = 99981 // bytes a bzip2 -1 block holds (100000 - 19), no run of 4 equal bytes in them
	for _, n := range []int{600, 3 * block, 2*block + 100, 2*block + 511, 2*block + 512, 2*block + 513, 2*block - 100} {
		data := incompressible(int64(n), n)
		f, size := bzFile(t, data)
		tail, err := bzip2Tail(f, size, 512)
		if err != nil || !bytes.Equal(tail, data[n-512:]) {
			t.Errorf("%d bytes: the tail read from the last blocks is wrong (%v)", n, err)
		}
	}
}

// What the last blocks cannot tell on their own, the whole stream does:
// a last stream shorter than the tail. What is not bzip2's whole end is
// refused at once.
func TestBzip2DataTail(t *testing.T) {
	data := incompressible(1, 150000)
	f, size := bzFile(t, data[:149900], data[149900:])
	if _, err := bzip2Tail(f, size, 512); !errors.Is(err, errTailUnknown) {
		t.Fatalf("a last stream of 100 bytes: %v, want errTailUnknown", err)
	}
	if tail, err := bzip2DataTail(f, size, 512); err != nil || !bytes.Equal(tail, data[len(data)-512:]) {
		t.Fatalf("decoding the whole: %v", err)
	}
	whole, _ := os.ReadFile(f.Name())
	for name, broken := range map[string][]byte{
		"truncated":       whole[:len(whole)-20],
		"trailing zeroes": append(append([]byte(nil), whole...), 0, 0, 0, 0),
	} {
		g, size := openData(t, broken)
		_, err := bzip2DataTail(g, size, 512)
		if err == nil || !strings.Contains(err.Error(), "does not end with bzip2's end-of-stream marker") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
