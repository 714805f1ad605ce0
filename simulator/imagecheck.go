package simulator

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

// Image checks shared by template downloads (registerTemplate) and uploads
// (the /upload receiver). Like the secondary storage VM they run in two
// stages, both reading the image as a stream from disk, never whole into
// memory:
//
//   - describeFile and extensionAccepts mirror ImageStoreUtil.checkTemplateFormat
//     (utils/…/imagestore/ImageStoreUtil.java): `file [-z] <path> | cut -d: -f2`
//     (-z when ImageStoreUtil.isCompressedExtension) describes the content and
//     the description must suit the extension of the URL path or upload file
//     name (isCorrectExtension over UriUtils.getSupportedExtensions);
//   - verifyImage stands in for the post-download processing: the format
//     processors' virtual sizes (QCOW2Processor.getTemplateVirtualSize: 8
//     bytes at offset 24; VhdProcessor.getTemplateVirtualSize: the footer
//     copy at the top, current size at offset 48) and the scripts around them
//     (createtmplt.sh, vhd-util check, qemu-img info, not read). Departure:
//     the compression must be what the name says and must decompress to its
//     end, and the image inside must be well-formed for its format - the
//     texts are the simulator's; VhdProcessor itself falls back to the file
//     length where the simulator refuses a VHD without its cookie.

// compression names, as the extensions .bz2, .gz, .zip and .xz announce them.
const (
	compNone  = ""
	compBzip2 = "bzip2"
	compGzip  = "gzip"
	compZip   = "zip"
	compXz    = "xz"
)

// compressionOfName is the compression a file or URL path name announces.
func compressionOfName(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".bz2":
		return compBzip2
	case ".gz":
		return compGzip
	case ".zip":
		return compZip
	case ".xz":
		return compXz
	}
	return compNone
}

// compressionOfContent recognises a compressed stream by its magic bytes.
func compressionOfContent(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("BZh")) && len(head) > 3 && head[3] >= '1' && head[3] <= '9':
		return compBzip2
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return compGzip
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return compZip
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		return compXz
	}
	return compNone
}

// headSize is how much of an image describeFile looks at: enough for the
// ISO 9660 volume descriptor at 32769.
const headSize = 64 << 10

// describe is what `file` prints for content starting with head (after the
// colon), for the magic numbers checkTemplateFormat's cases look for.
// Departure: a small table of file(1)'s magic, not libmagic itself.
func describe(head []byte) string {
	switch {
	case len(head) == 0:
		return "empty"
	case bytes.HasPrefix(head, []byte("conectix")):
		return "Microsoft Disk Image, Virtual Server or Virtual PC"
	case bytes.HasPrefix(head, []byte("vhdxfile")):
		return "Microsoft Disk Image eXtended"
	case bytes.HasPrefix(head, []byte("QFI\xfb")) && len(head) >= 32:
		version := binary.BigEndian.Uint32(head[4:8])
		size := binary.BigEndian.Uint64(head[24:32])
		if version == 1 {
			return fmt.Sprintf("QEMU QCOW Image (v1), %d bytes", size)
		}
		return fmt.Sprintf("QEMU QCOW2 Image (v%d), %d bytes", version, size)
	case len(head) >= 262 && bytes.Equal(head[257:262], []byte("ustar")):
		return "POSIX tar archive"
	case len(head) >= 32774 && bytes.Equal(head[32769:32774], []byte("CD001")):
		return "ISO 9660 CD-ROM filesystem data"
	case compressionOfContent(head) == compBzip2:
		return fmt.Sprintf("bzip2 compressed data, block size = %c00k", head[3])
	case compressionOfContent(head) == compGzip:
		return "gzip compressed data"
	case compressionOfContent(head) == compZip:
		return "Zip archive data, at least v2.0 to extract"
	case compressionOfContent(head) == compXz:
		return "XZ compressed data"
	case bytes.HasPrefix(head, []byte("KDMV")):
		return "VMware4 disk image"
	case len(head) >= 512 && head[510] == 0x55 && head[511] == 0xaa:
		return "DOS/MBR boot sector"
	}
	return "data"
}

// describeFile is `file` (decompress false) or `file -z` (true) on a file:
// with -z a compressed file is described by its content, followed by the
// compression in parentheses.
func describeFile(p string, decompress bool) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head, err := readHead(f)
	if err != nil {
		return "", err
	}
	outer := describe(head)
	comp := compressionOfContent(head)
	if !decompress || comp == compNone || comp == compXz {
		return outer, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	inner, closeInner, err := decompressor(f, p, comp)
	if err != nil {
		return outer, nil // `file -z` falls back to the outer description
	}
	defer closeInner()
	innerHead, _ := readHead(inner) // a damaged stream still shows its first bytes
	return describe(innerHead) + " (" + outer + ")", nil
}

// readHead reads up to headSize bytes; a short stream is not an error.
func readHead(r io.Reader) ([]byte, error) {
	head := make([]byte, headSize)
	n, err := io.ReadFull(r, head)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return head[:n], err
}

