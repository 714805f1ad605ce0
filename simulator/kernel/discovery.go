package kernel

import (
	"bytes"
	"encoding/json"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// DiscoveryCommands are the API discovery commands (api/command/user/discovery),
// which the kernel answers from the schema.
func DiscoveryCommands() []Command {
	return []Command{{Name: "listApis", Sync: listApis}}
}

// listApis is ApiDiscoveryServiceImpl.listApis answered from the schema of
// the release served, each API with its response fields as that release
// answers them (getFieldResponseMap over the response class: name,
// description, type); an unknown name, or one the
// caller's role may not call, is ListApisCmd.execute's 530. A role other
// than the root admin sees the APIs the role check lets it call
// (getApisAllowedToUser); departure: those are only among the commands the
// simulator implements (rolePermissions), where CloudStack lists every API
// the role may call. Parameters authorized per role are not filtered.
//
// The API checkers run again inside listApis, so with the API limit on the
// call costs more than its own count: with a name, the rate limiter's
// checkAccess counts once more and past the limit the name is "not found"
// (530); without one, a caller that is not the root admin counts once per
// API its role allows (ApiRateLimitServiceImpl.getApisAllowedToUser).
func listApis(c *Call) (any, error) {
	var apis []json.RawMessage
	name := c.Params.Get("name")
	for _, api := range c.Engine.Schema.All() {
		if (name == "" || api.Name == name) && RoleAllows(c.Account, api.Name) {
			apis = append(apis, withResponse(c.Engine.Schema, api))
		}
	}
	notFound := &APIError{Code: CodeInternalError, CSCode: CsServerAPIException,
		Text: "Api Discovery plugin was unable to find an api by that name or process any apis"}
	if len(apis) == 0 {
		return nil, notFound
	}
	switch {
	case name != "":
		if c.Engine.Throttle.checkAccess(c.Account, c.Arrived) != nil {
			return nil, notFound
		}
	case c.Account.Role() != model.RoleAdmin:
		if err := c.Engine.Throttle.apisAllowedToUser(c.Account, len(apis), c.Arrived); err != nil {
			return nil, err
		}
	}
	return map[string]any{"count": len(apis), "api": apis}, nil
}

// withResponse is the API's discovery entry with its "response" array
// (Schema.Response) added to the object the schema keeps without it.
func withResponse(release *schema.Schema, api *schema.API) json.RawMessage {
	resp, ok := release.Response(api.Name)
	raw := bytes.TrimSpace(api.Raw)
	if !ok || len(raw) < 2 || raw[len(raw)-1] != '}' {
		return api.Raw
	}
	out := make([]byte, 0, len(raw)+len(resp)+13)
	out = append(out, raw[:len(raw)-1]...)
	out = append(out, `,"response":`...)
	out = append(out, resp...)
	return append(out, '}')
}
