package diskimage

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The QCOW2 reading follows qemu's format description
// (docs/interop/qcow2.txt): a header, the active L1 table, L2 tables of a
// cluster each, and data clusters that are plain, all-zero (version 3) or
// deflate-compressed. It reads what qemu-img convert and the stemcell
// builder write; images it cannot read as the guest would see them
// (backing files, encryption, external data files, extended L2 entries,
// zstd compression) are refused by name.
const (
	qcow2Magic        = "QFI\xfb"
	offsetMask        = 0x00fffffffffffe00 // bits 9-55: L1 and standard L2 entries
	flagCompressed    = 1 << 62
	flagZero          = 1 // standard L2 entry, version 3
	minClusterBits    = 9
	maxClusterBits    = 21
	maxL1Bytes        = 32 << 20 // qemu's QCOW_MAX_L1_SIZE
	v3HeaderMin       = 104
	incompatDirty     = 1 << 0
	incompatCorrupt   = 1 << 1
	incompatDataFile  = 1 << 2
	incompatCompType  = 1 << 3
	incompatExtL2     = 1 << 4
	compressionZlib   = 0
	compressionTypeAt = 104
)

// QCOW2 is an open QCOW2 image, read as the guest sees its disk.
type QCOW2 struct {
	f           io.ReaderAt
	fileSize    int64
	size        int64
	version     uint32
	clusterBits uint
	l1          []uint64
	l2          []uint64 // the L2 table read last, at l2At (0: none)
	l2At        uint64
	raw         []byte // a cluster read from the file: an L2 table
	// cluster is the compressed cluster inflated last, from clusterAt
	// when inflated; it, packed and inflate are reused for the next one.
	cluster   []byte
	clusterAt uint64
	inflated  bool
	packed    []byte
	src       bytes.Reader
	inflate   io.ReadCloser
}

// OpenQCOW2 reads the header and the L1 table of the image in f, of
// fileSize bytes.
func OpenQCOW2(f io.ReaderAt, fileSize int64) (*QCOW2, error) {
	h := make([]byte, v3HeaderMin+1)
	if n, err := f.ReadAt(h, 0); n < 72 {
		return nil, fmt.Errorf("too short for a QCOW2 header: %w", orEOF(err))
	}
	if string(h[:4]) != qcow2Magic {
		return nil, errors.New("not a QCOW2 image (no QFI magic)")
	}
	q := &QCOW2{f: f, fileSize: fileSize, version: binary.BigEndian.Uint32(h[4:]),
		clusterBits: uint(binary.BigEndian.Uint32(h[20:])), size: int64(binary.BigEndian.Uint64(h[24:]))}
	if err := q.checkHeader(h); err != nil {
		return nil, err
	}
	return q, q.readL1(binary.BigEndian.Uint32(h[36:]), binary.BigEndian.Uint64(h[40:]))
}

// Size is the disk's virtual size in bytes.
func (q *QCOW2) Size() int64 { return q.size }

func (q *QCOW2) checkHeader(h []byte) error {
	switch {
	case q.version != 2 && q.version != 3:
		return fmt.Errorf("QCOW2 version %d is not 2 or 3", q.version)
	case binary.BigEndian.Uint64(h[8:]) != 0:
		return errors.New("the QCOW2 image has a backing file: a stemcell's image must stand alone")
	case q.clusterBits < minClusterBits || q.clusterBits > maxClusterBits:
		return fmt.Errorf("QCOW2 cluster bits %d are outside 9-21", q.clusterBits)
	case binary.BigEndian.Uint32(h[32:]) != 0:
		return errors.New("the QCOW2 image is encrypted")
	case q.size < 0:
		return fmt.Errorf("QCOW2 virtual size %d is negative", q.size)
	}
	if q.version == 2 {
		return nil
	}
	return q.checkFeatures(h)
}

// checkFeatures refuses the version 3 features that change what a read
// means; a dirty image only has stale refcounts, which reading ignores.
func (q *QCOW2) checkFeatures(h []byte) error {
	incompat := binary.BigEndian.Uint64(h[72:])
	headerLen := binary.BigEndian.Uint32(h[100:])
	switch {
	case headerLen < v3HeaderMin:
		return fmt.Errorf("QCOW2 version 3 header length %d is under %d", headerLen, v3HeaderMin)
	case incompat&incompatCorrupt != 0:
		return errors.New("the QCOW2 image is marked corrupt")
	case incompat&incompatDataFile != 0:
		return errors.New("the QCOW2 image keeps its data in an external file")
	case incompat&incompatExtL2 != 0:
		return errors.New("the QCOW2 image has extended L2 entries (subclusters), which this reader does not read")
	case incompat&incompatCompType != 0 && (headerLen <= compressionTypeAt || h[compressionTypeAt] != compressionZlib):
		return errors.New("the QCOW2 image is compressed with zstd; convert it with qemu-img -o compression_type=zlib")
	case incompat&^(incompatDirty|incompatCompType) != 0:
		return fmt.Errorf("the QCOW2 image has incompatible features %#x this reader does not know", incompat)
	}
	return nil
}