// extensionAccepts is ImageStoreUtil.checkTemplateFormat's verdict: whether a
// description suits the extension of name (a URL path, an upload file name,
// or the selected format plus the file's compression extension), case by
// case in its order. An extension counts with any compression suffix
// (UriUtils.buildExtensionSet; xz since 4.22); qcow2 includes .img
// (UriUtils' SUPPORTED_EXTENSIONS_BY_FORMAT since apache/cloudstack#4013).
func extensionAccepts(desc, name string) bool {
	has := func(ext string) bool {
		n := strings.ToLower(name)
		for _, suffix := range []string{"", ".gz", ".bz2", ".zip", ".xz"} {
			if strings.HasSuffix(n, ext+suffix) {
				return true
			}
		}
		return false
	}
	switch {
	case (strings.Contains(desc, "VMware") || strings.Contains(desc, "data")) && has("vmdk"):
	case (strings.Contains(desc, "x86 boot") || strings.Contains(desc, "DOS/MBR boot sector") ||
		strings.Contains(desc, "data")) && (has("raw") || has("img")):
	case strings.Contains(desc, "QEMU QCOW") && (has("qcow2") || has("img")):
	case strings.Contains(desc, "Microsoft Disk Image") && (has("vhd") || has("vhdx")):
	case strings.Contains(desc, "POSIX tar") && (has("ova") || has("tar")):
	case (strings.HasPrefix(desc, "ISO 9660") || strings.HasPrefix(desc, "DOS/MBR")) && has("iso"):
	default:
		return false
	}
	return true
}

// checkFileType describes the file as `file [-z]` does for name and reports
// the description when it does not suit name's extension ("" when it does).
func checkFileType(p, name string) (string, error) {
	desc, err := describeFile(p, compressionOfName(name) != compNone)
	if err != nil {
		return "", err
	}
	if compressionOfName(name) == compXz && desc == "XZ compressed data" {
		return "", nil // no xz decoder in the standard library: the content cannot be looked at
	}
	if extensionAccepts(desc, name) {
		return "", nil
	}
	return desc, nil
}

// imageInfo is what verifyImage learns: the virtual size as the hypervisor
// sees the disk and the bytes the installed image takes (decompressed).
type imageInfo struct {
	VirtualSize  int64
	PhysicalSize int64
}

// verifyImage reads the image at p completely, as a stream, and checks that
// it is a well-formed image of format compressed the way name's extension
// says. The error text explains what is wrong, like a failing install script.
func verifyImage(p, name, format string) (imageInfo, error) {
	f, err := os.Open(p)
	if err != nil {
		return imageInfo{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return imageInfo{}, err
	}
	var magic [6]byte
	n, _ := io.ReadFull(f, magic[:])
	have, want := compressionOfContent(magic[:n]), compressionOfName(name)
	switch {
	case have != want && want == compNone:
		return imageInfo{}, fmt.Errorf("%s holds %s compressed data but its name has no .%s extension", path.Base(name), have, compExt(have))
	case have != want:
		return imageInfo{}, fmt.Errorf("%s is not in %s format: its name ends in .%s", path.Base(name), want, compExt(want))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return imageInfo{}, err
	}
	if have == compNone && strings.EqualFold(format, "RAW") {
		// a raw image is whatever it holds: no need to read it all
		return imageInfo{VirtualSize: st.Size(), PhysicalSize: st.Size()}, nil
	}
	if have == compXz {
		// the standard library has no xz decoder: check the stream's framing only
		return verifyXz(f, st.Size(), name)
	}
	var r io.Reader = f
	if have != compNone {
		inner, closeInner, err := decompressor(f, p, have)
		if err != nil {
			return imageInfo{}, fmt.Errorf("%s data invalid: %v", have, err)
		}
		defer closeInner()
		r = &streamErr{r: inner, what: have}
	}
	return verifyStream(r, name, format)
}

func compExt(comp string) string {
	if comp == compGzip {
		return "gz"
	}
	if comp == compBzip2 {
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
	case compBzip2:
		return bzip2.NewReader(bufio.NewReaderSize(f, 256<<10)), func() {}, nil
	case compGzip:
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 256<<10))
		if err != nil {
			return nil, nil, err
		}
		return zr, func() { zr.Close() }, nil
	case compZip:
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
func verifyStream(r io.Reader, name, format string) (imageInfo, error) {
	base := path.Base(name)
	if strings.EqualFold(format, "OVA") {
		return verifyOVA(r, base)
	}
	w := &headTail{}
	total, err := io.CopyBuffer(w, r, make([]byte, 256<<10))
	if err != nil {
		return imageInfo{}, err
	}
	head, tail := w.head, w.tailBytes(512)
	info := imageInfo{VirtualSize: total, PhysicalSize: total}
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
func verifyOVA(r io.Reader, base string) (imageInfo, error) {
	raw := &headTail{}
	tr := tar.NewReader(io.TeeReader(r, raw))
	invalid := func(err error) (imageInfo, error) {
		var de *decompressError
		if errors.As(err, &de) {
			return imageInfo{}, de
		}
		return imageInfo{}, fmt.Errorf("%s is not a valid OVA: %v", base, err)
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
	return imageInfo{VirtualSize: raw.n, PhysicalSize: raw.n}, nil
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
func verifyXz(f *os.File, size int64, name string) (imageInfo, error) {
	var footer [2]byte
	if size < 24 {
		return imageInfo{}, fmt.Errorf("xz data invalid: %s is truncated", path.Base(name))
	}
	if _, err := f.ReadAt(footer[:], size-2); err != nil {
		return imageInfo{}, err
	}
	if footer != [2]byte{'Y', 'Z'} {
		return imageInfo{}, fmt.Errorf("xz data invalid: %s has no stream footer, it is truncated", path.Base(name))
	}
	return imageInfo{VirtualSize: size, PhysicalSize: size}, nil
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
