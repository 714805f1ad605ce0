// Package template is the template family of the API (CloudStack's
// api/command/{user,admin}/{template,iso,guest}): registering, uploading,
// copying, updating, listing and deleting templates, the secondary storage
// side that downloads, receives and copies their images (SSVM), and
// the OS types.
package template

import (
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// Commands are the family's commands, for the simulator's registration: the
// list a PluggableService.getCommands gives ApiServer.start.
func Commands() []kernel.Command {
	return slices.Concat(
		templateCommands(),
		templateRegisterCommands(),
		templateUpdateCommands(),
		templateDeleteCommands(),
		templateCopyCommands(),
		uploadCommands(),
		isoCommands(),
		oSTypeCommands(),
	)
}
