// Package storage is the storage family of the API (api/command/{user,
// admin}/{volume,snapshot}): volumes and their attach, detach, resize and
// deletion, snapshots, and the guest disks a VM sees.
package storage

import (
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// Commands are the family's commands, for the simulator's registration: the
// list a PluggableService.getCommands gives ApiServer.start.
func Commands() []kernel.Command {
	return slices.Concat(
		volumeCommands(),
		volumeOpsCommands(),
		volumeLifeCommands(),
		volumeOfferingCommands(),
		snapshotCommands(),
	)
}
