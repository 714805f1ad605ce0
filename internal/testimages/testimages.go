// Package testimages makes small, structurally valid disk images for tests:
// a dynamic VHD, a QCOW2, an OVA and an OpenStack-style tgz, compressed the
// way stemcells ship them.
package testimages

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell/diskimage"
)

// VHD is a dynamic VHD of virtualSize bytes with no data blocks: footer
// copy, dynamic header, block allocation table, footer, as
// stemcell/diskimage lays them out.
func VHD(virtualSize uint64) []byte {
	footer, header, bat := diskimage.Metadata(int64(virtualSize))
	return slices.Concat(footer, header, bat, footer)
}

// QCOW2 is a version 3 QCOW2 header with its L1 table inside the file, as
// many entries (all unallocated) as the virtual size needs: one L2 table
// maps cluster/8 clusters, and qemu refuses a smaller L1 table
// (qcow2_do_open's "L1 table is too small").
func QCOW2(virtualSize uint64) []byte {
	const cluster = 1 << 16
	const perL1 = cluster * cluster / 8
	l1Entries := uint32((virtualSize + perL1 - 1) / perL1)
	img := make([]byte, 4*cluster)
	copy(img[0:], "QFI\xfb")
	binary.BigEndian.PutUint32(img[4:], 3)
	binary.BigEndian.PutUint32(img[20:], 16) // cluster bits
	binary.BigEndian.PutUint64(img[24:], virtualSize)
	binary.BigEndian.PutUint32(img[36:], l1Entries)      // L1 entries
	binary.BigEndian.PutUint64(img[40:], 3*cluster)      // L1 offset
	binary.BigEndian.PutUint64(img[48:], cluster)        // refcount table offset
	binary.BigEndian.PutUint32(img[56:], 1)              // refcount table clusters
	binary.BigEndian.PutUint32(img[96:], 4)              // refcount order
	binary.BigEndian.PutUint32(img[100:], 104)           // header length
	binary.BigEndian.PutUint64(img[cluster:], 2*cluster) // refcount block
	for i := 0; i < 4; i++ {
		binary.BigEndian.PutUint16(img[2*cluster+2*i:], 1)
	}
	return img
}

// QCOW2Of is a well-formed version 3 QCOW2 (64 KiB clusters, refcounts
// kept) of the disk data, whose size is rounded up to a whole sector:
// the clusters of data that hold anything but zeros are allocated, the
// rest left unallocated. For disks that fit its one refcount block (2 GiB).
func QCOW2Of(data []byte) []byte {
	const cluster = 1 << 16
	size := (len(data) + 511) / 512 * 512
	clusters := (size + cluster - 1) / cluster
	l2Tables := (clusters + cluster/8 - 1) / (cluster / 8)
	img := make([]byte, (4+l2Tables)*cluster)
	l1At, next := 3*cluster, (4+l2Tables)*cluster
	for i := range clusters {
		c := data[i*cluster : min(len(data), (i+1)*cluster)]
		if bytes.Count(c, []byte{0}) == len(c) {
			continue
		}
		l2 := (4 + i/(cluster/8)) * cluster
		binary.BigEndian.PutUint64(img[l1At+8*(i/(cluster/8)):], uint64(l2)|1<<63)
		binary.BigEndian.PutUint64(img[l2+8*(i%(cluster/8)):], uint64(next)|1<<63)
		img = append(img, c...)
		img = append(img, make([]byte, cluster-len(c))...)
		next += cluster
	}
	copy(img[0:], "QFI\xfb")
	binary.BigEndian.PutUint32(img[4:], 3)
	binary.BigEndian.PutUint32(img[20:], 16) // cluster bits
	binary.BigEndian.PutUint64(img[24:], uint64(size))
	binary.BigEndian.PutUint32(img[36:], uint32(l2Tables))
	binary.BigEndian.PutUint64(img[40:], uint64(l1At))
	binary.BigEndian.PutUint64(img[48:], cluster) // refcount table
	binary.BigEndian.PutUint32(img[56:], 1)
	binary.BigEndian.PutUint32(img[96:], 4)    // 16-bit refcounts
	binary.BigEndian.PutUint32(img[100:], 104) // header length
	binary.BigEndian.PutUint64(img[cluster:], 2*cluster)
	for i := range len(img) / cluster {
		binary.BigEndian.PutUint16(img[2*cluster+2*i:], 1)
	}
	return img
}

// Entry is one file of a tarball.
type Entry struct {
	Name string
	Data []byte
}

// Tar packs entries in order.
func Tar(entries ...Entry) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		_ = tw.WriteHeader(&tar.Header{Name: e.Name, Mode: 0o644, Size: int64(len(e.Data)), Typeflag: tar.TypeReg})
		_, _ = tw.Write(e.Data)
	}
	_ = tw.Close()
	return b.Bytes()
}

// Gzip compresses data.
func Gzip(data []byte) []byte {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	_, _ = gz.Write(data)
	_ = gz.Close()
	return b.Bytes()
}

// Zip packs data as the one file name of a zip archive.
func Zip(name string, data []byte) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create(name)
	_, _ = w.Write(data)
	_ = zw.Close()
	return b.Bytes()
}

// Bzip2 compresses data with the bzip2 tool, as the stemcell builder does.
func Bzip2(data []byte) ([]byte, error) {
	cmd := exec.Command("bzip2", "-c", "-1")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bzip2 (Debian package bzip2) is needed to make test images: %w", err)
	}
	return out, nil
}

// OVA is a vSphere-style image set packed with the descriptor first.
func OVA() []byte { return Tar(OVFEntries()...) }

// OVFEntries are a vSphere stemcell's files.
func OVFEntries() []Entry {
	vmdk := append([]byte("KDMV"), make([]byte, 508)...)
	return []Entry{
		{Name: "image.ovf", Data: []byte(`<?xml version="1.0"?><Envelope xmlns="http://schemas.dmtf.org/ovf/envelope/1"/>`)},
		{Name: "image.mf", Data: []byte("SHA1(image-disk1.vmdk)= 00\n")},
		{Name: "image-disk1.vmdk", Data: vmdk},
	}
}

// OpenStackTgz is an OpenStack-style stemcell image: a tgz of root.img.
func OpenStackTgz(rootImg []byte) []byte {
	return Gzip(Tar(Entry{Name: "root.img", Data: rootImg}))
}

// Write puts data in dir/name and returns the path.
func Write(dir, name string, data []byte) (string, error) {
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, data, 0o600)
}

// WriteDynamicVHD streams a dynamic VHD whose every 2 MiB block is
// allocated and filled, so the file is as big as its virtual size: for
// benchmarks that need a large image without holding it in memory.
func WriteDynamicVHD(path string, virtualSize uint64) error {
	const block = diskimage.BlockSize
	footer, header, bat := diskimage.Metadata(int64(virtualSize))
	entries := (virtualSize + block - 1) / block
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(footer)
	w.Write(header)
	firstBlock := (1536 + uint64(len(bat))) / 512
	for i := uint64(0); i < entries; i++ {
		binary.BigEndian.PutUint32(bat[4*i:], uint32(firstBlock+i*(block+512)/512))
	}
	w.Write(bat)
	bitmap := bytes.Repeat([]byte{0xff}, 512)
	data := bytes.Repeat([]byte("bosh-stemcell-data-"), block/19+1)[:block]
	for i := uint64(0); i < entries; i++ {
		w.Write(bitmap)
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	w.Write(footer)
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
