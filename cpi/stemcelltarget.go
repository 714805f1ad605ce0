package cpi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell"
)

// chooseTarget decides the hypervisor and format of a stemcell's template.
// bosh.io's OpenStack stemcells say hypervisor kvm whatever cloud runs
// them: unless the operator names a hypervisor (the stemcell's
// cloudstack_hypervisor, stemcell.hypervisor), they go where all their
// zones can run them, KVM first, else XenServer, for which Prepare
// converts their image to a VHD (templateSpec says how it boots HVM).
// Their zones are looked up here, before the image is read, so that a zone
// that cannot run them costs no unpacking or converting; for other
// stemcells zones is nil and the image is checked before any CloudStack
// call.
func (c stemcells) chooseTarget(props stemcellProps) (stemcell.Target, []cloudstack.Zone, error) {
	spec := stemcell.Spec{
		Infrastructure:       props.Infrastructure,
		Hypervisor:           props.Hypervisor,
		DiskFormat:           props.DiskFormat,
		CloudStackHypervisor: firstOf(props.CloudStackHypervisor, c.cfg.Stemcell.Hypervisor),
	}
	target, err := stemcell.Choose(spec)
	named := spec.CloudStackHypervisor != ""
	if err != nil || !isOpenStack(props) || (named && driveOf(props, target) == noDrive) {
		// A named hypervisor other than KVM and XenServer (the
		// Simulator) is trusted as it is.
		return target, nil, err
	}
	zones, err := c.stemcellZones(props)
	if err != nil {
		return target, nil, err
	}
	hvs, err := c.zoneHypervisors(zones)
	if err != nil {
		return target, nil, err
	}
	if named {
		return target, zones, zonesRun(zones, hvs, target.Hypervisor)
	}
	hv, err := openStackHypervisor(zones, hvs)
	if err != nil {
		return target, nil, err
	}
	spec.CloudStackHypervisor = string(hv)
	target, err = stemcell.Choose(spec)
	return target, zones, err
}

// bootableIn refuses, once the image has passed its checks, a stemcell
// whose template a zone it goes to could not boot, naming the zones'
// hypervisors: a template has one hypervisor, and CloudStack places a VM
// only on a cluster of its template's. A Simulator template is trusted as
// it is: no real cluster runs it.
func (c stemcells) bootableIn(zones []cloudstack.Zone, target stemcell.Target) error {
	if target.Hypervisor == hypervisor.Simulator {
		return nil
	}
	hvs, err := c.zoneHypervisors(zones)
	if err != nil {
		return err
	}
	return zonesRun(zones, hvs, target.Hypervisor)
}

// zoneHypervisors lists each zone's hypervisors (listHypervisors).
func (c stemcells) zoneHypervisors(zones []cloudstack.Zone) ([][]cloudstack.Hypervisor, error) {
	all := make([][]cloudstack.Hypervisor, len(zones))
	for i, z := range zones {
		hvs, err := c.cloud.ZoneHypervisors(z.ID)
		if err != nil {
			return nil, err
		}
		all[i] = hvs
	}
	return all, nil
}

// openStackHypervisor is KVM when every zone has a KVM cluster, else
// XenServer when every zone has a XenServer one: a template has one
// hypervisor, and a VM is placed only on a cluster of its template's.
func openStackHypervisor(zones []cloudstack.Zone, hvs [][]cloudstack.Hypervisor) (cloudstack.Hypervisor, error) {
	for _, want := range []cloudstack.Hypervisor{hypervisor.KVM, hypervisor.XenServer} {
		if zonesRun(zones, hvs, want) == nil {
			return want, nil
		}
	}
	return "", fmt.Errorf("bosh.io's OpenStack stemcell runs on KVM, or on XenServer (converted to VHD), and its zones do "+
		"not all have one of them: %s; publish it to zones of one of them (stemcell.zones or the stemcell's zones), or "+
		"use the stemcell of their hypervisor", describeZones(zones, hvs))
}

// zonesRun refuses, before anything is uploaded, a zone with no cluster
// of hypervisor hv: a template of hv could run no VM there.
func zonesRun(zones []cloudstack.Zone, hvs [][]cloudstack.Hypervisor, hv cloudstack.Hypervisor) error {
	for i, z := range zones {
		if !slices.Contains(hvs[i], hv) {
			return fmt.Errorf("this stemcell goes to %s, and zone %s has no %s cluster (its hypervisors: %s; all the "+
				"zones': %s); publish it to zones with %s (stemcell.zones or the stemcell's zones), or use the stemcell of "+
				"their hypervisor", hv, z.Name, hv, names(hvs[i]), describeZones(zones, hvs), hv)
		}
	}
	return nil
}

// describeZones says each zone's hypervisors: "z1 (XenServer, VMware), z2 (none)".
func describeZones(zones []cloudstack.Zone, hvs [][]cloudstack.Hypervisor) string {
	parts := make([]string, len(zones))
	for i, z := range zones {
		parts[i] = fmt.Sprintf("%s (%s)", z.Name, names(hvs[i]))
	}
	return strings.Join(parts, ", ")
}

func names(hvs []cloudstack.Hypervisor) string {
	out := make([]string, len(hvs))
	for i, h := range hvs {
		out[i] = string(h)
	}
	return firstOf(strings.Join(out, ", "), "none")
}
