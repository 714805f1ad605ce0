// Package imagecheck holds the image checks the simulator's secondary
// storage makes, shared by template downloads (registerTemplate) and
// uploads (the /upload receiver). Like the secondary storage VM they run in two
// stages, both reading the image as a stream from disk, never whole into
// memory:
//
//   - describeFile and extensionAccepts mirror ImageStoreUtil.checkTemplateFormat
//     (utils/…/imagestore/ImageStoreUtil.java): `file [-z] <path> | cut -d: -f2`
//     (-z when ImageStoreUtil.isCompressedExtension) describes the content and
//     the description must suit the extension of the URL path or upload file
//     name (isCorrectExtension over UriUtils.getSupportedExtensions);
//   - Verify stands in for the post-download processing: the format
//     processors' virtual sizes (QCOW2Processor.getTemplateVirtualSize: 8
//     bytes at offset 24; VhdProcessor.getTemplateVirtualSize: the footer
//     copy at the top, current size at offset 48) and the scripts around them
//     (createtmplt.sh, vhd-util check, qemu-img info, not read). Departure:
//     the compression must be what the name says and must decompress to its
//     end, and the image inside must be well-formed for its format - the
//     texts are the simulator's; VhdProcessor itself falls back to the file
//     length where the simulator refuses a VHD without its cookie.
package imagecheck

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// Compression names, as the extensions .bz2, .gz, .zip and .xz announce them.
const (
	None  = ""
	Bzip2 = "bzip2"
	Gzip  = "gzip"
	Zip   = "zip"
	Xz    = "xz"
)

// Compression is the compression a file or URL path name announces.
func Compression(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".bz2":
		return Bzip2
	case ".gz":
		return Gzip
	case ".zip":
		return Zip
	case ".xz":
		return Xz
	}
	return None
}

// compressionOfContent recognises a compressed stream by its magic bytes.
func compressionOfContent(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("BZh")) && len(head) > 3 && head[3] >= '1' && head[3] <= '9':
		return Bzip2
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return Gzip
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return Zip
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		return Xz
	}
	return None
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
	case compressionOfContent(head) == Bzip2:
		return fmt.Sprintf("bzip2 compressed data, block size = %c00k", head[3])
	case compressionOfContent(head) == Gzip:
		return "gzip compressed data"
	case compressionOfContent(head) == Zip:
		return "Zip archive data, at least v2.0 to extract"
	case compressionOfContent(head) == Xz:
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
	if !decompress || comp == None || comp == Xz {
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

// CheckFileType describes the file as `file [-z]` does for name and reports
// the description when it does not suit name's extension ("" when it does).
func CheckFileType(p, name string) (string, error) {
	desc, err := describeFile(p, Compression(name) != None)
	if err != nil {
		return "", err
	}
	if Compression(name) == Xz && desc == "XZ compressed data" {
		return "", nil // no xz decoder in the standard library: the content cannot be looked at
	}
	if extensionAccepts(desc, name) {
		return "", nil
	}
	return desc, nil
}
