package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// checkZone finds cloudstack.default_zone, enabled, and its hypervisors,
// among which stemcell.hypervisor when it is set.
func (r *run) checkZone() {
	ref := r.cfg.CloudStack.DefaultZone
	zones, err := r.cloud.Zones()
	if err != nil {
		r.fail(CheckZone, "listZones failed: "+err.Error(), "give the account a role that may call listZones")
		return
	}
	z := cloudstack.MatchZone(zones, ref)
	if z == nil {
		r.fail(CheckZone, fmt.Sprintf("CloudStack has no zone %q", ref),
			"set cloudstack.default_zone to one of the account's zones: "+zoneNames(zones))
		return
	}
	if !z.Enabled {
		r.fail(CheckZone, fmt.Sprintf("zone %q is %s: only the root admin may deploy there", z.Name, z.State),
			"enable the zone (updateZone allocationstate=Enabled), or set cloudstack.default_zone to an "+
				"enabled one: "+zoneNames(zones))
		return
	}
	hvs, err := r.cloud.ZoneHypervisors(z.ID)
	if err != nil {
		r.fail(CheckZone, "listHypervisors failed: "+err.Error(), "give the account a role that may call listHypervisors")
		return
	}
	r.zone, r.hvs = z, hvs
	names := hypervisorNames(hvs)
	if len(hvs) == 0 {
		r.fail(CheckZone, fmt.Sprintf("zone %q has no cluster, so no hypervisor", z.Name),
			"add a cluster with hosts to the zone")
		return
	}
	if want := r.cfg.Stemcell.Hypervisor; want != "" && !slices.ContainsFunc(hvs, func(h cloudstack.Hypervisor) bool {
		return strings.EqualFold(string(h), want)
	}) {
		r.fail(CheckZone, fmt.Sprintf("zone %q runs %s, not stemcell.hypervisor %s", z.Name, names, want),
			"set stemcell.hypervisor to one of "+names+", or leave it out")
		return
	}
	r.pass(CheckZone, fmt.Sprintf("zone %q (%s) is enabled; hypervisors %s", z.Name, z.ID, names))
	r.stemcellZones(zones)
}

// stemcellZones checks the zones stemcell.zones publishes every stemcell
// to exist and are enabled.
func (r *run) stemcellZones(zones []cloudstack.ZoneStatus) {
	for _, ref := range r.cfg.Stemcell.Zones {
		switch z := cloudstack.MatchZone(zones, ref); {
		case z == nil:
			r.fail(CheckZone, fmt.Sprintf("stemcell.zones: CloudStack has no zone %q", ref),
				"name zones of the account in stemcell.zones: "+zoneNames(zones))
		case !z.Enabled:
			r.fail(CheckZone, fmt.Sprintf("stemcell.zones: zone %q is %s", z.Name, z.State),
				"enable the zone, or leave it out of stemcell.zones")
		default:
			r.pass(CheckZone, fmt.Sprintf("stemcell.zones: zone %q is enabled", z.Name))
		}
	}
}

func zoneNames(zones []cloudstack.ZoneStatus) string {
	if len(zones) == 0 {
		return "(it sees none)"
	}
	var names []string
	for _, z := range zones {
		names = append(names, fmt.Sprintf("%q (%s)", z.Name, z.State))
	}
	return strings.Join(names, ", ")
}

func hypervisorNames(hvs []cloudstack.Hypervisor) string {
	names := make([]string, 0, len(hvs))
	for _, h := range hvs {
		names = append(names, string(h))
	}
	return strings.Join(names, ", ")
}
