package cpi

// create_vm's agent settings, put where the stemcell's agent reads them:
// a config drive ISO made before the deploy (createvm_drive.go boots the
// VM with it), CloudStack's user data, or, for old stemcells, the BOSH
// registry, with user data saying where it is.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/registry"
)

// maxUserData is CloudStack's default vm.userdata.max.length: the length of
// the base64 text.
const maxUserData = 32768

// settings puts the agent settings where the stemcell's agent reads them.
// A config drive VM is deployed stopped while CloudStack installs the ISO
// (an upload is ready only at its upload monitor's next poll).
func (d *deployment) settings() error {
	p, c, name := d.plan, d.vms, d.spec.Name
	settings := c.agentSettings(p.agentID, name, p.networks, p.ephemeral, p.env)
	if p.drive == noDrive {
		var err error
		d.spec.UserData, err = d.userData(settings)
		return err
	}
	c.drives.sweep(p.agentID)
	if p.drive == cdromDrive {
		settings.Disks = unitDisks(p.ephemeral)
		d.spec.VMware = &cloudstack.VMwareGuest{}
	}
	var err error
	d.drive, err = c.drives.create(name, p.agentID, settings, d.spec.ZoneID, p.drive)
	d.spec.Stopped = true
	return err
}

// unitDisks are the disk hints of a vSphere stemcell's VM, as the vSphere
// CPI writes them without disk UUIDs (vm_creator.rb generate_disk_env): the
// SCSI unit numbers as strings, which the agent's scsi resolver looks up
// on the root disk's SCSI host. CloudStack gives the disks of a starting
// VM their units in device id order (cloudstack.RootSCSIUnit,
// cloudstack.DeployedDataDiskSCSIUnit).
func unitDisks(ephemeral bool) diskSettings {
	d := diskSettings{System: strconv.Itoa(cloudstack.RootSCSIUnit), Persistent: map[string]apiv1.DiskHint{}}
	if ephemeral {
		d.Ephemeral = strconv.Itoa(cloudstack.DeployedDataDiskSCSIUnit)
	}
	return d
}

// userData is the full agent settings for current stemcells, or the
// registry envelope with the settings PUT to the registry for old ones.
func (d *deployment) userData(settings agentSettings) (string, error) {
	c, name := d.vms, d.spec.Name
	if c.ctx.StemcellAPIVersion >= 2 {
		return encodeUserData(settings, "the agent settings")
	}
	reg, err := c.registryClient()
	if err != nil {
		return "", vmCreationRefused(err)
	}
	raw, err := json.Marshal(settings)
	if err != nil {
		return "", err
	}
	// The settings go to the registry once the VM exists, before its job
	// ends and it boots: a crash before then leaves no entry that no VM
	// names, and the VM's removal takes the entry with it.
	d.spec.Accepted = func(string) error {
		err := reg.Put(name, raw)
		// A write the registry refused, or that never reached it, stored
		// nothing for the cleanup to delete.
		d.registry = err == nil || !registry.Unchanged(err)
		if err != nil {
			return fmt.Errorf("writing the agent settings of VM %s to the registry: %w", name, err)
		}
		return nil
	}
	return encodeUserData(registryEnvelope(name, c.cfg.Registry, d.plan.networks), "the registry user data")
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
