// Package cloudprops is the cloud_properties of a BOSH disk type and of a
// network as the CPI reads them: Disk (create_disk, update_disk) and
// Network (create_vm's network plan), each with its strict reading. cpi/
// and doctor/ import it, so doctor refuses what the CPI would refuse. A VM
// type's cloud_properties live in vmtype/ beside the compute offering they
// choose. A leaf: it imports only internal/jsonwords, never cpi/.
package cloudprops

import "github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"

// Disk is a disk type's cloud_properties.
type Disk struct {
	DiskOffering string `json:"disk_offering"`
}

// ReadDisk decodes a disk type's cloud_properties, refusing unknown keys as
// vmtype.Read does: a misspelt disk_offering must not silently become the
// default offering. owner names whose they are in the error ("disk":
// `disk cloud_properties: unknown field "disk_ofering"`).
func ReadDisk(cp any, owner string) (Disk, error) {
	var props Disk
	return props, jsonwords.DecodeStrict(cp, &props, owner)
}

// Network is a network's cloud_properties. undiscoverable is the Go CPI's
// key: such a network is not the VM's first NIC, which CloudStack makes its
// default one, unless every network is undiscoverable.
type Network struct {
	Name           string         `json:"name"`
	Undiscoverable jsonwords.Bool `json:"undiscoverable"`
}

// ReadNetwork decodes a network's cloud_properties, refusing unknown keys
// like VM and disk keys: a misspelt name must not leave the VM on another
// network. owner names whose they are in the error (`network "private"`).
func ReadNetwork(cp any, owner string) (Network, error) {
	var props Network
	return props, jsonwords.DecodeStrict(cp, &props, owner)
}
