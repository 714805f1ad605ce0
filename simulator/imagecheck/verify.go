package imagecheck

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// Verify stands in for the secondary storage VM's post-download processing
// (see the package comment): the virtual sizes follow
// QCOW2Processor.getTemplateVirtualSize and VhdProcessor.getTemplateVirtualSize;
// the structural checks and their texts are the simulator's own.

// Info is what Verify learns: the virtual size as the hypervisor
// sees the disk and the bytes the installed image takes (decompressed).
type Info struct {
	VirtualSize  int64
	PhysicalSize int64
}

// Verify reads the image at p completely, as a stream, and checks that
// it is a well-formed image of format compressed the way name's extension
// says. The error text explains what is wrong, like a failing install script.
func Verify(p, name, format string) (Info, error) {
	f, err := os.Open(p)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Info{}, err
	}
	var magic [6]byte
	n, _ := io.ReadFull(f, magic[:])
	have, want := compressionOfContent(magic[:n]), Compression(name)
	switch {
	case have != want && want == None:
		return Info{}, fmt.Errorf("%s holds %s compressed data but its name has no .%s extension", path.Base(name), have, Extension(have))
	case have != want:
		return Info{}, fmt.Errorf("%s is not in %s format: its name ends in .%s", path.Base(name), want, Extension(want))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Info{}, err
	}
	if have == None && strings.EqualFold(format, "RAW") {
		// a raw image is whatever it holds: no need to read it all
		return Info{VirtualSize: st.Size(), PhysicalSize: st.Size()}, nil
	}
	if have == Xz {
		// the standard library has no xz decoder: check the stream's framing only
		return verifyXz(f, st.Size(), name)
	}
	var r io.Reader = f
	if have != None {
		inner, closeInner, err := decompressor(f, p, have)
		if err != nil {
			return Info{}, fmt.Errorf("%s data invalid: %w", have, err)
		}
		defer closeInner()
		r = &streamErr{r: inner, what: have}
	}
	return verifyStream(r, name, format)
}

// Extension is the file name extension a compression is announced by.
func Extension(comp string) string {
	if comp == Gzip {
		return "gz"
	}
	if comp == Bzip2 {
		return "bz2"
	}
	return comp
}

// streamErr labels decompression errors (a truncated stream) as such.
type streamErr struct {
	r    io.Reader
	what string
}

func (s *streamErr) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		err = &decompressError{fmt.Errorf("%s data invalid: %w", s.what, err)}
	}
	return n, err
}

// decompressError is a damaged compressed stream, reported as it is
// whatever the image inside.
type decompressError struct{ error }

// decompressor opens the decompressed stream of a file; for zip the image is
// the archive's first file.
func decompressor(f *os.File, p, comp string) (io.Reader, func(), error) {
	switch comp {
	case Bzip2:
		return bzip2.NewReader(bufio.NewReaderSize(f, 256<<10)), func() {}, nil
	case Gzip:
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 256<<10))
		if err != nil {
			return nil, nil, err
		}
		return zr, func() { zr.Close() }, nil
	case Zip:
		zr, err := zip.OpenReader(p)
		if err != nil {
			return nil, nil, err
		}
		for _, entry := range zr.File {
			if entry.FileInfo().IsDir() {
				continue
			}
			rc, err := entry.Open()
			if err != nil {
				zr.Close()
				return nil, nil, err
			}
			return rc, func() { rc.Close(); zr.Close() }, nil
		}
		zr.Close()
		return nil, nil, errors.New("the archive holds no file")
	}
	return nil, nil, fmt.Errorf("unsupported compression %s", comp)
}

