package kernel

import (
	"encoding/json"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// DiscoveryCommands are the API discovery commands (api/command/user/discovery),
// which the kernel answers from the schema.
func DiscoveryCommands() []Command {
	return []Command{{Name: "listApis", Sync: listApis}}
}

// listApis is ApiDiscoveryServiceImpl.listApis answered from the 4.22 schema
// (without the per-API response descriptions); an unknown name, or one the
// caller's role may not call, is ListApisCmd.execute's 530. A role other
// than the root admin sees the APIs the role check lets it call
// (getApisAllowedToUser); departure: those are only among the commands the
// simulator implements (rolePermissions), where CloudStack lists every API
// the role may call. Parameters authorized per role are not filtered.
func listApis(c *Call) (any, error) {
	var apis []json.RawMessage
	name := c.Params.Get("name")
	for _, api := range schema.All() {
		if (name == "" || api.Name == name) && RoleAllows(c.Account, api.Name) {
			apis = append(apis, api.Raw)
		}
	}
	if len(apis) == 0 {
		return nil, &APIError{Code: CodeInternalError, CSCode: CsServerAPIException,
			Text: "Api Discovery plugin was unable to find an api by that name or process any apis"}
	}
	return map[string]any{"count": len(apis), "api": apis}, nil
}
