package cloudstack

// Commands are the CloudStack API commands this layer sends on the CPI's
// behalf, in one place: doctor checks the account's role allows each of
// them (listApis). A test reads the layer's source for every command it
// names, and the spec suite reads the simulator's request log after a
// lifecycle, so a command added without this list fails them.
var Commands = []string{
	// Zones and catalogs.
	"listZones", "listHypervisors", "listServiceOfferings", "listDiskOfferings", "listOsTypes", "listNetworks",
	// Jobs, cloudstack.project's lookup, and the API limit of the host's
	// rate bucket (apilimit.go).
	"queryAsyncJobResult", "listProjects", "listCapabilities",
	// Virtual machines.
	"deployVirtualMachine", "listVirtualMachines", "startVirtualMachine", "rebootVirtualMachine",
	"destroyVirtualMachine", "expungeVirtualMachine", "updateVirtualMachine",
	// Volumes and snapshots.
	"createVolume", "listVolumes", "attachVolume", "detachVolume", "resizeVolume", "deleteVolume",
	"createSnapshot", "listSnapshots", "deleteSnapshot",
	// Templates (stemcells) and ISOs (config drives).
	"getUploadParamsForTemplate", "registerTemplate", "listTemplates", "copyTemplate", "updateTemplate",
	"deleteTemplate",
	"getUploadParamsForIso", "registerIso", "listIsos", "attachIso", "detachIso", "updateIso", "deleteIso",
	// Addresses, static NAT and load balancers.
	"associateIpAddress", "listPublicIpAddresses", "enableStaticNat", "disableStaticNat", "disassociateIpAddress",
	"createLoadBalancerRule", "listLoadBalancerRules", "assignToLoadBalancerRule", "listLoadBalancerRuleInstances",
	"removeFromLoadBalancerRule", "deleteLoadBalancerRule",
	// Affinity groups and tags.
	"createAffinityGroup", "listAffinityGroups", "createTags", "deleteTags",
}

// OptionalCommands are commands the CPI sends only when CloudStack has them
// and the role allows them; without one, only that feature is lost:
// update_disk of a disk's offering answers NotSupported (the director then
// copies the disk) on a CloudStack before 4.17 or a role without
// changeOfferingForVolume. getUser, which only root admins may call, tells
// the rate bucket the account is one CloudStack's API throttle exempts;
// refused, the account is taken as one it counts.
var OptionalCommands = []string{"changeOfferingForVolume", "getUser"}

// DoctorCommands are the read-only commands only `cloudstack-cpi doctor`
// sends, besides the CPI's own lookups.
var DoctorCommands = []string{"listApis", "listConfigurations", "listSSHKeyPairs"}

// CommandExpunge is the command an account needs to expunge VMs
// (cloudstack.expunge_vm).
const CommandExpunge = "expungeVirtualMachine"
