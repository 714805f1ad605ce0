package simulator

import (
	"sync"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/identity"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/infrastructure"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/network"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/offering"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/storage"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/template"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/vm"
)

// registerOnce runs the registration once per process, however many Servers
// it starts: ApiServer fills s_apiNameCmdClassMap once, at start.
var registerOnce sync.Once

// registerCommands registers every command the simulator implements, family
// by family in the order of CloudStack's API grouping
// (api/command/{user,admin}/<group>), and the resource types tags can name.
// It is explicit, not init functions, so what is registered is what this
// list says (ApiServer.init's s_apiNameCmdClassMap, filled from the
// PluggableService command lists).
func registerCommands() {
	registerOnce.Do(func() {
		kernel.Register(
			// job (the kernel's own)
			kernel.JobCommands(),
			// identity (api/command/{user,admin}/account, user, domain, ssh)
			identity.Commands(),
			// discovery (listApis)
			kernel.DiscoveryCommands(),
			// infrastructure (zone, pod, cluster, host, storage, config)
			infrastructure.Commands(),
			// offering
			offering.Commands(),
			// tag
			tag.Commands(),
			// network (network, offering, physical network, provider, address, vlan, firewall, NAT, load balancer, security group)
			network.Commands(),
			// storage (volume, snapshot)
			storage.Commands(),
			// template (template, upload, OS types)
			template.Commands(),
			// vm (vm, user data, affinity group)
			vm.Commands(),
		)
		tag.RegisterTaggable("PublicIpAddress", network.PublicIPOwner)
		tag.RegisterTaggable("FirewallRule", network.FirewallRuleOwner)
		tag.RegisterTaggable("LoadBalancer", network.LoadBalancerOwner)
		tag.RegisterTaggable("SecurityGroup", network.SecurityGroupOwner)
		tag.RegisterTaggable("Vpc", network.VPCOwner)
		tag.RegisterTaggable("Snapshot", storage.SnapshotOwner)
		tag.RegisterTaggable("UserVm", vm.Owner)
		tag.RegisterTaggable("Template", vm.TemplateOwner)
		tag.RegisterTaggable("Volume", storage.VolumeOwner)
	})
}
