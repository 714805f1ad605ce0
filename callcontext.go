package main

import (
	"encoding/json"
	"strings"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// loadConfig reads cpi.json for one call, with the cpi-config properties a
// director merged into the call's context (multi-CPI) over its cloudstack
// section. info answers from cpi.json alone when those properties are bad:
// a director whose info call fails falls back to CPI API v1 without a word
// (bosh-director's CloudFactory#get rescues info's error as api_version 1),
// and the next call names the bad property anyway. Only the properties'
// names are logged: their values carry API keys.
func loadConfig(configPath string, request []byte, logger boshlog.Logger) (config.Config, error) {
	var req struct {
		Method  string          `json:"method"`
		Context json.RawMessage `json:"context"`
	}
	if json.Unmarshal(request, &req) != nil {
		// The dispatcher answers a malformed request itself.
		return config.Load(configPath)
	}
	props, err := config.ContextProperties(req.Context)
	if err == nil && len(props) > 0 {
		logger.Info("main", "cpi-config properties in the call context: %s", strings.Join(config.PropertyNames(props), ", "))
	}
	cfg, err := config.LoadForCall(configPath, req.Context)
	if err != nil && req.Method == "info" {
		logger.Warn("main", "info answers from cpi.json alone, without the call context's properties: %s", err)
		return config.Load(configPath)
	}
	return cfg, err
}
