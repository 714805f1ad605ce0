package cpi

import "github.com/cloudfoundry/bosh-cpi-go/apiv1"

// StemcellFormats are the stemcell formats create_stemcell accepts: the
// CloudStack stemcell (XenServer), OpenStack's (KVM) and vSphere's (VMware).
var StemcellFormats = []string{"cloudstack-vhdx", "openstack-qcow2", "openstack-raw", "vsphere-ova", "vsphere-ovf"}

// misc is the part that asks nothing of CloudStack.
type misc struct{}

// Info implements apiv1.CPI; bosh-cpi-go fills in api_version 2.
func (misc) Info() (apiv1.Info, error) {
	return apiv1.Info{StemcellFormats: StemcellFormats}, nil
}
