package stemcell

import (
	"fmt"
	"os"
)

// Image is a file ready to hand to CloudStack: its bytes checked against
// the target format, and the extension CloudStack checks URLs and uploads by.
type Image struct {
	Path      string
	Size      int64
	Extension string
	Target    Target
	// Converted says, for the log, what Prepare converted the stemcell's
	// image from; empty when it goes as it is.
	Converted string
	temp      bool
}

// Cleanup removes a file Prepare unpacked; the director's image is left.
func (i *Image) Cleanup() {
	if i != nil && i.temp {
		os.Remove(i.Path)
	}
}

// Prepare checks the image at path is what target says, unpacking a
// tarball (OpenStack's root.img, vSphere's OVF files) into tmpDir as a
// stream when CloudStack needs the inner file. Nothing is read into memory.
func Prepare(path string, t Target, tmpDir string) (*Image, error) {
	if err := checkRegular(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening stemcell image: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading stemcell image: %w", err)
	}
	if !st.Mode().IsRegular() {
		// Swapped for something else between the two looks.
		return nil, fmt.Errorf("stemcell image %s is not a regular file", path)
	}
	head, err := readHead(f, headerSize)
	if err != nil {
		return nil, fmt.Errorf("reading stemcell image %s: %w", path, err)
	}
	outer := sniff(head)
	innerStart, err := innerHead(f, outer)
	if err != nil {
		return nil, fmt.Errorf("stemcell image %s: %w", path, err)
	}
	p := preparer{f: f, path: path, size: st.Size(), outer: outer, inner: sniff(innerStart), innerHead: innerStart,
		tmpDir: tmpDir, target: t}
	img, err := p.prepare()
	if err != nil {
		return nil, fmt.Errorf("stemcell image %s: %w", path, err)
	}
	img.Target = t
	return img, nil
}

// checkRegular refuses what is not a regular file before it is opened:
// opening a FIFO blocks until a writer comes, and a device or socket is no
// image. A symbolic link to a regular file is fine.
func checkRegular(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("opening stemcell image: %w", err)
	}
	if kind := fileKind(st.Mode()); kind != "" {
		return fmt.Errorf("stemcell image %s is %s, not a regular file", path, kind)
	}
	return nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}

type preparer struct {
	f            *os.File
	path         string
	size         int64
	outer, inner kind
	// innerHead is the content's first bytes, decompressed.
	innerHead []byte
	tmpDir    string
	target    Target
}

func (p preparer) prepare() (*Image, error) {
	if p.target.From != "" {
		return p.convert()
	}
	switch p.target.Format {
	case VHD:
		return p.vhd()
	case QCOW2:
		return p.qcow2()
	case RAW:
		return p.raw()
	case OVA:
		return p.ova()
	}
	return nil, fmt.Errorf("unknown template format %q", p.target.Format)
}

func (p preparer) asIs(ext string) *Image {
	return &Image{Path: p.path, Size: p.size, Extension: ext}
}

func (p preparer) mismatch() error {
	what := string(p.outer)
	if p.inner != p.outer {
		what = fmt.Sprintf("%s-compressed %s", p.outer, p.inner)
	}
	return fmt.Errorf("its content is %s data, not the %s that disk_format declares", what, p.target.Format)
}

func (p preparer) vhd() (*Image, error) {
	switch {
	case p.outer == kindBzip2 && p.inner == kindVHD:
		return p.asIs(".vhd.bz2"), checkBzip2VHD(p.f, p.size, p.innerHead)
	case p.outer == kindGzip && p.inner == kindVHD:
		return p.asIs(".vhd.gz"), nil
	case p.outer == kindVHD:
		return p.asIs(".vhd"), checkVHD(p.f, p.size)
	}
	if p.size >= headerSize && checkVHD(p.f, p.size) == nil {
		return p.asIs(".vhd"), nil // a fixed VHD has its only footer at the end
	}
	return nil, p.mismatch()
}

func (p preparer) qcow2() (*Image, error) {
	switch {
	case p.outer == kindQCOW2:
		return p.asIs(".qcow2"), checkQCOW2(p.f, p.size)
	case p.outer == kindBzip2 && p.inner == kindQCOW2:
		return p.asIs(".qcow2.bz2"), nil
	case p.outer == kindGzip && p.inner == kindQCOW2:
		return p.asIs(".qcow2.gz"), nil
	case p.inner == kindTar:
		img, err := p.unpackRootImage(".qcow2")
		if err != nil {
			return nil, err
		}
		return img, p.checkUnpacked(img, kindQCOW2)
	}
	return nil, p.mismatch()
}

func (p preparer) raw() (*Image, error) {
	switch {
	case p.inner == kindTar:
		img, err := p.unpackRootImage(".img")
		if err != nil {
			return nil, err
		}
		return img, p.checkUnpacked(img, kindUnknown)
	case p.outer == kindUnknown:
		return p.asIs(".img"), nil
	}
	return nil, p.mismatch()
}

func (p preparer) ova() (*Image, error) {
	if p.inner != kindTar {
		return nil, p.mismatch()
	}
	if p.outer == kindTar {
		if err := checkOVFFirst(p.f); err != nil {
			return nil, err
		}
		return p.asIs(".ova"), nil
	}
	return p.repackOVA()
}

// checkUnpacked refuses root.img content of the wrong kind (a raw stemcell
// must not hold a QCOW2, and the other way round) and cleans up if so.
func (p preparer) checkUnpacked(img *Image, want kind) error {
	f, err := os.Open(img.Path)
	if err != nil {
		img.Cleanup()
		return err
	}
	defer f.Close()
	head, err := readHead(f, headerSize)
	if err == nil && sniff(head) != want {
		err = fmt.Errorf("its root.img is %s data, not the %s that disk_format declares", sniff(head), p.target.Format)
	}
	if err == nil && want == kindQCOW2 {
		err = checkQCOW2(f, img.Size)
	}
	if err != nil {
		img.Cleanup()
	}
	return err
}