func (q *QCOW2) readL1(entries uint32, at uint64) error {
	perL2 := int64(1) << (2*q.clusterBits - 3) // bytes one L2 table maps
	need := (q.size + perL2 - 1) / perL2
	switch {
	case int64(entries) < need:
		return fmt.Errorf("the QCOW2 L1 table has %d entries, too few for its %d bytes", entries, q.size)
	case int64(entries)*8 > maxL1Bytes:
		return fmt.Errorf("the QCOW2 L1 table has %d entries, more than qemu allows", entries)
	case at%(1<<q.clusterBits) != 0 || int64(at)+8*int64(entries) > q.fileSize:
		return errors.New("the QCOW2 L1 table lies outside the file: it is truncated or corrupt")
	}
	raw := make([]byte, 8*need)
	if _, err := q.f.ReadAt(raw, int64(at)); err != nil {
		return fmt.Errorf("reading the QCOW2 L1 table: %w", err)
	}
	q.l1 = make([]uint64, need)
	for i := range q.l1 {
		q.l1[i] = binary.BigEndian.Uint64(raw[8*i:])
	}
	return nil
}

// NewReader reads the disk from its start, in order.
func (q *QCOW2) NewReader() io.Reader { return &qcow2Reader{q: q} }

type qcow2Reader struct {
	q   *QCOW2
	pos int64
}

// Read fills p with at most the rest of the current cluster.
func (r *qcow2Reader) Read(p []byte) (int, error) {
	q := r.q
	if r.pos >= q.size {
		return 0, io.EOF
	}
	csize := int64(1) << q.clusterBits
	in := r.pos & (csize - 1)
	n := min(int64(len(p)), csize-in, q.size-r.pos)
	if err := q.readCluster(uint64(r.pos>>q.clusterBits), in, p[:n]); err != nil {
		return 0, fmt.Errorf("the QCOW2 image at disk offset %d: %w", r.pos, err)
	}
	r.pos += n
	return int(n), nil
}

// readCluster fills p from offset in of the disk's cluster idx.
func (q *QCOW2) readCluster(idx uint64, in int64, p []byte) error {
	entry, err := q.l2Entry(idx)
	if err != nil {
		return err
	}
	switch {
	case entry&flagCompressed != 0:
		return q.readCompressed(entry, in, p)
	case q.version == 3 && entry&flagZero != 0, entry&offsetMask == 0:
		clear(p) // all zeros, or unallocated with no backing file
		return nil
	}
	return q.readAt(p, int64(entry&offsetMask)+in)
}

// l2Entry is the L2 entry of cluster idx; 0 (unallocated) when its L2
// table is.
func (q *QCOW2) l2Entry(idx uint64) (uint64, error) {
	bits := q.clusterBits - 3 // log2 of entries per L2 table
	l2At := q.l1[idx>>bits] & offsetMask
	if l2At == 0 {
		return 0, nil
	}
	if q.l2At != l2At { // l2At is 0 until a table is read whole
		q.raw = grow(q.raw, 1<<q.clusterBits)
		q.l2, q.l2At = q.l2[:0], 0
		if err := q.readAt(q.raw, int64(l2At)); err != nil {
			return 0, fmt.Errorf("reading an L2 table: %w", err)
		}
		for i := 0; i < len(q.raw); i += 8 {
			q.l2 = append(q.l2, binary.BigEndian.Uint64(q.raw[i:]))
		}
		q.l2At = l2At
	}
	return q.l2[idx&(1<<bits-1)], nil
}

// readCompressed inflates the cluster (raw deflate, as qemu's zlib
// compression writes it) once and serves reads within it from memory.
func (q *QCOW2) readCompressed(entry uint64, in int64, p []byte) error {
	shift := 62 - (q.clusterBits - 8)
	at := entry & (1<<shift - 1)
	if !q.inflated || q.clusterAt != at {
		if err := q.inflateCluster(entry, at, shift); err != nil {
			return err
		}
	}
	copy(p, q.cluster[in:])
	return nil
}

// inflateCluster reads the compressed cluster at file offset at and
// inflates it into q.cluster, which it must fill.
func (q *QCOW2) inflateCluster(entry, at uint64, shift uint) error {
	sectors := (entry>>shift)&(1<<(q.clusterBits-8)-1) + 1
	length := min(int64(sectors)*sector-int64(at%sector), q.fileSize-int64(at))
	if length <= 0 {
		return errors.New("a compressed cluster lies past the end of the file: it is truncated")
	}
	q.inflated = false
	q.packed = grow(q.packed, length)
	if err := q.readAt(q.packed, int64(at)); err != nil {
		return err
	}
	q.src.Reset(q.packed)
	if q.inflate == nil {
		q.inflate = flate.NewReader(&q.src)
	} else if err := q.inflate.(flate.Resetter).Reset(&q.src, nil); err != nil {
		return err
	}
	q.cluster = grow(q.cluster, 1<<q.clusterBits)
	if _, err := io.ReadFull(q.inflate, q.cluster); err != nil {
		return fmt.Errorf("inflating a compressed cluster: %w", err)
	}
	q.clusterAt, q.inflated = at, true
	return nil
}

// grow is b with length n, reallocated only when too small.
func grow(b []byte, n int64) []byte {
	if int64(cap(b)) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// readAt reads p at off, inside the file.
func (q *QCOW2) readAt(p []byte, off int64) error {
	if off+int64(len(p)) > q.fileSize {
		return fmt.Errorf("data at file offset %d lies past the end of the file (%d bytes): it is truncated", off, q.fileSize)
	}
	_, err := q.f.ReadAt(p, off)
	return err
}

func orEOF(err error) error {
	if err == nil {
		return io.ErrUnexpectedEOF
	}
	return err
}
