package cpi

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// TestRegistryClientRefusesABundleWithoutACertificate: a registry.tls_cert
// or cloudstack.ca_cert without a certificate is an error naming it, not a
// client that trusts less than the operator configured.
func TestRegistryClientRefusesABundleWithoutACertificate(t *testing.T) {
	for setting, cfg := range map[string]config.Config{
		"registry.tls_cert":  {Registry: config.Registry{Endpoint: "https://127.0.0.1:25777", TLSCert: "not a pem"}},
		"cloudstack.ca_cert": {Registry: config.Registry{Endpoint: "https://127.0.0.1:25777"}, CloudStack: config.CloudStack{CACert: "not a pem"}},
	} {
		_, err := callDeps{cfg: cfg}.registryClient()
		if err == nil || !strings.Contains(err.Error(), setting+" holds no PEM certificate") {
			t.Errorf("%s without a certificate: err = %v", setting, err)
		}
	}
	if _, err := (callDeps{cfg: config.Config{Registry: config.Registry{Endpoint: "https://127.0.0.1:25777"}}}).registryClient(); err != nil {
		t.Errorf("no bundle (the system roots): %v", err)
	}
}
