package cloudstack

import (
	"fmt"
	"strings"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// The read-only lookups `cloudstack-cpi doctor` makes besides the CPI's
// own: what the account may call and do, the zones' states, key pairs and
// global settings. None of them changes anything.

// apiNames is listApis' answer read for the names alone: a root admin's
// answer describes every parameter of some 900 commands.
type apiNames struct {
	APIs []struct {
		Name string `json:"name"`
	} `json:"api"`
}

// APIs lists the commands the caller's role lets it call: listApis answers
// the APIs the role check passes for the caller
// (ApiDiscoveryServiceImpl.listApis over getApisAllowedToUser).
func (c *Client) APIs() (map[string]bool, error) {
	var l apiNames
	custom, _ := c.cs.Custom.(*csgo.CustomService)
	if err := custom.CustomRequest("listApis", &csgo.CustomServiceParams{}, &l); err != nil {
		return nil, c.fail("listApis", err)
	}
	names := make(map[string]bool, len(l.APIs))
	for _, a := range l.APIs {
		names[a.Name] = true
	}
	return names, nil
}

// MayExpunge says CloudStack lets the caller expunge (and recover) VMs:
// listCapabilities' allowuserexpungerecovervm, which
// ManagementServerImpl.listCapabilities answers as the setting
// allow.user.expunge.recover.vm or an admin caller, the same test
// UserVmManagerImpl.destroyVm and expungeVm make.
func (c *Client) MayExpunge() (bool, error) {
	resp, err := c.cs.Configuration.ListCapabilities(c.cs.Configuration.NewListCapabilitiesParams())
	if err != nil {
		return false, c.fail("listCapabilities", err)
	}
	return resp.Capabilities != nil && resp.Capabilities.Allowuserexpungerecovervm, nil
}

// Setting reads a global setting's value (listConfigurations, which only
// admins may call: a refusal is IsPermissionDenied). The name filter is a
// LIKE match, so the exact name is picked from the answer.
func (c *Client) Setting(name string) (string, error) {
	p := c.cs.Configuration.NewListConfigurationsParams()
	p.SetName(name)
	resp, err := c.cs.Configuration.ListConfigurations(p)
	if err != nil {
		return "", c.fail("listConfigurations", err)
	}
	for _, s := range resp.Configurations {
		if s.Name == name {
			return s.Value, nil
		}
	}
	return "", fmt.Errorf("CloudStack at %s has no global setting %q", c.endpoint, name)
}

// HasKeyPair says the caller has an SSH key pair of that exact name
// (listSSHKeyPairs, which lists the caller's own, or the configured
// project's).
func (c *Client) HasKeyPair(name string) (bool, error) {
	p := c.cs.SSH.NewListSSHKeyPairsParams()
	p.SetName(name)
	if err := c.inProject(p); err != nil {
		return false, err
	}
	resp, err := c.cs.SSH.ListSSHKeyPairs(p)
	if err != nil {
		return false, c.fail("listSSHKeyPairs", err)
	}
	return len(namedExactly(resp.SSHKeyPairs, name, func(k *csgo.SSHKeyPair) string { return k.Name })) > 0, nil
}

// ZoneStatus is a zone and whether it takes deployments.
type ZoneStatus struct {
	Zone
	// Enabled is allocationstate Enabled: CloudStack refuses to deploy
	// into a Disabled zone for anyone but the root admin ("Cannot perform
	// this operation, Zone is currently disabled", a
	// PermissionDeniedException of UserVmManagerImpl's deployment).
	Enabled bool
	State   string
}

// Zones lists every zone the caller sees, with its allocation state.
func (c *Client) Zones() ([]ZoneStatus, error) {
	resp, err := c.cs.Zone.ListZones(c.cs.Zone.NewListZonesParams())
	if err != nil {
		return nil, c.fail("listZones", err)
	}
	out := make([]ZoneStatus, 0, len(resp.Zones))
	for _, z := range resp.Zones {
		out = append(out, ZoneStatus{Zone: Zone{ID: z.Id, Name: z.Name},
			Enabled: strings.EqualFold(z.Allocationstate, "Enabled"), State: z.Allocationstate})
	}
	return out, nil
}

// MatchZone picks the zone ref names by id or exact name, as FindZones
// does; none is nil.
func MatchZone(zones []ZoneStatus, ref string) *ZoneStatus {
	for i := range zones {
		if zones[i].ID == ref || zones[i].Name == ref {
			return &zones[i]
		}
	}
	return nil
}
