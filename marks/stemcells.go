package marks

// The CID create_stemcell answers says where the stemcell's VMs read their
// settings, so that create_vm needs no listTemplates call to know it (the
// template's mark records it too, ConfigDriveTag): a prefix before the
// template id.
const (
	// ConfigDriveCIDPrefix opens the CID of a stemcell whose VMs read
	// their settings from a per-VM config drive ISO (bosh.io's OpenStack
	// KVM stemcells).
	ConfigDriveCIDPrefix = "configdrive-"
	// CDROMCIDPrefix opens the CID of a stemcell whose VMs read their
	// settings from a per-VM CD-ROM holding env (bosh.io's vSphere
	// stemcells on VMware): the same ISO machinery, another image.
	CDROMCIDPrefix = "cdrom-"
)
