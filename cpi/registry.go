package cpi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/trust"
	"github.com/bosh-cloudstack/cloudstack-cpi/registry"
)

// registryClient is the BOSH registry's client, where old stemcells'
// agents read their settings (create_vm writes them, delete_vm and
// create_vm's removals delete them, attach_disk and detach_disk keep
// their disks in step: diskregistry.go).
func (c callDeps) registryClient() (*registry.Client, error) {
	r := c.cfg.Registry
	if r.Endpoint == "" {
		return nil, fmt.Errorf("this stemcell (api_version %d) reads its settings from a BOSH registry: "+
			"set registry.endpoint, or use a stemcell with api_version 2 or later", c.ctx.StemcellAPIVersion)
	}
	client, err := trustingClient(trust.PEM{Setting: "cloudstack.ca_cert", Text: c.cfg.CloudStack.CACert},
		trust.PEM{Setting: "registry.tls_cert", Text: r.TLSCert})
	if err != nil {
		return nil, err
	}
	return registry.NewClient(r.Endpoint, r.Username, r.Password, client)
}

// trustingClient trusts the system roots plus the given PEM certificates:
// serve's registry may use a private certificate.
func trustingClient(pems ...trust.PEM) (*http.Client, error) {
	transport, err := trust.Transport(pems...)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: transport, Timeout: 30 * time.Second}, nil
}

// forgetSettings deletes an old stemcell's registry settings; current
// stemcells keep none.
func (c callDeps) forgetSettings(ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if c.ctx.StemcellAPIVersion >= 2 || c.cfg.Registry.Endpoint == "" {
		return nil
	}
	reg, err := c.registryClient()
	if err != nil {
		return cloudError(err)
	}
	for _, id := range ids {
		if id == "" {
			continue
		}
		if err := reg.Delete(id); err != nil {
			return cloudError(err)
		}
	}
	return nil
}
