package doctor

import (
	"fmt"
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
)

// checkNetworks finds the CloudStack networks the cloud-config's networks
// name in the zones their AZs put them in, and checks they serve user
// data, which the agent reads its settings from unless a config drive
// carries them.
func (r *run) checkNetworks() {
	cc := r.opts.CloudConfig
	if cc == nil {
		r.pass(CheckNetworks, "not checked: no -cloud-config given")
		return
	}
	if r.zone == nil {
		r.fail(CheckNetworks, "not checked: the zone check failed", "fix the zone check first")
		return
	}
	refs := cc.networkRefs()
	if len(refs) == 0 {
		r.pass(CheckNetworks, "the cloud-config names no CloudStack network")
		return
	}
	zones, err := r.cloud.Zones()
	if err != nil {
		r.fail(CheckNetworks, "listZones failed: "+err.Error(), "give the account a role that may call listZones")
		return
	}
	for _, ref := range refs {
		r.network(ref, zones)
	}
}

func (r *run) network(ref netRef, zones []cloudstack.ZoneStatus) {
	what := fmt.Sprintf("network %q (%s)", ref.bosh, ref.name)
	zone := r.zone
	if ref.zone != "" {
		if zone = cloudstack.MatchZone(zones, ref.zone); zone == nil {
			r.fail(CheckNetworks, fmt.Sprintf("%s: its AZ names zone %q, which CloudStack does not have", what, ref.zone),
				"fix the AZ's cloud_properties.zone: one of "+zoneNames(zones))
			return
		}
	}
	found, err := r.cloud.FindNetworks(zone.ID, []string{ref.name})
	if err != nil {
		r.fail(CheckNetworks, what+": "+err.Error(), fmt.Sprintf("name a network of zone %q in the subnet's "+
			"cloud_properties.name, or put the subnet in the AZ of the network's zone", zone.Name))
		return
	}
	n := found[ref.name]
	if n.UserData {
		r.pass(CheckNetworks, fmt.Sprintf("%s: in zone %q, with the UserData service", what, zone.Name))
		return
	}
	if r.configDriveCovers(zone) {
		r.pass(CheckNetworks, fmt.Sprintf("%s: in zone %q, without the UserData service: only VMs of OpenStack "+
			"KVM stemcells (config drive) get their settings on it", what, zone.Name))
		return
	}
	r.fail(CheckNetworks, fmt.Sprintf("%s: in zone %q, but its offering has no UserData service: its VMs' "+
		"agents get no settings", what, zone.Name), "use a network whose offering provides UserData (by the "+
		"virtual router), or OpenStack KVM stemcells with stemcell.config_drive")
}

// configDriveCovers says VMs in the zone can read their settings from a
// config drive: stemcell.config_drive is on and the zone runs KVM, where
// OpenStack stemcells get one.
func (r *run) configDriveCovers(zone *cloudstack.ZoneStatus) bool {
	if !r.cfg.Stemcell.ConfigDriveOn() {
		return false
	}
	hvs := r.hvs
	if zone.ID != r.zone.ID {
		var err error
		if hvs, err = r.cloud.ZoneHypervisors(zone.ID); err != nil {
			return false
		}
	}
	return slices.Contains(hvs, hypervisor.KVM)
}
