// Package network is the network family of the API (CloudStack's
// api/command/{user,admin}/{network,address,vlan,firewall,nat,loadbalancer,
// securitygroup} and the physical network, provider and router element
// commands): networks and their offerings, physical networks, public
// addresses, firewall, NAT and load balancer rules, security groups, VPCs
// and their network ACLs.
package network

import (
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// Commands are the family's commands, for the simulator's registration: the
// list a PluggableService.getCommands gives ApiServer.start.
func Commands() []kernel.Command {
	return slices.Concat(
		networkCommands(),
		networkCreateCommands(),
		networkOfferingCommands(),
		physicalNetworkCommands(),
		providerCommands(),
		publicIPCommands(),
		vlanRangeCommands(),
		firewallRuleCommands(),
		iPForwardingCommands(),
		staticNATCommands(),
		loadBalancerCommands(),
		lBMemberCommands(),
		securityGroupCommands(),
		vpcCommands(),
		networkACLCommands(),
	)
}
