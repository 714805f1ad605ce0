package cpi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/trust"
	"github.com/bosh-cloudstack/cloudstack-cpi/registry"
)

func (c request) agentSettings(agentID, name string, plan networkPlan, ephemeral bool, env apiv1.VMEnv) agentSettings {
	a := c.cfg.Agent
	s := agentSettings{
		AgentID:  agentID,
		VM:       vmName{Name: name},
		Mbus:     a.MBus,
		NTP:      a.NTP,
		Networks: plan.agentNetworks(),
		Disks:    diskSettings{System: cloudstack.RootDiskPath, Persistent: map[string]apiv1.DiskHint{}},
		Env:      envMap(env),
	}
	if s.NTP == nil {
		s.NTP = []string{}
	}
	if a.Blobstore.Provider != "" {
		b := a.Blobstore
		s.Blobstore = &b
	}
	if ephemeral {
		s.Disks.Ephemeral = map[string]string{"path": cloudstack.DeployedDataDiskPath,
			"volume_id": strconv.Itoa(cloudstack.DeployedDataDiskDeviceID)}
	}
	return s
}

func envMap(env apiv1.VMEnv) map[string]any {
	raw, err := env.MarshalJSON()
	m := map[string]any{}
	if err == nil {
		_ = json.Unmarshal(raw, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// registryEnvelope is what an old agent reads from user data to find its
// settings in the registry. It carries no agent_id on purpose: an old agent
// that found one would use boot-time user data and never see disks
// written to the registry later.
func registryEnvelope(name string, reg config.Registry, plan networkPlan) map[string]any {
	var dns []string
	for _, n := range plan.nics {
		if n.net.IsDefaultFor("dns") || dns == nil {
			if d := n.net.DNS(); len(d) > 0 {
				dns = d
			}
		}
	}
	if dns == nil {
		dns = []string{}
	}
	return map[string]any{
		"server":   map[string]string{"name": name},
		"registry": map[string]string{"endpoint": registryURLForAgents(reg)},
		"dns":      map[string][]string{"nameserver": dns},
	}
}

// registryURLForAgents: old agents only get credentials through the URL.
func registryURLForAgents(reg config.Registry) string {
	if reg.Username == "" {
		return reg.Endpoint
	}
	u, err := url.Parse(reg.Endpoint)
	if err != nil {
		return reg.Endpoint
	}
	u.User = url.UserPassword(reg.Username, reg.Password)
	return u.String()
}

func (c request) registryClient() (*registry.Client, error) {
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
func (c request) forgetSettings(ids ...string) error {
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

// jsonMarshal is json.Marshal, kept for userData (vmcreate.go) until create_vm's pipeline rewrites it.
func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
