package cpi

import (
	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell"
)

// StemcellFormats are the stemcell formats create_stemcell accepts: the
// CloudStack stemcell (XenServer), OpenStack's (KVM, or XenServer
// converted) and vSphere's (VMware).
var StemcellFormats = []string{"cloudstack-vhdx", "openstack-qcow2", "openstack-raw", "vsphere-ova", "vsphere-ovf"}

// formatStemcells are each format's stemcell.MF cloud_properties as
// bosh.io's stemcells (and the CloudStack one) carry them.
var formatStemcells = map[string]stemcellProps{
	"cloudstack-vhdx": {Infrastructure: "cloudstack", Hypervisor: "xen", DiskFormat: "vhdx"},
	"openstack-qcow2": {Infrastructure: "openstack", Hypervisor: "kvm", DiskFormat: "qcow2"},
	"openstack-raw":   {Infrastructure: "openstack", Hypervisor: "kvm", DiskFormat: "raw"},
	"vsphere-ova":     {Infrastructure: "vsphere", Hypervisor: "esxi", DiskFormat: "ova"},
	"vsphere-ovf":     {Infrastructure: "vsphere", Hypervisor: "esxi", DiskFormat: "ovf"},
}

// formats is the part behind info: the stemcell formats this
// configuration serves, which it tells without asking CloudStack.
type formats struct{ cfg config.Stemcell }

// Info implements apiv1.CPI; bosh-cpi-go fills in api_version 2. The
// director calls it often, so it asks CloudStack nothing: the formats are
// those a VM can be made of end to end with this configuration alone.
func (m formats) Info() (apiv1.Info, error) {
	return apiv1.Info{StemcellFormats: ServedFormats(m.cfg)}, nil
}

// ServedFormats are the StemcellFormats whose stemcell create_vm can boot
// with its agent settings under cfg: the hypervisor stemcell.hypervisor
// names (when set) must take the stemcell's image, and bosh.io's OpenStack
// and vSphere stemcells, whose agents never read CloudStack's user data,
// need their per-VM ISO (config_drive), except on the Simulator, which
// boots nothing. Whether the zones run that hypervisor create_stemcell
// checks.
func ServedFormats(cfg config.Stemcell) []string {
	var out []string
	for _, name := range StemcellFormats {
		props := formatStemcells[name]
		target, err := stemcell.Choose(stemcell.Spec{Infrastructure: props.Infrastructure, Hypervisor: props.Hypervisor,
			DiskFormat: props.DiskFormat, CloudStackHypervisor: cfg.Hypervisor})
		if err != nil {
			continue
		}
		if props.Infrastructure == "cloudstack" || target.Hypervisor == hypervisor.Simulator ||
			(driveOf(props, target) != noDrive && cfg.ConfigDriveOn()) {
			out = append(out, name)
		}
	}
	return out
}
