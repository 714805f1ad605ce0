package stemcell

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell/diskimage"
)

// convert turns an OpenStack stemcell's raw or QCOW2 image into the
// format the target boots (a dynamic VHD for XenServer), written to one
// temporary file. A raw root.img is converted as it streams out of the
// tarball; a QCOW2 one, whose tables point anywhere in the file, is
// unpacked first and its temporary file removed once converted.
func (p preparer) convert() (*Image, error) {
	if p.target.Format != VHD {
		return nil, fmt.Errorf("cannot convert a %s image to %s", p.target.From, p.target.Format)
	}
	switch {
	case p.target.From == RAW && p.inner == kindTar:
		r, size, done, err := p.rootImage()
		if err != nil {
			return nil, err
		}
		defer done()
		return p.rawToVHD(r, size, "its root.img")
	case p.target.From == RAW && p.outer == kindUnknown:
		if _, err := p.f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return p.rawToVHD(p.f, p.size, "the image")
	case p.target.From == QCOW2 && p.inner == kindTar:
		unpacked, err := p.unpackRootImage(".qcow2")
		if err != nil {
			return nil, err
		}
		defer unpacked.Cleanup()
		return p.qcow2ToVHD(unpacked.Path, "its root.img")
	case p.target.From == QCOW2 && p.outer == kindQCOW2:
		return p.qcow2ToVHD(p.path, "the image")
	}
	return nil, fmt.Errorf("its content is %s data: a %s image is converted for %s from a tarball holding root.img "+
		"(as bosh.io's OpenStack stemcells ship it) or from the bare image", p.outer, p.target.From, p.target.Hypervisor)
}

// rawToVHD refuses raw content that is some other image format, as
// checkUnpacked does for a raw template.
func (p preparer) rawToVHD(r io.Reader, n int64, what string) (*Image, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(int(min(headerSize, n)))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if k := sniff(head); k != kindUnknown {
		return nil, fmt.Errorf("%s is %s data, not the %s that disk_format declares", what, k, RAW)
	}
	return p.writeVHD(br, n, "raw")
}

func (p preparer) qcow2ToVHD(path, what string) (*Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	q, err := diskimage.OpenQCOW2(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return p.writeVHD(q.NewReader(), q.Size(), "QCOW2")
}

// writeVHD writes the disk read from r to a temporary *.vhd file.
func (p preparer) writeVHD(r io.Reader, n int64, from string) (*Image, error) {
	out, err := os.CreateTemp(p.tmpDir, "stemcell-*.vhd")
	if err != nil {
		return nil, fmt.Errorf("converting the image to VHD: %w", err)
	}
	img := &Image{Path: out.Name(), Extension: ".vhd", temp: true}
	st, err := diskimage.WriteDynamicVHD(out, r, n)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		img.Cleanup()
		return nil, fmt.Errorf("converting the %s image to VHD: %w", from, err)
	}
	img.Size = st.FileSize
	img.Converted = fmt.Sprintf("converted the %s image (a disk of %s) to a dynamic VHD of %s: %d of its %d blocks of 2 MiB hold data",
		from, size(st.VirtualSize), size(st.FileSize), st.Allocated, st.Blocks)
	return img, nil
}
