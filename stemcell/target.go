// Package stemcell turns a stemcell's image into something CloudStack
// accepts as a template: which hypervisor and format it is, a check that the
// bytes really are that format, unpacking OpenStack- and vSphere-style
// tarballs, and a streamed upload to the secondary storage VM.
package stemcell

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
)

// CloudStack's template formats.
const (
	VHD   = "VHD"
	QCOW2 = "QCOW2"
	OVA   = "OVA"
	RAW   = "RAW"
)

// Spec is what the stemcell says of itself (stemcell.MF cloud_properties)
// and what an operator overrides.
type Spec struct {
	Infrastructure string // cloudstack, openstack, vsphere, …
	Hypervisor     string // xen, kvm, esxi, …
	DiskFormat     string // vhdx, vhd, qcow2, ova, ovf, raw
	// CloudStackHypervisor, when set, wins over what the stemcell says.
	CloudStackHypervisor string
}

// Target is the CloudStack hypervisor and format the image is registered as.
type Target struct {
	Hypervisor hypervisor.Name
	Format     string
	// From is the stemcell's own format when Prepare converts it to
	// Format on the way (bosh.io's OpenStack images for XenServer); empty
	// when the image goes as it is.
	From string
}

var hypervisorNames = map[string]hypervisor.Name{
	"xen": hypervisor.XenServer, "xenserver": hypervisor.XenServer, "xcp-ng": hypervisor.XenServer,
	"kvm": hypervisor.KVM, "qemu": hypervisor.KVM,
	"esxi": hypervisor.VMware, "vsphere": hypervisor.VMware, "vmware": hypervisor.VMware,
	"simulator": hypervisor.Simulator,
}

var infrastructureHypervisors = map[string]hypervisor.Name{
	"cloudstack": hypervisor.XenServer, "openstack": hypervisor.KVM, "vsphere": hypervisor.VMware,
}

var formatNames = map[string]string{
	"vhdx": VHD, "vhd": VHD, "qcow2": QCOW2, "ova": OVA, "ovf": OVA, "raw": RAW, "files": RAW,
}

var defaultFormats = map[hypervisor.Name]string{
	hypervisor.XenServer: VHD, hypervisor.KVM: QCOW2, hypervisor.VMware: OVA, hypervisor.Simulator: VHD,
}

// conversions are the formats Prepare converts, by hypervisor, for
// bosh.io's OpenStack stemcells: XenServer takes VHD templates only (its
// resource copies a template to primary storage as a VHD,
// XenServerStorageProcessor.copy_vhd_from_secondarystorage), and their
// raw or QCOW2 image becomes a dynamic VHD (package diskimage).
var conversions = map[hypervisor.Name]map[string]string{hypervisor.XenServer: {QCOW2: VHD, RAW: VHD}}

// formats each hypervisor can boot from a template.
var supported = map[hypervisor.Name][]string{
	hypervisor.XenServer: {VHD},
	hypervisor.KVM:       {QCOW2, RAW},
	hypervisor.VMware:    {OVA},
	hypervisor.Simulator: {VHD, QCOW2, OVA, RAW},
}

// Choose decides the hypervisor and format, or says which value is unknown.
func Choose(s Spec) (Target, error) {
	hv, err := chooseHypervisor(s)
	if err != nil {
		return Target{}, err
	}
	format := defaultFormats[hv]
	if s.DiskFormat != "" {
		f, ok := formatNames[strings.ToLower(s.DiskFormat)]
		if !ok {
			return Target{}, fmt.Errorf("unknown stemcell disk_format %q (known: vhdx, vhd, qcow2, ova, ovf, raw)", s.DiskFormat)
		}
		format = f
	}
	for _, f := range supported[hv] {
		if f == format {
			return Target{Hypervisor: hv, Format: format}, nil
		}
	}
	if to, ok := conversions[hv][format]; ok && strings.EqualFold(s.Infrastructure, "openstack") {
		return Target{Hypervisor: hv, Format: to, From: format}, nil
	}
	return Target{}, fmt.Errorf("CloudStack's %s hypervisor cannot boot a %s template (it takes %s)",
		hv, format, strings.Join(supported[hv], ", "))
}

func chooseHypervisor(s Spec) (hypervisor.Name, error) {
	if s.CloudStackHypervisor != "" {
		if hv, ok := hypervisorNames[strings.ToLower(s.CloudStackHypervisor)]; ok {
			return hv, nil
		}
		return "", fmt.Errorf("unknown CloudStack hypervisor %q (known: hypervisor.XenServer, hypervisor.KVM, hypervisor.VMware, hypervisor.Simulator)", s.CloudStackHypervisor)
	}
	if s.Hypervisor != "" {
		if hv, ok := hypervisorNames[strings.ToLower(s.Hypervisor)]; ok {
			return hv, nil
		}
		return "", fmt.Errorf("unknown stemcell hypervisor %q (known: xen, kvm, esxi)", s.Hypervisor)
	}
	if hv, ok := infrastructureHypervisors[strings.ToLower(s.Infrastructure)]; ok {
		return hv, nil
	}
	return "", fmt.Errorf("cannot tell the hypervisor of a stemcell for infrastructure %q with no hypervisor", s.Infrastructure)
}
