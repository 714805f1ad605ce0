// Package diskimage converts bosh.io's OpenStack stemcell images (raw or
// QCOW2) into the dynamic VHD that XenServer boots: a QCOW2 reader and a
// VHD writer, both working through one block at a time, so memory stays
// flat whatever the image's size.
package diskimage

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// The VHD layout written here (Microsoft's Virtual Hard Disk Image Format
// Specification): a copy of the footer, the dynamic disk header, the block
// allocation table (BAT), then each block that holds data as a sector
// bitmap and its 2 MiB, and the footer.
const (
	sector = 512
	// BlockSize is the VHD block: the unit a dynamic VHD allocates, and
	// so the unit in which all-zero stretches of the disk are skipped.
	BlockSize     = 2 << 20
	footerSize    = sector
	headerSize    = 2 * sector
	headerOffset  = footerSize
	batOffset     = headerOffset + headerSize
	bitmapSize    = sector // BlockSize/sector bits, a whole sector
	diskDynamic   = 3
	featuresBit   = 2          // "reserved, always 1"
	formatVersion = 0x00010000 // 1.0
	// maxSize is the largest dynamic VHD qemu opens (VHD_MAX_SECTORS in
	// qemu's block/vpc.c, 2040 GiB), and about the format's own limit.
	maxSize = 0xff000000 * sector
)

// creatorApp is what the footer says made the file: "tap\0", as
// XenServer's own tools write it. qemu's vpc driver takes a disk's size
// from the footer's current size only for the creators it trusts ('tap\0'
// among them, block/vpc.c vpc_open), and from the CHS geometry otherwise,
// which rounds most sizes down.
var creatorApp = [4]byte{'t', 'a', 'p', 0}

// vhdEpoch is where the footer's time stamp counts from.
var vhdEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// VHDStats says what WriteDynamicVHD wrote.
type VHDStats struct {
	FileSize    int64 // the VHD's length in bytes
	VirtualSize int64 // the disk's size as the guest sees it
	Blocks      int   // 2 MiB blocks of the disk
	Allocated   int   // blocks written; the rest were all zeros
}

// WriteDynamicVHD reads a disk of size bytes from src, in order, and
// writes it to out from offset 0 as a dynamic VHD whose all-zero blocks
// are left unallocated. A size that is not a whole number of 512-byte
// sectors is rounded up with zeros. One block is held in memory, plus
// the BAT (4 bytes a block: 10 KiB for a 5 GiB disk).
func WriteDynamicVHD(out io.WriterAt, src io.Reader, size int64) (VHDStats, error) {
	if size <= 0 || size > maxSize {
		return VHDStats{}, fmt.Errorf("a dynamic VHD holds 1 byte to %d GiB; this disk is %d bytes", maxSize>>30, size)
	}
	footer, header, bat := Metadata(size)
	next := batOffset + int64(len(bat)) // where the next allocated block goes
	st := VHDStats{VirtualSize: roundUp(size, sector), Blocks: int(binary.BigEndian.Uint32(header[28:]))}
	buf := make([]byte, bitmapSize+BlockSize)
	fillBitmap(buf[:bitmapSize])
	data := buf[bitmapSize:]
	for i := range st.Blocks {
		if err := readBlock(src, data, size-int64(i)*BlockSize); err != nil {
			return st, fmt.Errorf("reading block %d of %d of the disk: %w", i+1, st.Blocks, err)
		}
		if allZero(data) {
			continue
		}
		if _, err := out.WriteAt(buf, next); err != nil {
			return st, fmt.Errorf("writing the VHD: %w", err)
		}
		binary.BigEndian.PutUint32(bat[4*i:], uint32(next/sector))
		next += int64(len(buf))
		st.Allocated++
	}
	st.FileSize = next + footerSize
	return st, writeMetadata(out, footer, header, bat, next)
}

// Metadata is what a dynamic VHD of a disk of size bytes (rounded up to a
// whole sector) has around its blocks: the footer (also copied at the top),
// the dynamic header and a BAT with no block allocated. Followed by the
// footer again, the three make the VHD of an empty disk.
func Metadata(size int64) (footer, header, bat []byte) {
	virtual := roundUp(size, sector)
	blocks := int((virtual + BlockSize - 1) / BlockSize)
	bat = bytes.Repeat([]byte{0xff}, int(roundUp(int64(4*blocks), sector)))
	return newFooter(virtual), dynamicHeader(blocks), bat
}

