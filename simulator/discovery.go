package simulator

import (
	"encoding/json"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

func init() {
	register(command{name: "listApis", sync: listApis})
}

// listApis is ApiDiscoveryServiceImpl.listApis answered from the 4.22 schema
// (without the per-API response descriptions); an unknown name is
// ListApisCmd.execute's 530. Departure: every API is listed, as for the
// root admin; role-based filtering is not modelled.
func listApis(c *Call) (any, error) {
	var apis []json.RawMessage
	name := c.Params.Get("name")
	for _, api := range schema.All() {
		if name == "" || api.Name == name {
			apis = append(apis, api.Raw)
		}
	}
	if len(apis) == 0 {
		return nil, &APIError{Code: codeInternalError, CSCode: csServerAPIException,
			Text: "Api Discovery plugin was unable to find an api by that name or process any apis"}
	}
	return map[string]any{"count": len(apis), "api": apis}, nil
}
