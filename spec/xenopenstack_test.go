package spec

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
)

// openStackDisk is the disk of the OpenStack stemcells published to
// XenServer here: 9 MiB and a sector (not whole 2 MiB blocks), data at
// its start and end, zeros between.
func openStackDisk() []byte {
	d := make([]byte, 9<<20+512)
	copy(d, "bosh root disk")
	copy(d[len(d)-16:], "end of the disk")
	return d
}

// openStackImage is a stemcell image shaped as bosh.io's OpenStack
// stemcells: a tgz of root.img, QCOW2 or raw as format says.
func openStackImage(t testing.TB, format string) string {
	t.Helper()
	root := openStackDisk()
	if format == "qcow2" {
		root = testimages.QCOW2Of(root)
	}
	return writeImage(t, testimages.OpenStackTgz(root))
}

// openStackXenStemcell publishes bosh.io's OpenStack stemcell shape (its
// stemcell.MF says openstack, kvm) to the XenServer zone.
func (e *env) openStackXenStemcell(format string) string {
	e.t.Helper()
	var cid string
	e.call("create_stemcell", openStackImage(e.t, format), stemcellMF("openstack", "kvm", format)).ok(e.t).decode(e.t, &cid)
	return cid
}

// TestOpenStackStemcellOnXenServerLifecycle: in a XenServer zone, bosh.io's
// OpenStack stemcell becomes a VHD template (its image converted) of the
// HVM OS type; its VM reads its settings from a config drive ISO, gets
// path-only disk hints, and takes its ISO with it. The QCOW2 stemcell goes
// by upload, the raw one by WebDAV (template and config drive).
func TestOpenStackStemcellOnXenServerLifecycle(t *testing.T) {
	for _, c := range []struct{ format, publish string }{{"qcow2", "upload"}, {"raw", "webdav"}} {
		t.Run(c.format+"/"+c.publish, func(t *testing.T) {
			e := newEnv(t, func(cfg map[string]any) {
				configDriveBy(c.publish)(cfg)
				if c.publish == "webdav" {
					section(cfg, "stemcell")["publish"] = "webdav"
				}
			})
			openStackXenLifecycle(t, e, c.format)
		})
	}
}

func openStackXenLifecycle(t *testing.T, e *env, format string) {
	stemcell := e.openStackXenStemcell(format)
	id, ok := strings.CutPrefix(stemcell, "configdrive-")
	tpls := e.ourTemplates()
	if !ok || len(tpls) != 1 || tpls[0].Id != id || tpls[0].Hypervisor != "XenServer" || tpls[0].Format != "VHD" ||
		!tpls[0].Isready || !tpls[0].Requireshvm || tpls[0].Ostypename != "Other Linux (64-bit)" ||
		tpls[0].Size != int64(len(openStackDisk())) {
		t.Fatalf("create_stemcell %s: %+v", stemcell, tpls)
	}

	vm := e.createVM(stemcell, "10.1.1.82")
	settings := e.agentSettingsFromISO(vm)
	disks, _ := settings["disks"].(map[string]any)
	if settings["agent_id"] != "agent-10.1.1.82" || disks["ephemeral"] == nil {
		t.Fatalf("the agent read %v", settings)
	}
	isos := e.isos()
	if len(isos) != 1 || e.vm(vm).Isoid != isos[0].Id || isos[0].Ispublic || !isos[0].Isready {
		t.Fatalf("the VM's ISO: %+v", isos)
	}

	// The path alone, of a XenServer disk.
	e.configDriveVMEnd(vm, stemcell, func(hint map[string]any) bool {
		path, _ := hint["path"].(string)
		return len(hint) == 1 && strings.HasPrefix(path, "/dev/xvd")
	})
	e.assertNoTemplatesLeft()
}

// A zone that runs neither KVM nor XenServer takes no OpenStack stemcell:
// refused before the image is read, naming the zone's hypervisors.
func TestOpenStackStemcellInAVMwareZoneIsRefused(t *testing.T) {
	e := newEnv(t, nil, "-hypervisor", "VMware")
	r := e.call("create_stemcell", openStackImage(t, "qcow2"), stemcellMF("openstack", "kvm", "qcow2")).
		failed(t, "CloudError", "runs on KVM, or on XenServer")
	if !strings.Contains(r.Error.Message, "(VMware)") {
		t.Fatalf("the refusal does not name the zone's hypervisors: %s", r.Error.Message)
	}
	if calls := e.calls(); calls["getUploadParamsForTemplate"]+calls["registerTemplate"] != 0 {
		t.Fatalf("a refused stemcell reached CloudStack: %v", calls)
	}
}
