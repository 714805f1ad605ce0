package stemcell

import (
	"archive/tar"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

const maxOVFSize = 1 << 20

// tarStream opens the image's tar layer from the start, through gzip or
// bzip2 when compressed.
func (p preparer) tarStream() (*tar.Reader, func(), error) {
	if _, err := p.f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	switch p.outer {
	case kindGzip:
		gz, err := gzip.NewReader(p.f)
		if err != nil {
			return nil, nil, err
		}
		return tar.NewReader(gz), func() { gz.Close() }, nil
	case kindBzip2:
		return tar.NewReader(bzip2.NewReader(p.f)), func() {}, nil
	}
	return tar.NewReader(p.f), func() {}, nil
}

// unpackRootImage streams root.img (OpenStack and raw stemcells) out of the
// tarball into a temporary file with the extension CloudStack expects.
func (p preparer) unpackRootImage(ext string) (*Image, error) {
	tr, size, done, err := p.rootImage()
	if err != nil {
		return nil, err
	}
	defer done()
	return p.copyOut(tr, size, ext)
}

// rootImage opens the tarball as a stream positioned at root.img's bytes,
// of size bytes; done closes the stream.
func (p preparer) rootImage() (r io.Reader, size int64, done func(), err error) {
	tr, done, err := p.tarStream()
	if err != nil {
		return nil, 0, nil, err
	}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			done()
			return nil, 0, nil, fmt.Errorf("the tarball holds no root.img")
		}
		if err != nil {
			done()
			return nil, 0, nil, fmt.Errorf("reading the tarball: %w", err)
		}
		if hdr.Typeflag == tar.TypeReg && path.Base(hdr.Name) == "root.img" {
			return tr, hdr.Size, done, nil
		}
	}
}

func (p preparer) copyOut(r io.Reader, size int64, ext string) (*Image, error) {
	out, err := os.CreateTemp(p.tmpDir, "stemcell-*"+ext)
	if err != nil {
		return nil, fmt.Errorf("unpacking the image: %w", err)
	}
	img := &Image{Path: out.Name(), Extension: ext, temp: true}
	n, err := io.Copy(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != size {
		err = fmt.Errorf("the tarball ends after %d of root.img's %d bytes: it is truncated", n, size)
	}
	if err != nil {
		img.Cleanup()
		return nil, fmt.Errorf("unpacking the image: %w", err)
	}
	img.Size = n
	return img, nil
}

// checkOVFFirst: an OVA is a tar whose first entry is the OVF descriptor.
func checkOVFFirst(f *os.File) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	hdr, err := tar.NewReader(f).Next()
	if err != nil {
		return fmt.Errorf("reading the OVA: %w", err)
	}
	if !strings.HasSuffix(strings.ToLower(hdr.Name), ".ovf") {
		return fmt.Errorf("an OVA must begin with its .ovf descriptor, this one begins with %s", hdr.Name)
	}
	return nil
}

// repackOVA turns a vSphere stemcell's tgz (image.ovf, image.mf,
// image-disk1.vmdk in any order) into an OVA: the descriptor first, then
// the rest, streamed; only the small descriptor is held in memory.
func (p preparer) repackOVA() (*Image, error) {
	ovfName, ovf, err := p.findOVF()
	if err != nil {
		return nil, err
	}
	out, err := os.CreateTemp(p.tmpDir, "stemcell-*.ova")
	if err != nil {
		return nil, fmt.Errorf("repacking as OVA: %w", err)
	}
	img := &Image{Path: out.Name(), Extension: ".ova", temp: true}
	err = p.writeOVA(out, ovfName, ovf)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		img.Cleanup()
		return nil, fmt.Errorf("repacking as OVA: %w", err)
	}
	st, err := os.Stat(img.Path)
	if err != nil {
		img.Cleanup()
		return nil, err
	}
	img.Size = st.Size()
	return img, nil
}

func (p preparer) findOVF() (string, []byte, error) {
	tr, done, err := p.tarStream()
	if err != nil {
		return "", nil, err
	}
	defer done()
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", nil, fmt.Errorf("the tarball holds no .ovf descriptor, so it is no OVA")
		}
		if err != nil {
			return "", nil, fmt.Errorf("reading the tarball: %w", err)
		}
		if strings.HasSuffix(strings.ToLower(hdr.Name), ".ovf") {
			if hdr.Size > maxOVFSize {
				return "", nil, fmt.Errorf("its descriptor %s is %d bytes, too big for an OVF", hdr.Name, hdr.Size)
			}
			data, err := io.ReadAll(tr)
			return path.Base(hdr.Name), data, err
		}
	}
}

func (p preparer) writeOVA(out io.Writer, ovfName string, ovf []byte) error {
	tw := tar.NewWriter(out)
	if err := tw.WriteHeader(&tar.Header{Name: ovfName, Mode: 0o644, Size: int64(len(ovf)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := io.Copy(tw, bytes.NewReader(ovf)); err != nil {
		return err
	}
	tr, done, err := p.tarStream()
	if err != nil {
		return err
	}
	defer done()
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return tw.Close()
		}
		if err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg || path.Base(hdr.Name) == ovfName {
			continue
		}
		entry := &tar.Header{Name: path.Base(hdr.Name), Mode: 0o644, Size: hdr.Size, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(entry); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return fmt.Errorf("copying %s: %w", hdr.Name, err)
		}
	}
}