// readBlock fills data with the next block of the disk, of which left
// bytes remain: the last block is padded with zeros.
func readBlock(src io.Reader, data []byte, left int64) error {
	n := int64(len(data))
	if left < n {
		n = left
		clear(data[n:])
	}
	_, err := io.ReadFull(src, data[:n])
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("the image ends before its size says: %w", io.ErrUnexpectedEOF)
	}
	return err
}

// writeMetadata writes the footer's copy, the dynamic header and the BAT
// at the top, and the footer after the last block.
func writeMetadata(out io.WriterAt, footer, header, bat []byte, end int64) error {
	for _, part := range []struct {
		data []byte
		at   int64
	}{{footer, 0}, {header, headerOffset}, {bat, batOffset}, {footer, end}} {
		if _, err := out.WriteAt(part.data, part.at); err != nil {
			return fmt.Errorf("writing the VHD: %w", err)
		}
	}
	return nil
}

// newFooter is the hard disk footer of a dynamic disk of size bytes.
func newFooter(size int64) []byte {
	f := make([]byte, footerSize)
	copy(f[0:], "conectix")
	binary.BigEndian.PutUint32(f[8:], featuresBit)
	binary.BigEndian.PutUint32(f[12:], formatVersion)
	binary.BigEndian.PutUint64(f[16:], headerOffset)
	binary.BigEndian.PutUint32(f[24:], uint32(time.Since(vhdEpoch)/time.Second))
	copy(f[28:], creatorApp[:])
	binary.BigEndian.PutUint32(f[32:], formatVersion)
	binary.BigEndian.PutUint64(f[40:], uint64(size)) // original size
	binary.BigEndian.PutUint64(f[48:], uint64(size)) // current size
	binary.BigEndian.PutUint32(f[56:], geometry(size/sector))
	binary.BigEndian.PutUint32(f[60:], diskDynamic)
	_, _ = rand.Read(f[68:84])    // the unique id; crypto/rand's Read never fails
	f[68+6] = f[68+6]&0x0f | 0x40 // a version 4 UUID
	f[68+8] = f[68+8]&0x3f | 0x80
	binary.BigEndian.PutUint32(f[64:], checksum(f))
	return f
}

// dynamicHeader points at the BAT of blocks entries of BlockSize.
func dynamicHeader(blocks int) []byte {
	h := make([]byte, headerSize)
	copy(h[0:], "cxsparse")
	binary.BigEndian.PutUint64(h[8:], ^uint64(0)) // no next structure
	binary.BigEndian.PutUint64(h[16:], batOffset)
	binary.BigEndian.PutUint32(h[24:], formatVersion)
	binary.BigEndian.PutUint32(h[28:], uint32(blocks))
	binary.BigEndian.PutUint32(h[32:], BlockSize)
	binary.BigEndian.PutUint32(h[36:], checksum(h))
	return h
}

// checksum is the one's complement of the byte sum, the checksum field
// itself being zero while summed.
func checksum(b []byte) uint32 {
	var sum uint32
	for _, c := range b {
		sum += uint32(c)
	}
	return ^sum
}

// geometry is the disk's cylinders, heads and sectors per track as the
// specification's appendix computes them from its sector count.
func geometry(sectors int64) uint32 {
	sectors = min(sectors, 65535*16*255)
	var spt, heads, cylTimesHeads int64
	if sectors >= 65535*16*63 {
		spt, heads = 255, 16
		cylTimesHeads = sectors / spt
	} else {
		spt = 17
		cylTimesHeads = sectors / spt
		heads = max((cylTimesHeads+1023)/1024, 4)
		if cylTimesHeads >= heads*1024 || heads > 16 {
			spt, heads = 31, 16
			cylTimesHeads = sectors / spt
		}
		if cylTimesHeads >= heads*1024 {
			spt, heads = 63, 16
			cylTimesHeads = sectors / spt
		}
	}
	return uint32(cylTimesHeads/heads)<<16 | uint32(heads)<<8 | uint32(spt)
}

// fillBitmap marks every sector of a block present, as a block that is
// written whole.
func fillBitmap(b []byte) {
	for i := range b {
		b[i] = 0xff
	}
}

// zeros is compared against, a page at a time (bytes.Equal is the
// runtime's vectorised memequal).
var zeros [4096]byte

func allZero(b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), len(zeros))
		if !bytes.Equal(b[:n], zeros[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }
