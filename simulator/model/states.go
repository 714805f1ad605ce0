package model

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
	VMStarting  = "Starting"
	VMRunning   = "Running"
	VMStopping  = "Stopping"
	VMStopped   = "Stopped"
	VMDestroyed = "Destroyed"
	VMExpunging = "Expunging"
	VMMigrating = "Migrating"
	VMError     = "Error"
	VMUnknown   = "Unknown"
)

// Volume.State (api/…/com/cloud/storage/Volume.java; transitions in
// Volume.State.s_fsm: Allocated → Destroy on DestroyRequested, Destroy →
// Ready on RecoverRequested, Expunging → Expunged). A created volume is Allocated (in the database only) until
// it is attached to a VM whose disks exist on primary storage, or that VM
// starts; it is Ready from then on. Destroy is the recoverable state
// destroyVolume and a VM's destroy leave; Expunged the end.
const (
	VolumeAllocated = "Allocated"
	VolumeReady     = "Ready"
	VolumeDestroy   = "Destroy"
	volumeExpunged  = "Expunged"
)

// Network.State: Allocated until implemented, Setup for a network whose
// VLAN the caller gave, Implemented once it has resources.
const (
	NetworkAllocated   = "Allocated"
	NetworkSetup       = "Setup"
	NetworkImplemented = "Implemented"
)

// IpAddress.State.
const (
	IPAllocating = "Allocating"
	IPAllocated  = "Allocated"
	IPFree       = "Free"
)

// HostUp is a host's Status (com.cloud.host.Status) as the simulator keeps it: every
// simulated host is Up.
const HostUp = "Up"

// ResourceState: the administrative state of a host, which
// prepareHostForMaintenance and cancelHostMaintenance move.
const (
	ResourceEnabled                      = "Enabled"
	ResourceDisabled                     = "Disabled"
	ResourcePrepareForMaintenance        = "PrepareForMaintenance"
	ResourceErrorInPrepareForMaintenance = "ErrorInPrepareForMaintenance"
	ResourceMaintenance                  = "Maintenance"
	ResourceErrorInMaintenance           = "ErrorInMaintenance"
)

// Grouping.AllocationState: whether a zone (and what it holds) takes new
// resources. valueOf is case-sensitive (checkAllocationState).
const (
	AllocationEnabled  = "Enabled"
	AllocationDisabled = "Disabled"
)

// PhysicalNetwork.State.
const (
	PhysnetEnabled  = "Enabled"
	PhysnetDisabled = "Disabled"
)

// PhysicalNetworkServiceProvider.State.
const (
	ProviderEnabled  = "Enabled"
	ProviderDisabled = "Disabled"
	ProviderShutdown = "Shutdown"
)

// NetworkOffering.State.
const (
	OfferingEnabled  = "Enabled"
	OfferingDisabled = "Disabled"
)

// AccountEnabled is Account.State as its toString spells it, lower case (the value accounts
// and users carry; the simulator never disables or locks one).
const AccountEnabled = "enabled"

// ServiceOffering.State and DiskOffering.State (4.19's state filter):
// deleting an offering makes it Inactive.
const (
	OfferingActive   = "Active"
	OfferingInactive = "Inactive"
)

// PoolUp is StoragePoolStatus: every simulated primary storage pool is Up.
const PoolUp = "Up"

// DomainActive is Domain.State: the simulator's domains are all Active.
const DomainActive = "Active"
