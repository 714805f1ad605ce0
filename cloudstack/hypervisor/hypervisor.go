// Package hypervisor names CloudStack's hypervisors as CloudStack spells
// them (Hypervisor.HypervisorType), the one home of these names. It is a
// leaf: cloudstack/ types a VM's and a zone's hypervisor with it, and
// stemcell/, a leaf that does not import cloudstack/ (nor its client),
// chooses a template's.
package hypervisor

// Name is a hypervisor as CloudStack names it. Only the names the CPI
// treats apart are constants; any other value (Hyperv, Ovm3, …) is kept as
// CloudStack gives it.
type Name string

// The hypervisors whose guests name their disks differently, whose
// templates take different formats, and the Simulator's, which boots none.
const (
	XenServer Name = "XenServer"
	KVM       Name = "KVM"
	VMware    Name = "VMware"
	Simulator Name = "Simulator"
)