// verifyStream reads an uncompressed image to its end, keeping only its
// first and last bytes, and checks the format's structure.
func verifyStream(r io.Reader, name, format string) (Info, error) {
	base := path.Base(name)
	if strings.EqualFold(format, "OVA") {
		return verifyOVA(r, base)
	}
	w := &headTail{}
	total, err := io.CopyBuffer(w, r, make([]byte, 256<<10))
	if err != nil {
		return Info{}, err
	}
	head, tail := w.head, w.tailBytes(512)
	info := Info{VirtualSize: total, PhysicalSize: total}
	switch strings.ToUpper(format) {
	case "VHD":
		if !bytes.HasPrefix(head, []byte("conectix")) {
			return info, fmt.Errorf("%s is not a valid VHD: no \"conectix\" cookie at offset 0 (found %s)", base, describe(head))
		}
		if total < 1024 || !bytes.HasPrefix(tail, []byte("conectix")) {
			return info, fmt.Errorf("%s is not a valid VHD: no footer (\"conectix\" cookie) in its last 512 bytes, the image is truncated", base)
		}
		// VhdProcessor.getTemplateVirtualSize reads the footer copy at the top.
		info.VirtualSize = int64(binary.BigEndian.Uint64(head[48:56]))
	case "VHDX":
		if !bytes.HasPrefix(head, []byte("vhdxfile")) {
			return info, fmt.Errorf("%s is not a valid VHDX: no \"vhdxfile\" signature (found %s)", base, describe(head))
		}
	case "QCOW2":
		if !bytes.HasPrefix(head, []byte("QFI\xfb")) || len(head) < 32 {
			return info, fmt.Errorf("%s is not a valid QCOW2 image: no \"QFI\\xfb\" magic (found %s)", base, describe(head))
		}
		if v := binary.BigEndian.Uint32(head[4:8]); v != 2 && v != 3 {
			return info, fmt.Errorf("%s is not a valid QCOW2 image: unsupported version %d", base, v)
		}
		info.VirtualSize = int64(binary.BigEndian.Uint64(head[24:32]))
	case "ISO":
		if len(head) < 32774 || !bytes.Equal(head[32769:32774], []byte("CD001")) {
			return info, fmt.Errorf("%s is not a valid ISO 9660 image (found %s)", base, describe(head))
		}
	case "RAW":
	default:
		return info, fmt.Errorf("format %s cannot be verified", format)
	}
	return info, nil
}

// verifyOVA checks an OVA: a tar archive whose first entry is the OVF
// descriptor, readable to its end.
func verifyOVA(r io.Reader, base string) (Info, error) {
	raw := &headTail{}
	tr := tar.NewReader(io.TeeReader(r, raw))
	invalid := func(err error) (Info, error) {
		var de *decompressError
		if errors.As(err, &de) {
			return Info{}, de
		}
		return Info{}, fmt.Errorf("%s is not a valid OVA: %w", base, err)
	}
	first := true
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			if first {
				return invalid(errors.New("the archive is empty"))
			}
			break
		}
		if err != nil {
			return invalid(err)
		}
		if first && !strings.HasSuffix(strings.ToLower(hdr.Name), ".ovf") {
			return invalid(fmt.Errorf("its first file is %s, not the .ovf descriptor", hdr.Name))
		}
		first = false
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return invalid(fmt.Errorf("%s: %w", hdr.Name, err))
		}
	}
	// Read the end-of-archive blocks too: an archive cut at a file boundary
	// lacks them.
	if _, err := io.Copy(raw, r); err != nil {
		return invalid(err)
	}
	if raw.n%512 != 0 || raw.n < 1024 || !allZero(raw.tailBytes(1024)) {
		return invalid(errors.New("unexpected end of archive, it is truncated"))
	}
	return Info{VirtualSize: raw.n, PhysicalSize: raw.n}, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// verifyXz checks an xz stream's header and footer magic, which is as far as
// the standard library goes: the content itself is not checked.
func verifyXz(f *os.File, size int64, name string) (Info, error) {
	var footer [2]byte
	if size < 24 {
		return Info{}, fmt.Errorf("xz data invalid: %s is truncated", path.Base(name))
	}
	if _, err := f.ReadAt(footer[:], size-2); err != nil {
		return Info{}, err
	}
	if footer != [2]byte{'Y', 'Z'} {
		return Info{}, fmt.Errorf("xz data invalid: %s has no stream footer, it is truncated", path.Base(name))
	}
	return Info{VirtualSize: size, PhysicalSize: size}, nil
}

// headTail is a writer that keeps the first headSize and the last 1024 bytes.
type headTail struct {
	head []byte
	tail [1024]byte
	n    int64 // bytes written
}

func (w *headTail) Write(p []byte) (int, error) {
	if room := headSize - len(w.head); room > 0 {
		w.head = append(w.head, p[:min(room, len(p))]...)
	}
	if len(p) >= len(w.tail) {
		copy(w.tail[:], p[len(p)-len(w.tail):])
	} else {
		copy(w.tail[:], w.tail[len(p):])
		copy(w.tail[len(w.tail)-len(p):], p)
	}
	w.n += int64(len(p))
	return len(p), nil
}

// tailBytes is the last min(n, written) bytes (n <= 1024).
func (w *headTail) tailBytes(n int) []byte {
	n = int(min(int64(n), w.n))
	return w.tail[len(w.tail)-n:]
}
