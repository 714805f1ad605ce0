// Package vm is the virtual machine family of the API (api/command/{user,
// admin}/{vm,affinitygroup,userdata}): deploying, listing, starting,
// stopping, rebooting, updating, destroying and expunging VMs, their NICs,
// placement, sizing and user data, and affinity groups. It acts on the
// network and storage families as UserVmManagerImpl acts on
// NetworkOrchestrator and VolumeOrchestrator.
package vm

import (
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// Commands are the family's commands, for the simulator's registration: the
// list a PluggableService.getCommands gives ApiServer.start.
func Commands() []kernel.Command {
	return slices.Concat(
		vmCommands(),
		vmDeployCommands(),
		vmDestroyCommands(),
		vmLifecycleCommands(),
		vmISOCommands(),
		vmUpdateCommands(),
		userDataCommands(),
		affinityGroupCommands(),
	)
}
