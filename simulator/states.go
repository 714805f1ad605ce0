package simulator

// The states the simulator's rows pass through, spelt as CloudStack's enums
// spell them on the wire: the response builders write a state's toString(),
// e.g. UserVmJoinDaoImpl.newUserVmResponse's
// setState(userVm.getState().toString()).
// Snapshot, template and rule states stand beside their families
// (snapshots.go, templates.go, rules.go).

// VirtualMachine.State (api/…/com/cloud/vm/VirtualMachine.java): the states
// a user VM's row takes; its transitions are VirtualMachine.State.s_fsm's
// (the simulator never puts a VM in Shutdown).
const (
	vmStarting  = "Starting"
	vmRunning   = "Running"
	vmStopping  = "Stopping"
	vmStopped   = "Stopped"
	vmDestroyed = "Destroyed"
	vmExpunging = "Expunging"
	vmMigrating = "Migrating"
	vmError     = "Error"
	vmUnknown   = "Unknown"
)

// Volume.State (api/…/com/cloud/storage/Volume.java; transitions in
// Volume.State.s_fsm: Allocated → Destroy on DestroyRequested, Destroy →
// Ready on RecoverRequested, Expunging → Expunged). A created volume is Allocated (in the database only) until
// it is attached to a VM whose disks exist on primary storage, or that VM
// starts; it is Ready from then on. Destroy is the recoverable state
// destroyVolume and a VM's destroy leave; Expunged the end.
const (
	volumeAllocated = "Allocated"
	volumeReady     = "Ready"
	volumeDestroy   = "Destroy"
	volumeExpunged  = "Expunged"
)

// Network.State: Allocated until implemented, Setup for a network whose
// VLAN the caller gave, Implemented once it has resources.
const (
	networkAllocated   = "Allocated"
	networkSetup       = "Setup"
	networkImplemented = "Implemented"
)

// IpAddress.State.
const (
	ipAllocating = "Allocating"
	ipAllocated  = "Allocated"
	ipFree       = "Free"
)

// A host's Status (com.cloud.host.Status) as the simulator keeps it: every
// simulated host is Up.
const hostUp = "Up"

// ResourceState: the administrative state of a host, which
// prepareHostForMaintenance and cancelHostMaintenance move.
const (
	resourceEnabled                      = "Enabled"
	resourceDisabled                     = "Disabled"
	resourcePrepareForMaintenance        = "PrepareForMaintenance"
	resourceErrorInPrepareForMaintenance = "ErrorInPrepareForMaintenance"
	resourceMaintenance                  = "Maintenance"
	resourceErrorInMaintenance           = "ErrorInMaintenance"
)

// Grouping.AllocationState: whether a zone (and what it holds) takes new
// resources. valueOf is case-sensitive (checkAllocationState).
const (
	allocationEnabled  = "Enabled"
	allocationDisabled = "Disabled"
)

// PhysicalNetwork.State.
const (
	physnetEnabled  = "Enabled"
	physnetDisabled = "Disabled"
)

// PhysicalNetworkServiceProvider.State.
const (
	providerEnabled  = "Enabled"
	providerDisabled = "Disabled"
	providerShutdown = "Shutdown"
)

// NetworkOffering.State.
const (
	offeringEnabled  = "Enabled"
	offeringDisabled = "Disabled"
)

// Account.State as its toString spells it, lower case (the value accounts
// and users carry; the simulator never disables or locks one).
const accountEnabled = "enabled"

// ServiceOffering.State and DiskOffering.State (4.19's state filter):
// deleting an offering makes it Inactive.
const (
	offeringActive   = "Active"
	offeringInactive = "Inactive"
)

// StoragePoolStatus: every simulated primary storage pool is Up.
const poolUp = "Up"

// Domain.State: the simulator's domains are all Active.
const domainActive = "Active"
