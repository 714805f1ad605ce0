package cloudstack

// Hypervisor is the hypervisor a VM runs on, as CloudStack names it
// (Hypervisor.HypervisorType). Only the names the CPI treats apart are
// constants; any other value (Simulator, Hyperv, Ovm3, …) is kept as given.
type Hypervisor string

// The hypervisors whose guests name their disks differently.
const (
	XenServer Hypervisor = "XenServer"
	KVM       Hypervisor = "KVM"
	VMware    Hypervisor = "VMware"
)
