package cpi

import (
	"encoding/json"
	"strconv"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// agentSettings is what a BOSH agent reads at boot (bosh-agent's
// settings.Settings): in user data for current stemcells, in the registry
// for old ones.
type agentSettings struct {
	AgentID   string                     `json:"agent_id"`
	VM        vmName                     `json:"vm"`
	Mbus      string                     `json:"mbus"`
	NTP       []string                   `json:"ntp"`
	Blobstore *config.Blobstore          `json:"blobstore,omitempty"`
	Networks  map[string]networkSettings `json:"networks"`
	Disks     diskSettings               `json:"disks"`
	Env       map[string]any             `json:"env"`
}

type vmName struct {
	Name string `json:"name"`
	ID   string `json:"id,omitempty"`
}

type networkSettings struct {
	Type          string   `json:"type"`
	IP            string   `json:"ip,omitempty"`
	Netmask       string   `json:"netmask,omitempty"`
	Gateway       string   `json:"gateway,omitempty"`
	DNS           []string `json:"dns"`
	Default       []string `json:"default"`
	MAC           string   `json:"mac"`
	Preconfigured bool     `json:"preconfigured"`
	Routes        []route  `json:"routes"`
	UseDHCP       bool     `json:"use_dhcp,omitempty"`
}

// route is one of a network's routes, as bosh-agent's settings.Route.
type route struct {
	Destination string `json:"destination"`
	Gateway     string `json:"gateway"`
	Netmask     string `json:"netmask"`
}

type diskSettings struct {
	System     string                    `json:"system"`
	Ephemeral  any                       `json:"ephemeral,omitempty"`
	Persistent map[string]apiv1.DiskHint `json:"persistent"`
}

// agentSettings are the settings of the agent of VM name.
func (c callDeps) agentSettings(agentID, name string, plan networkPlan, ephemeral bool, env apiv1.VMEnv) agentSettings {
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

// agentNetworks turns the plan into the agent's networks, with the MACs
// CloudStack will give the NICs.
func (p networkPlan) agentNetworks() map[string]networkSettings {
	out := map[string]networkSettings{}
	for _, n := range p.nics {
		s := networkSettings{Type: n.net.Type(), IP: n.net.IP(), Netmask: n.net.Netmask(), Gateway: n.net.Gateway(),
			DNS: n.net.DNS(), Default: n.net.Default(), MAC: n.mac, Routes: n.routes}
		if s.Routes == nil {
			s.Routes = []route{}
		}
		if s.DNS == nil {
			s.DNS = n.network.DNS
		}
		if n.net.IsDynamic() {
			s.IP, s.Netmask, s.Gateway = "", "", ""
			s.UseDHCP = true
		}
		out[n.name] = s
	}
	if p.vip != nil {
		out[p.vipName] = networkSettings{Type: "vip", IP: p.vip.IP(), DNS: []string{}, Default: []string{},
			Routes: []route{}}
	}
	return out
}
