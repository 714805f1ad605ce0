package cpi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// maxUserData is CloudStack's default vm.userdata.max.length: the length of
// the base64 text.
const maxUserData = 32768

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

// encodeUserData base64-encodes user data and refuses what CloudStack would.
func encodeUserData(v any, what string) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	encoded := base64.StdEncoding.EncodeToString(raw)
	if len(encoded) > maxUserData {
		return "", fmt.Errorf("%s is %d bytes of base64 user data; CloudStack's vm.userdata.max.length allows %d "+
			"(the env and networks of this VM are too large)", what, len(encoded), maxUserData)
	}
	return encoded, nil
}
