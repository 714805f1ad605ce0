package stemcell_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell"
)

func write(t *testing.T, name string, data []byte) string {
	t.Helper()
	p, err := testimages.Write(t.TempDir(), name, data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func bz(t *testing.T, data []byte) []byte {
	t.Helper()
	out, err := testimages.Bzip2(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestChoose(t *testing.T) {
	cases := []struct {
		spec stemcell.Spec
		want stemcell.Target
	}{
		{stemcell.Spec{Infrastructure: "cloudstack", Hypervisor: "xen", DiskFormat: "vhdx"}, stemcell.Target{Hypervisor: "XenServer", Format: "VHD"}},
		{stemcell.Spec{Infrastructure: "openstack", Hypervisor: "kvm", DiskFormat: "qcow2"}, stemcell.Target{Hypervisor: "KVM", Format: "QCOW2"}},
		{stemcell.Spec{Infrastructure: "openstack", DiskFormat: "raw"}, stemcell.Target{Hypervisor: "KVM", Format: "RAW"}},
		{stemcell.Spec{Infrastructure: "vsphere", Hypervisor: "esxi", DiskFormat: "ovf"}, stemcell.Target{Hypervisor: "VMware", Format: "OVA"}},
		{stemcell.Spec{Infrastructure: "cloudstack", Hypervisor: "xen", DiskFormat: "vhdx", CloudStackHypervisor: "simulator"}, stemcell.Target{Hypervisor: "Simulator", Format: "VHD"}},
		{stemcell.Spec{Infrastructure: "openstack", CloudStackHypervisor: "KVM"}, stemcell.Target{Hypervisor: "KVM", Format: "QCOW2"}},
	}
	for _, c := range cases {
		got, err := stemcell.Choose(c.spec)
		if err != nil || got != c.want {
			t.Errorf("Choose(%+v) = %+v, %v; want %+v", c.spec, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		spec stemcell.Spec
		want string
	}{
		{stemcell.Spec{Hypervisor: "hyperv"}, `unknown stemcell hypervisor "hyperv"`},
		{stemcell.Spec{Hypervisor: "xen", DiskFormat: "vmdk2"}, `unknown stemcell disk_format "vmdk2"`},
		{stemcell.Spec{Hypervisor: "xen", DiskFormat: "qcow2"}, "XenServer hypervisor cannot boot a QCOW2"},
		{stemcell.Spec{CloudStackHypervisor: "Hyper-V"}, `unknown CloudStack hypervisor "Hyper-V"`},
		{stemcell.Spec{Infrastructure: "aws"}, `infrastructure "aws"`},
	} {
		if _, err := stemcell.Choose(bad.spec); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Choose(%+v) = %v; want %q", bad.spec, err, bad.want)
		}
	}
}

var (
	xen   = stemcell.Target{Hypervisor: "XenServer", Format: "VHD"}
	kvm   = stemcell.Target{Hypervisor: "KVM", Format: "QCOW2"}
	raw   = stemcell.Target{Hypervisor: "KVM", Format: "RAW"}
	vmw   = stemcell.Target{Hypervisor: "VMware", Format: "OVA"}
	vhd   = testimages.VHD(64 << 20)
	qcow2 = testimages.QCOW2(1 << 30)
)

func TestPrepareAcceptsWhatStemcellsShip(t *testing.T) {
	rawDisk := bytes.Repeat([]byte{0}, 4096)
	cases := []struct {
		name   string
		data   []byte
		target stemcell.Target
		ext    string
		temp   bool
	}{
		{"cloudstack bzip2 VHD", bz(t, vhd), xen, ".vhd.bz2", false},
		{"bzip2 VHD of many blocks", bz(t, bigVHD), xen, ".vhd.bz2", false},
		{"plain VHD", vhd, xen, ".vhd", false},
		{"gzip VHD", testimages.Gzip(vhd), xen, ".vhd.gz", false},
		{"qcow2", qcow2, kvm, ".qcow2", false},
		{"openstack tgz", testimages.OpenStackTgz(qcow2), kvm, ".qcow2", true},
		{"raw tgz", testimages.OpenStackTgz(rawDisk), raw, ".img", true},
		{"ova", testimages.OVA(), vmw, ".ova", false},
		{"vsphere tgz, descriptor last", testimages.Gzip(testimages.Tar(reverse(testimages.OVFEntries())...)), vmw, ".ova", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := write(t, "image", c.data)
			img, err := stemcell.Prepare(path, c.target, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer img.Cleanup()
			st, _ := os.Stat(img.Path)
			if img.Extension != c.ext || (img.Path != path) != c.temp || st.Size() != img.Size {
				t.Fatalf("got %+v", img)
			}
			if c.target.Format == "OVA" {
				assertOVFFirst(t, img.Path)
			}
			if c.temp {
				img.Cleanup()
				if _, err := os.Stat(img.Path); !os.IsNotExist(err) {
					t.Error("cleanup left the unpacked file")
				}
			}
		})
	}
}

func half(b []byte) []byte { return b[:len(b)/2] }

func truncated(b []byte, n int) []byte { return b[:len(b)-n] }

// bigVHD is a VHD of 300 kB of incompressible data: bzip2 -1 makes
// several blocks of it.
var bigVHD = func() []byte {
	data := make([]byte, 300000)
	rand.New(rand.NewSource(7)).Read(data)
	return append(append(slices.Clone(vhd[:len(vhd)-512]), data...), vhd[len(vhd)-512:]...)
}()

func reverse(e []testimages.Entry) []testimages.Entry {
	out := make([]testimages.Entry, len(e))
	for i := range e {
		out[len(e)-1-i] = e[i]
	}
	return out
}

func assertOVFFirst(t *testing.T, path string) {
	t.Helper()
	f, _ := os.Open(path)
	defer f.Close()
	tr := tar.NewReader(f)
	hdr, err := tr.Next()
	if err != nil || !strings.HasSuffix(hdr.Name, ".ovf") {
		t.Fatalf("first entry %v %v", hdr, err)
	}
	n := 1
	for {
		if _, err := tr.Next(); err != nil {
			break
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d entries in the OVA", n)
	}
}

func TestPrepareRefusesMismatchesAndTruncation(t *testing.T) {
	cases := []struct {
		name   string
		data   []byte
		target stemcell.Target
		want   string
	}{
		{"qcow2 declared VHD", qcow2, xen, "not the VHD"},
		{"bzip2 qcow2 declared VHD", bz(t, qcow2), xen, "bzip2-compressed QCOW2"},
		{"VHD declared QCOW2", bz(t, vhd), kvm, "not the QCOW2"},
		{"truncated VHD", vhd[:len(vhd)-100], xen, "truncated"},
		// Issue 24.8: the start of a VHD, then something else.
		{"bzip2 VHD, then other bytes", bz(t, append(slices.Clone(vhd), "other bytes"...)), xen,
			"holds a VHD that does not end with its footer: other bytes follow the VHD"},
		{"bzip2 VHD, then another VHD's footer", bz(t, append(slices.Clone(vhd), testimages.VHD(1 << 30)[:512]...)), xen,
			"is not the footer copy its VHD starts with"},
		{"bzip2 VHD cut short", bz(t, bigVHD[:len(bigVHD)-600]), xen, "does not end with its footer"},
		{"bzip2 data cut short", truncated(bz(t, bigVHD), 10), xen, "does not end with bzip2's end-of-stream marker"},
		{"truncated qcow2", qcow2[:70000], kvm, "truncated"},
		{"truncated openstack tgz", half(testimages.OpenStackTgz(qcow2)), kvm, "unpacking"},
		{"tgz without root.img", testimages.Gzip(testimages.Tar(testimages.Entry{Name: "x", Data: []byte("y")})), kvm, "no root.img"},
		{"raw tgz holding qcow2", testimages.OpenStackTgz(qcow2), raw, "QCOW2 data"},
		{"ova without descriptor first", testimages.Tar(reverse(testimages.OVFEntries())...), vmw, "must begin with its .ovf"},
		{"text declared OVA", []byte("hello"), vmw, "not the OVA"},
		{"empty file", nil, xen, "not the VHD"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := write(t, "image", c.data)
			_, err := stemcell.Prepare(path, c.target, dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Fatalf("left %d files behind", len(left))
			}
		})
	}
	if _, err := stemcell.Prepare("/nonexistent/image", xen, t.TempDir()); err == nil || !strings.Contains(err.Error(), "opening stemcell image") {
		t.Fatalf("missing image: %v", err)
	}
	if _, err := stemcell.Prepare(t.TempDir(), xen, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("directory: %v", err)
	}
}

func TestUploadStreamsAMultipartFileWithLengthAndHeaders(t *testing.T) {
	data := bz(t, vhd)
	var got struct {
		length                      int64
		sig, meta, expires, file    string
		body                        []byte
		transferEncoding, mediaType string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.length = r.ContentLength
		got.sig, got.meta, got.expires = r.Header.Get("X-Signature"), r.Header.Get("X-Metadata"), r.Header.Get("X-Expires")
		got.transferEncoding = strings.Join(r.TransferEncoding, ",")
		mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		got.mediaType = mt
		part, err := multipart.NewReader(r.Body, params["boundary"]).NextPart()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got.file = part.FileName()
		got.body, _ = io.ReadAll(part)
		io.WriteString(w, "upload successful.")
	}))
	defer srv.Close()
	img, err := stemcell.Prepare(write(t, "image", data), xen, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	progress := stemcell.Progress{Label: "upload", Log: func(f string, a ...any) { lines = append(lines, f) }}
	err = stemcell.Upload(context.Background(), srv.Client(), stemcell.UploadTarget{URL: srv.URL + "/upload/x",
		Signature: "sig", Metadata: "meta", Expires: "exp"}, img, "bosh-stemcell-1", progress)
	if err != nil {
		t.Fatal(err)
	}
	if got.sig != "sig" || got.meta != "meta" || got.expires != "exp" || got.file != "bosh-stemcell-1.vhd.bz2" ||
		!bytes.Equal(got.body, data) || got.length <= int64(len(data)) || got.transferEncoding != "" ||
		got.mediaType != "multipart/form-data" {
		t.Fatalf("server saw %+v", got)
	}
	if len(lines) == 0 {
		t.Fatal("no progress line")
	}
}

func TestUploadRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "File type mismatch between the sent file and the actual content", http.StatusBadRequest)
	}))
	defer srv.Close()
	img, _ := stemcell.Prepare(write(t, "image", vhd), xen, t.TempDir())
	err := stemcell.Upload(context.Background(), srv.Client(), stemcell.UploadTarget{URL: srv.URL}, img, "n", stemcell.Progress{})
	var refused *stemcell.UploadRefusedError
	if !errors.As(err, &refused) || refused.Status != 400 || !strings.Contains(err.Error(), "File type mismatch") {
		t.Fatalf("got %v", err)
	}
}

// TestPrepareRefusesSpecialFilesBeforeOpeningThem: opening a FIFO blocks
// until a writer comes, so Prepare must refuse it (and sockets, devices,
// directories) from a look at the path alone, and promptly.
func TestPrepareRefusesSpecialFilesBeforeOpeningThem(t *testing.T) {
	dir := t.TempDir()
	fifo := dir + "/fifo"
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := dir + "/sock"
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := dir + "/link-to-fifo"
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{fifo: "a named pipe (FIFO)", link: "a named pipe (FIFO)", sock: "a socket",
		"/dev/null": "a character device", dir: "a directory"}
	for path, want := range cases {
		done := make(chan error, 1)
		go func() {
			_, err := stemcell.Prepare(path, xen, t.TempDir())
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want+", not a regular file") {
				t.Errorf("%s: got %v, want %q", path, err, want)
			}
		case <-time.After(5 * time.Second):
			// Unblock the goroutine so the test leaves nothing behind.
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			t.Fatalf("%s: Prepare blocked: it opened the special file", path)
		}
	}
}
