// Package tag is the resource tag family of the API (api/command/user/tag):
// createTags, deleteTags, listTags, and the registry of taggable resource
// types every other family registers its rows in (RegisterTaggable), so
// that this family imports none of them.
package tag

import (
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// Commands are the family's commands, for the simulator's registration: the
// list a PluggableService.getCommands gives ApiServer.start.
func Commands() []kernel.Command {
	return slices.Concat(
		tagCommands(),
	)
}
