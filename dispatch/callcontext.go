package dispatch

import (
	"encoding/json"
	"strings"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// prepareCall reads cpi.json for one call, with the cpi-config properties a
// director merged into the call's context (multi-CPI) over its cloudstack
// section, and returns the request the dispatcher is to answer. Only the
// properties' names are logged: their values carry API keys.
//
// info never fails because of the context: a director whose info call fails
// falls back to CPI API v1 without a word (bosh-director's CloudFactory#get
// rescues info's error as api_version 1), and the next call names the fault
// anyway. So info answers from cpi.json alone when the properties are bad,
// and the dispatcher gets info without its context, which info does not
// read: bosh-cpi-go reads the context for every method, and a property named
// vm or director_uuid replaces the director's own (external_cpi.rb merges
// the properties last).
func prepareCall(configPath string, request []byte, logger boshlog.Logger) (config.Config, []byte, error) {
	var req struct {
		Method  string          `json:"method"`
		Context json.RawMessage `json:"context"`
	}
	if json.Unmarshal(request, &req) != nil {
		// The dispatcher answers a malformed request itself.
		cfg, err := config.Load(configPath)
		return cfg, request, err
	}
	cfg, err := loadForCall(configPath, req.Context, logger)
	if req.Method != "info" {
		return cfg, request, err
	}
	if err != nil {
		logger.Warn("main", "info answers from cpi.json alone, without the call context's properties: %s", err)
		cfg, err = config.Load(configPath)
	}
	return cfg, withoutContext(request), err
}

// loadForCall is config.LoadForCall of the context's properties.
func loadForCall(configPath string, context json.RawMessage, logger boshlog.Logger) (config.Config, error) {
	props, err := config.ContextProperties(context)
	if err != nil {
		return config.Config{}, err
	}
	if len(props) > 0 {
		logger.Info("main", "cpi-config properties in the call context: %s", strings.Join(config.PropertyNames(props), ", "))
	}
	return config.LoadForCall(configPath, props)
}

// withoutContext is the request with its context left out, which the CPI
// takes as a call with no context (cpi.readContext), as from an operator
// piping JSON by hand.
func withoutContext(request []byte) []byte {
	var req map[string]json.RawMessage
	if json.Unmarshal(request, &req) != nil || req == nil {
		return request
	}
	delete(req, "context")
	out, err := json.Marshal(req)
	if err != nil {
		return request
	}
	return out
}
