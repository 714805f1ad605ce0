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
	for _, ref := range r.cfg.Stemcell.Zones {
		r.namedZone("stemcell.zones", ref, zones)
	}
	r.cloudConfigZones(zones)
}

// cloudConfigZones checks the zones the cloud-config's AZs and VM types
// name: the director merges both into create_vm's cloud_properties, whose
// zone places the VM.
func (r *run) cloudConfigZones(zones []cloudstack.ZoneStatus) {
	cc := r.opts.CloudConfig
	if cc == nil {
		return
	}
	for _, az := range cc.AZs {
		if ref := az.CloudProperties.Zone; ref != "" {
			r.namedZone(fmt.Sprintf("az %q cloud_properties.zone", az.Name), ref, zones)
		}
	}
	for _, t := range cc.VMTypes {
		if ref := t.CloudProperties.Zone; ref != "" {
			r.namedZone(fmt.Sprintf("vm_type %q zone", t.Name), ref, zones)
		}
	}
}

// namedZone checks a zone the configuration names (in what) exists and is
// enabled.
func (r *run) namedZone(what, ref string, zones []cloudstack.ZoneStatus) {
	switch z := cloudstack.MatchZone(zones, ref); {
	case z == nil:
		r.fail(CheckZone, fmt.Sprintf("%s: CloudStack has no zone %q", what, ref),
			"name a zone of the account in "+what+": "+zoneNames(zones))
	case !z.Enabled:
		r.fail(CheckZone, fmt.Sprintf("%s: zone %q is %s: only the root admin may deploy there", what, z.Name, z.State),
			"enable the zone (updateZone allocationstate=Enabled), or name an enabled one in "+what)
	default:
		r.pass(CheckZone, fmt.Sprintf("%s: zone %q is enabled", what, z.Name))
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
