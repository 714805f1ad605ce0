package cloudstack

import "github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"

// Hypervisor is the hypervisor a VM, a zone's cluster or a template runs on,
// as CloudStack names it; the names are package hypervisor's.
type Hypervisor = hypervisor.Name
