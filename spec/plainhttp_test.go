package spec

import (
	"strings"
	"testing"
)

// TestPlainHTTPToTheHTTPSPortSaysSo: an endpoint written http:// for a
// CloudStack that answers HTTPS is named as such, not as a JSON error.
func TestPlainHTTPToTheHTTPSPortSaysSo(t *testing.T) {
	e := newEnv(t, nil)
	endpoint, ca := tlsFront(t, e)
	plain := strings.Replace(endpoint, "https://", "http://", 1)
	cfg := map[string]any{"endpoint": plain, "api_key": apiKey, "secret_access_key": secretKey, "default_zone": zoneName,
		"ca_cert": ca, "max_retries": 0}
	r := runCPI(t, writeJSON(t, map[string]any{"cloudstack": cfg}), `{"method":"has_vm","arguments":["cpivm-x"]}`)
	r.failed(t, "CloudError", "is http://, but that port speaks HTTPS: use https://")
}
