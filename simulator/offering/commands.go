// Package offering is the offering family of the API (CloudStack's
// api/command/{user,admin}/offering): service and disk offerings, their
// creation, update and listing.
package offering

import (
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// Commands are the family's commands, for the simulator's registration: the
// list a PluggableService.getCommands gives ApiServer.start.
func Commands() []kernel.Command {
	return slices.Concat(
		offeringCommands(),
		offeringCreateCommands(),
		diskOfferingCreateCommands(),
	)
}
