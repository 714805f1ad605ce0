package spec

import (
	"fmt"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// stemcellMF is the cloud_properties of a stemcell.MF.
func stemcellMF(infrastructure, hypervisor, diskFormat string, extra ...any) map[string]any {
	props := map[string]any{
		"name": "bosh-" + infrastructure + "-" + hypervisor + "-ubuntu-jammy-go_agent", "version": "1.42",
		"infrastructure": infrastructure, "hypervisor": hypervisor, "disk_format": diskFormat,
		"container_format": "bare", "os_type": "linux", "os_distro": "ubuntu", "architecture": "x86_64",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		props[extra[i].(string)] = extra[i+1]
	}
	return props
}

type imageCase struct {
	name, hypervisor string
	props            map[string]any
	image            func(t testing.TB) []byte
	format           string
}

func half(b []byte) []byte { return b[:len(b)/2] }

func bzippedVHD(t testing.TB) []byte { return bzippedVHDOf(t, 64<<20) }

func bzippedVHDOf(t testing.TB, size uint64) []byte {
	t.Helper()
	b, err := testimages.Bzip2(testimages.VHD(size))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var imageCases = []imageCase{
	{"cloudstack bzip2 VHD", "XenServer", stemcellMF("cloudstack", "xen", "vhdx"), bzippedVHD, "VHD"},
	{"QCOW2", "KVM", stemcellMF("openstack", "kvm", "qcow2"),
		func(testing.TB) []byte { return testimages.QCOW2(1 << 30) }, "QCOW2"},
	{"OpenStack tgz", "KVM", stemcellMF("openstack", "kvm", "qcow2"),
		func(testing.TB) []byte { return testimages.OpenStackTgz(testimages.QCOW2(1 << 30)) }, "QCOW2"},
	{"OVA", "VMware", stemcellMF("vsphere", "esxi", "ova"),
		func(testing.TB) []byte { return testimages.OVA() }, "OVA"},
	{"vSphere OVF tgz", "VMware", stemcellMF("vsphere", "esxi", "ovf"), func(testing.TB) []byte {
		e := testimages.OVFEntries()
		return testimages.Gzip(testimages.Tar(e[2], e[1], e[0])) // descriptor last
	}, "OVA"},
	{"raw tgz", "KVM", stemcellMF("openstack", "kvm", "raw"),
		func(testing.TB) []byte { return testimages.OpenStackTgz(make([]byte, 1<<20)) }, "RAW"},
}

func bzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	b, err := testimages.Bzip2(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// damagedBetween is vhd with 300 kB of incompressible data before its
// footer, bzip2'd into blocks of 100 kB, with a byte of the compressed
// data flipped halfway: the first and the last blocks decode, the one
// between does not.
func damagedBetween(t testing.TB, vhd []byte) []byte {
	t.Helper()
	data := make([]byte, 300000)
	rand.New(rand.NewSource(24)).Read(data)
	b := bzipped(t, append(append(append([]byte(nil), vhd[:len(vhd)-512]...), data...), vhd[len(vhd)-512:]...))
	b[len(b)/2] ^= 0xff
	return b
}

func writeImage(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "image")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// client reads CloudStack back as an operator's tools would.
func (e *env) client() *csgo.CloudStackClient {
	return csgo.NewClient(e.sim.URL, apiKey, secretKey, false)
}

// ourTemplates lists the account's own templates, one row per zone copy.
func (e *env) ourTemplates() []*csgo.Template {
	e.t.Helper()
	c := e.client()
	p := c.Template.NewListTemplatesParams("self")
	e.inProject(p)
	resp, err := c.Template.ListTemplates(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.Templates
}

func (e *env) assertNoTemplatesLeft() {
	e.t.Helper()
	if left := e.ourTemplates(); len(left) != 0 {
		e.t.Fatalf("%d templates left in CloudStack, first %q status %q", len(left), left[0].Name, left[0].Status)
	}
}

func webdavConfig(cfg map[string]any) {
	section(cfg, "stemcell")["publish"] = "webdav"
	section(cfg, "webdav")["listen"] = "127.0.0.1:0"
}

func TestStemcellsPublishAndDelete(t *testing.T) {
	for _, publish := range []string{"upload", "webdav"} {
		for _, c := range imageCases {
			t.Run(publish+"/"+c.name, func(t *testing.T) {
				e := newEnv(t, func(cfg map[string]any) {
					if publish == "webdav" {
						webdavConfig(cfg)
					}
				}, "-hypervisor", c.hypervisor)
				stemcellPublishAndDelete(t, e, c)
			})
		}
	}
}

// stemcellPublishAndDelete is the stemcell lifecycle, run outside and
// inside a CloudStack project.
func stemcellPublishAndDelete(t *testing.T, e *env, c imageCase) {
	var cid string
	e.call("create_stemcell", writeImage(t, c.image(t)), c.props).ok(t).decode(t, &cid)
	// bosh.io's OpenStack stemcells on KVM get a config drive by
	// default, its vSphere stemcells a CD-ROM, which their CID says.
	id, configDrive := strings.CutPrefix(cid, "configdrive-")
	id, cdrom := strings.CutPrefix(id, "cdrom-")
	if configDrive != (c.props["infrastructure"] == "openstack") || cdrom != (c.props["infrastructure"] == "vsphere") {
		t.Errorf("stemcell CID %s", cid)
	}
	tpls := e.ourTemplates()
	if len(tpls) != 1 || tpls[0].Id != id || !tpls[0].Isready || tpls[0].Format != c.format ||
		tpls[0].Hypervisor != c.hypervisor || !strings.Contains(tpls[0].Name, "1.42") {
		t.Fatalf("listTemplates after create_stemcell %s: %+v", cid, tpls)
	}
	if tpls[0].Ispublic {
		t.Error("stemcell templates must not be public by default")
	}
	e.call("delete_stemcell", cid).ok(t)
	e.assertNoTemplatesLeft()
	e.call("delete_stemcell", cid).ok(t) // idempotent
}

func TestLightStemcells(t *testing.T) {
	e := newEnv(t, nil)
	var golden string
	e.call("create_stemcell", writeImage(t, bzippedVHD(t)), stemcellMF("cloudstack", "xen", "vhdx")).ok(t).decode(t, &golden)
	name := e.ourTemplates()[0].Name
	for _, props := range []map[string]any{
		stemcellMF("cloudstack", "xen", "vhdx", "template_id", golden),
		stemcellMF("cloudstack", "xen", "vhdx", "template_name", name),
		stemcellMF("cloudstack", "xen", "vhdx", "light_template", name), // the Java CPI's
	} {
		e.resetCalls()
		var cid string
		e.call("create_stemcell", "", props).ok(t).decode(t, &cid)
		if cid != "light-"+golden {
			t.Fatalf("light stemcell cid %q", cid)
		}
		if calls := e.calls(); calls["getUploadParamsForTemplate"]+calls["registerTemplate"] != 0 {
			t.Fatalf("a light stemcell uploaded something: %v", calls)
		}
		e.call("delete_stemcell", cid).ok(t)
		if len(e.ourTemplates()) != 1 {
			t.Fatal("deleting a light stemcell deleted its template")
		}
	}
	e.call("create_stemcell", "", stemcellMF("cloudstack", "xen", "vhdx", "template_name", "no-such-template")).
		failed(t, "CloudError", `"no-such-template" does not exist`)
	e.call("create_stemcell", "", stemcellMF("cloudstack", "xen", "vhdx", "template_id", "6a1b1f7e-1111-4111-8111-111111111111")).
		failed(t, "CloudError", "does not exist")
	e.call("create_stemcell", "", stemcellMF("cloudstack", "xen", "vhdx", "light_template", "no-such-template")).
		failed(t, "CloudError", `"no-such-template" does not exist`)
	e.call("create_stemcell", "", stemcellMF("cloudstack", "xen", "vhdx", "light_template", name, "template_name", "other")).
		failed(t, "CloudError", "name different templates")
}

func TestConcurrentWebDAVPublications(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	e := newEnv(t, func(cfg map[string]any) {
		webdavConfig(cfg)
		section(cfg, "webdav")["listen"] = "127.0.0.1:" + strconv.Itoa(port) + "-" + strconv.Itoa(port+10)
	})
	image := writeImage(t, bzippedVHD(t))
	cids := make([]string, 4)
	var wg sync.WaitGroup
	for i := range cids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			props := stemcellMF("cloudstack", "xen", "vhdx")
			props["version"] = fmt.Sprintf("1.%d", i)
			r := e.call("create_stemcell", image, props)
			if r.Error == nil {
				_ = jsonString(r.Result, &cids[i])
			} else {
				t.Errorf("call %d: %s", i, r.Error.Message)
			}
		}(i)
	}
	wg.Wait()
	if tpls := e.ourTemplates(); len(tpls) != 4 {
		t.Fatalf("%d templates after four parallel create_stemcell calls", len(tpls))
	}
	for _, cid := range cids {
		e.call("delete_stemcell", cid).ok(t)
	}
	e.assertNoTemplatesLeft()
}

func TestStemcellBadInputLeavesNothing(t *testing.T) {
	xen := stemcellMF("cloudstack", "xen", "vhdx")
	vhd := testimages.VHD(64 << 20)
	cases := []struct {
		name  string
		image string // path; written from data when empty
		data  []byte
		props map[string]any
		want  string
	}{
		{"missing image", "/nonexistent/image", nil, xen, "opening stemcell image"},
		{"image is a directory", os.TempDir(), nil, xen, "not a regular file"},
		{"qcow2 declared vhdx", "", testimages.QCOW2(1 << 30), xen, "not the VHD"},
		{"truncated VHD", "", vhd[:len(vhd)-1000], xen, "truncated"},
		{"truncated bzip2", "", half(bzippedVHD(t)), xen, "truncated or corrupt"},
		// Issue 24.8: a VHD the director's image starts with, then something else.
		{"bzip2 VHD, then other bytes", "", bzipped(t, append(append([]byte(nil), vhd...), "other bytes"...)), xen,
			"holds a VHD that does not end with its footer"},
		{"bzip2 VHD without its footer", "", bzipped(t, vhd[:len(vhd)-512]), xen, "holds a VHD that does not end with its footer"},
		{"unknown hypervisor", "", vhd, stemcellMF("cloudstack", "hyperv", "vhdx"), `unknown stemcell hypervisor "hyperv"`},
		{"unknown format", "", vhd, stemcellMF("cloudstack", "xen", "vdi"), `unknown stemcell disk_format "vdi"`},
		{"unknown zone", "", vhd, stemcellMF("cloudstack", "xen", "vhdx", "zones", []string{"atlantis"}), `no zone "atlantis"`},
		{"unknown OS type", "", vhd, stemcellMF("cloudstack", "xen", "vhdx", "cloudstack_os_type", "TempleOS"), `no OS type "TempleOS"`},
	}
	e := newEnv(t, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.image
			if path == "" {
				path = writeImage(t, c.data)
			}
			e.call("create_stemcell", path, c.props).failed(t, "CloudError", c.want)
		})
	}
	if calls := e.calls(); calls["getUploadParamsForTemplate"]+calls["registerTemplate"] != 0 {
		t.Fatalf("bad input created a template: %v", calls)
	}
	e.assertNoTemplatesLeft()
}

