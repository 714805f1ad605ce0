package stemcell

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"os"
)

// bzip2's markers are 48-bit magics at any bit offset: each block begins
// with one, and each stream ends with another, its 32-bit CRC and at most
// 7 bits of padding to a byte (the format compress/bzip2 reads).
const (
	bzBlockMagic = 0x314159265359
	bzFinalMagic = 0x177245385090
	// bzTailWindow is how much of a file's end is searched for its last
	// blocks: a block holds at most 900 kB before compression and grows
	// little when it does not compress, so the last two fit in it whole.
	bzTailWindow = 2 << 20
)

// errTailUnknown says the last blocks of a bzip2 stream did not decode on
// their own: a magic that is only compressed data, a last block shorter
// than the tail wanted whose neighbour lies in another stream. The whole
// stream is decoded instead.
var errTailUnknown = errors.New("the end of the bzip2 data did not decode on its own")

// bzip2DataTail is the last n bytes the bzip2 file f (size bytes)
// decompresses to. Decompressing a stemcell image whole takes minutes
// (compress/bzip2 decoded 100 MB of it into 240 MB in 51 s), so only the
// blocks at its end are decoded, each as a stream of its own; the whole
// stream only when that fails. A file that does not end with bzip2's
// end-of-stream marker is truncated (or has something after the stream),
// which is said at once.
func bzip2DataTail(f *os.File, size int64, n int) ([]byte, error) {
	tail, err := bzip2Tail(f, size, n)
	if !errors.Is(err, errTailUnknown) {
		return tail, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	keep := &tailKeeper{n: n}
	if _, err := io.Copy(keep, bzip2.NewReader(bufio.NewReaderSize(f, 256<<10))); err != nil {
		return nil, fmt.Errorf("its bzip2 data breaks (%w): the file is truncated or corrupt", err)
	}
	return keep.bytes(), nil
}

// bzip2Tail reads the end of f for its markers and decodes its last
// blocks, last first, until they hold n bytes.
func bzip2Tail(f io.ReaderAt, size int64, n int) ([]byte, error) {
	w := min(size, bzTailWindow)
	buf := make([]byte, w)
	if _, err := f.ReadAt(buf, size-w); err != nil {
		return nil, fmt.Errorf("reading the end of its bzip2 data: %w", err)
	}
	marks := bzMarkers(buf)
	last := len(marks) - 1
	if last < 0 || !marks[last].final || (marks[last].bit+48+32+7)/8 != int64(len(buf)) {
		return nil, errors.New("its bzip2 data does not end with bzip2's end-of-stream marker: the file is truncated, " +
			"or something follows the compressed stream")
	}
	var tail []byte
	end := marks[last].bit
	for i := last - 1; i >= 0 && len(tail) < n; i-- {
		if marks[i].final {
			return nil, errTailUnknown
		}
		out, err := decodeBlock(buf, marks[i].bit, end, n)
		if err != nil {
			return nil, errTailUnknown
		}
		tail = lastBytes(append(out, tail...), n)
		end = marks[i].bit
	}
	if len(tail) < n {
		return nil, errTailUnknown
	}
	return tail, nil
}

// bzMark is a marker's first bit in the window, and whether it ends a
// stream.
type bzMark struct {
	bit   int64
	final bool
}

// bzMarkers finds every marker in buf, in order.
func bzMarkers(buf []byte) []bzMark {
	const mask = 1<<48 - 1
	var marks []bzMark
	var reg uint64
	for i, b := range buf {
		for j := 7; j >= 0; j-- {
			reg = reg<<1 | uint64(b>>j&1)
			bit := int64(i)*8 + int64(7-j)
			if bit < 47 {
				continue
			}
			switch reg & mask {
			case bzBlockMagic:
				marks = append(marks, bzMark{bit: bit - 47})
			case bzFinalMagic:
				marks = append(marks, bzMark{bit: bit - 47, final: true})
			}
		}
	}
	return marks
}

// decodeBlock decodes the block whose bits are buf's [start, end) as a
// stream of its own: a header, the block, the end-of-stream marker and the
// stream's CRC, which for one block is the block's (the 32 bits after its
// magic). compress/bzip2 checks the block's CRC, so garbage does not pass.
// The last n bytes decoded are returned.
func decodeBlock(buf []byte, start, end int64, n int) ([]byte, error) {
	var w bitWriter
	for _, c := range []byte("BZh9") { // 9: the largest block size, which fits any block
		w.write(uint64(c), 8)
	}
	for bit := start; bit < end; bit++ {
		w.write(uint64(buf[bit/8]>>(7-bit%8)&1), 1)
	}
	w.write(bzFinalMagic, 48)
	w.write(readBits(buf, start+48, 32), 32)
	keep := &tailKeeper{n: n}
	if _, err := io.Copy(keep, bzip2.NewReader(bytes.NewReader(w.flush()))); err != nil {
		return nil, err
	}
	return keep.bytes(), nil
}

// readBits reads k bits of buf from bit offset at, most significant first.
func readBits(buf []byte, at int64, k int) uint64 {
	var v uint64
	for bit := at; bit < at+int64(k) && bit/8 < int64(len(buf)); bit++ {
		v = v<<1 | uint64(buf[bit/8]>>(7-bit%8)&1)
	}
	return v
}

// bitWriter packs bits most significant first, as bzip2 stores them.
type bitWriter struct {
	out  []byte
	acc  byte
	bits uint
}

func (w *bitWriter) write(v uint64, k uint) {
	for i := int(k) - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | byte(v>>uint(i)&1)
		if w.bits++; w.bits == 8 {
			w.out = append(w.out, w.acc)
			w.acc, w.bits = 0, 0
		}
	}
}

// flush pads the last byte with zero bits.
func (w *bitWriter) flush() []byte {
	if w.bits > 0 {
		w.out = append(w.out, w.acc<<(8-w.bits))
		w.acc, w.bits = 0, 0
	}
	return w.out
}

// tailKeeper keeps the last n bytes written to it.
type tailKeeper struct {
	n   int
	buf []byte
}

func (t *tailKeeper) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.n+64<<10 {
		t.buf = lastBytes(t.buf, t.n)
	}
	return len(p), nil
}

func (t *tailKeeper) bytes() []byte { return lastBytes(t.buf, t.n) }

// lastBytes is a copy of b's last n bytes (all of b when shorter).
func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return append([]byte(nil), b...)
}
