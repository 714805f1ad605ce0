package stemcell

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// kind is what an image's bytes say it is, whatever its name claims.
type kind string

const (
	kindUnknown kind = "unrecognised"
	kindBzip2   kind = "bzip2"
	kindGzip    kind = "gzip"
	kindTar     kind = "tar"
	kindQCOW2   kind = "QCOW2"
	kindVHD     kind = "VHD"
)

const headerSize = 512

var (
	vhdCookie  = []byte("conectix")
	qcow2Magic = []byte("QFI\xfb")
)

// sniff reads the first bytes of r; a dynamic VHD begins with a copy of its
// footer, so "conectix" at 0 is a VHD.
func sniff(head []byte) kind {
	switch {
	case len(head) >= 4 && bytes.HasPrefix(head, []byte("BZh")) && head[3] >= '1' && head[3] <= '9':
		return kindBzip2
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return kindGzip
	case bytes.HasPrefix(head, qcow2Magic):
		return kindQCOW2
	case bytes.HasPrefix(head, vhdCookie):
		return kindVHD
	case len(head) >= 262 && bytes.Equal(head[257:262], []byte("ustar")):
		return kindTar
	}
	return kindUnknown
}

// readHead returns up to n bytes from the start of r.
func readHead(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, n)
	got, err := io.ReadFull(r, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return buf[:got], err
}

// innerHead is the first headerSize bytes of f's content, looked at
// through one layer of compression.
func innerHead(f *os.File, outer kind) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var r io.Reader
	switch outer {
	case kindBzip2:
		r = bzip2.NewReader(f)
	case kindGzip:
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("corrupt gzip data: %w", err)
		}
		defer gz.Close()
		r = gz
	default:
		return readHead(f, headerSize)
	}
	head := make([]byte, headerSize)
	n, err := io.ReadFull(r, head)
	if err != nil {
		// No disk image is smaller than a sector once decompressed.
		return nil, fmt.Errorf("its %s data ends or breaks after %d bytes (%w): the file is truncated or corrupt", outer, n, err)
	}
	return head, nil
}

// checkBzip2VHD insists that the VHD inside bzip2 data ends with its
// footer, the same 512 bytes as the copy at its start (head): a dynamic VHD
// begins with that copy, and what follows the footer would follow the VHD
// into CloudStack, whose secondary storage refuses it only after the
// upload.
func checkBzip2VHD(f *os.File, size int64, head []byte) error {
	tail, err := bzip2DataTail(f, size, headerSize)
	if err != nil {
		return err
	}
	switch {
	case !bytes.HasPrefix(tail, vhdCookie):
		return fmt.Errorf("its bzip2 data holds a VHD that does not end with its footer: other bytes follow the VHD, " +
			"or it is cut short; the stemcell image is corrupt")
	case !bytes.Equal(tail, head[:headerSize]):
		return fmt.Errorf("the footer its bzip2 data ends with is not the footer copy its VHD starts with: other " +
			"bytes follow the VHD; the stemcell image is corrupt")
	}
	return nil
}

// checkVHD insists on the footer at the end: a truncated VHD has lost it.
func checkVHD(f *os.File, size int64) error {
	if size < headerSize {
		return fmt.Errorf("too short for a VHD (%d bytes)", size)
	}
	footer := make([]byte, len(vhdCookie))
	if _, err := f.ReadAt(footer, size-headerSize); err != nil {
		return err
	}
	if !bytes.Equal(footer, vhdCookie) {
		return fmt.Errorf("no VHD footer at its end: the file is truncated or not a VHD")
	}
	return nil
}

// checkQCOW2 insists the L1 table lies inside the file, which a truncated
// image fails.
func checkQCOW2(f *os.File, size int64) error {
	head := make([]byte, 48)
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("too short for a QCOW2 header: %w", err)
	}
	version := binary.BigEndian.Uint32(head[4:8])
	l1Size := int64(binary.BigEndian.Uint32(head[36:40]))
	l1Offset := int64(binary.BigEndian.Uint64(head[40:48]))
	if version != 2 && version != 3 {
		return fmt.Errorf("QCOW2 version %d is not 2 or 3", version)
	}
	if l1Offset+8*l1Size > size {
		return fmt.Errorf("its QCOW2 L1 table ends past the end of the file: the file is truncated")
	}
	return nil
}