func TestStemcellFailuresInCloudStackLeaveNothing(t *testing.T) {
	vhd := testimages.VHD(64 << 20)
	// The first and last blocks of the bzip2 data, which the CPI reads,
	// are sound; a block between them is damaged, which only CloudStack's
	// own check of the whole image finds.
	damaged := damagedBetween(t, vhd)
	xen := stemcellMF("cloudstack", "xen", "vhdx")

	t.Run("upload refused", func(t *testing.T) {
		e := newEnv(t, nil)
		err := e.sim.Admin.AddFault(simulator.Fault{Command: "upload", ErrorCode: 400,
			ErrorText: "File type mismatch between the sent file and the actual content"})
		if err != nil {
			t.Fatal(err)
		}
		e.call("create_stemcell", writeImage(t, vhd), xen).failed(t, "CloudError", "File type mismatch")
		e.assertNoTemplatesLeft()
	})
	for _, publish := range []string{"upload", "webdav"} {
		t.Run("damaged image through "+publish, func(t *testing.T) {
			e := newEnv(t, func(cfg map[string]any) {
				if publish == "webdav" {
					webdavConfig(cfg)
				}
			})
			r := e.call("create_stemcell", writeImage(t, damaged), xen).failed(t, "CloudError", "bzip2 data invalid")
			if !strings.Contains(r.Error.Message, "deleted") {
				t.Errorf("the error should say the template was deleted: %s", r.Error.Message)
			}
			e.assertNoTemplatesLeft()
		})
	}
	t.Run("timeout", func(t *testing.T) {
		e := newEnv(t, func(cfg map[string]any) {
			webdavConfig(cfg)
			section(cfg, "stemcell")["timeout"] = "1s"
		}, "-template-latency", "2s")
		e.call("create_stemcell", writeImage(t, vhd), xen).failed(t, "CloudError", "was not ready after")
		e.assertNoTemplatesLeft()
	})
	t.Run("unreachable webdav URL", func(t *testing.T) {
		e := newEnv(t, func(cfg map[string]any) {
			webdavConfig(cfg)
			section(cfg, "webdav")["public_url"] = "http://10.255.255.1"
		})
		e.call("create_stemcell", writeImage(t, vhd), xen).failed(t, "CloudError", "secstorage.allowed.internal.sites")
		e.assertNoTemplatesLeft()
	})
}

func TestStemcellInTwoZones(t *testing.T) {
	for _, publish := range []string{"upload", "webdav"} {
		t.Run(publish, func(t *testing.T) {
			e := newEnv(t, func(cfg map[string]any) {
				if publish == "webdav" {
					webdavConfig(cfg)
				}
				section(cfg, "stemcell")["zones"] = []string{zoneName, "Sandbox-simulator-2"}
			}, "-extra-zone", "Sandbox-simulator-2")
			var cid string
			e.call("create_stemcell", writeImage(t, bzippedVHD(t)), stemcellMF("cloudstack", "xen", "vhdx")).ok(t).decode(t, &cid)
			tpls := e.ourTemplates()
			zones := map[string]bool{}
			for _, tpl := range tpls {
				if tpl.Id != cid || !tpl.Isready {
					t.Fatalf("copy %+v", tpl)
				}
				zones[tpl.Zonename] = true
			}
			if len(zones) != 2 {
				t.Fatalf("template in zones %v", zones)
			}
			e.call("delete_stemcell", cid).ok(t)
			e.assertNoTemplatesLeft()
		})
	}
}
