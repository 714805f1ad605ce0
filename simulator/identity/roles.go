package identity

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// Roles and the role-based API check of a stock 4.22: ApiServer.verifyRequest
// calls checkCommandAvailable, whose APIChecker chain is, with the default
// dynamic roles, DynamicRoleBasedAPIAccessChecker.checkAccess. The root admin
// role (id 1, type Admin) may call everything; any other role may call a
// command when one of its role_permissions rules allows it, or, when no rule
// matches, when the command's @APICommand(authorized = ...) names the role's
// type (checkApiPermissionByRole; authorized() defaults to {}).
//
// The default roles' rules on a fresh install are the ALLOW rows of
// create-default-role-api-mappings.sql (engine/schema/src/main/resources/
// META-INF/db), which Upgrade481to490.setupRolesAndPermissionsForDynamicChecker
// runs on every new database (the upgrades run from the 4.0 schema). They
// hold no DENY rule, so a command is available to a default role when its row
// is there or its annotation names the role.

// accountTypeForRole is RoleType.getAccountTypeByRole for a default role.
func accountTypeForRole(r model.RoleType) int {
	switch r {
	case model.RoleAdmin:
		return 1
	case model.RoleDomainAdmin:
		return 2
	case model.RoleResourceAdmin:
		return 3
	}
	return 0
}

// seedRoles gives the other default roles their UUIDs.
func seedRoles(st *model.State) {
	st.RoleIDs = map[string]string{}
	for _, r := range []model.RoleType{model.RoleResourceAdmin, model.RoleDomainAdmin, model.RoleUser} {
		st.RoleIDs[fmt.Sprint(int(r))], _ = st.NewID(model.KindRole)
	}
}

// roleByUUID finds the default role a roleid parameter names.
func roleByUUID(st *model.State, id string) model.RoleType {
	for r := range views.DefaultRoles {
		if u := views.RoleUUID(st, r); u != "" && strings.EqualFold(u, id) {
			return r
		}
	}
	return 0
}
