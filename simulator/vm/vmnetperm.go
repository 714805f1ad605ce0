package vm

import (
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// checkNetworkPermission is NetworkModelImpl.checkNetworkPermissions(owner,
// network), which UserVmManagerImpl runs for every network a new VM is put
// on: an Account network must be the owner's (checkAccountNetworkPermissions),
// or, for an owner outside projects, a project's that the calling user's
// account is a member of (checkProjectNetworkPermissions). The root admin's
// way round it, admin.is.allowed.to.deploy.anywhere, is off, its default.
// Departures: a Domain (shared) network is taken as available in every
// domain (isNetworkAvailableInDomain; the simulator's domains all sit under
// ROOT, where its shared networks are), and createNetworkPermissions'
// grants are not modelled.
func checkNetworkPermission(c *kernel.Call, owner *model.Account, n *model.Network) error {
	if n.Type == "Shared" && n.ACLType != "Account" {
		return nil
	}
	netOwner := c.State.Account(n.AccountID)
	denied := kernel.PermissionDenied("Unable to use network with id= %s, permission denied", n.ID) // UNABLE_TO_USE_NETWORK
	switch {
	case netOwner == nil:
		return kernel.PermissionDenied("Unable to use network with id= %s, network does not have an owner", n.ID)
	case owner.Type != model.AccountTypeProject && netOwner.Type == model.AccountTypeProject:
		if p := c.State.ProjectOfAccount(netOwner.ID); p == nil || c.State.ProjectMember(p.ID, c.User.AccountID) == nil {
			return denied
		}
	case netOwner.ID != owner.ID:
		return denied
	}
	return nil
}
