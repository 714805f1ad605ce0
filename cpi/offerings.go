package cpi

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// offerings is the part that chooses offerings: calculate_vm_cloud_properties,
// and the customized disk offering the disk and VM parts fall back on.
type offerings struct {
	callDeps
	cloud offeringCloud
}

// offeringCloud is what choosing offerings asks of CloudStack.
type offeringCloud interface {
	cloudstack.ComputeCatalog
	cloudstack.DiskCatalog
}

// CalculateVMCloudProperties implements apiv1.CPI: the smallest fixed
// offering with enough CPUs and memory, else cpu and ram for a customized
// one whose limits take them (which create_vm then picks). With compute
// tags configured only offerings passing them count, and a customized one
// is named so create_vm takes it; with disk tags the ephemeral disk's
// offering is named too.
func (c offerings) CalculateVMCloudProperties(res apiv1.VMResources) (apiv1.VMCloudProps, error) {
	offerings, err := c.cloud.ServiceOfferings()
	if err != nil {
		return nil, wrap(err, "listing compute offerings")
	}
	filter := c.computeFilter()
	if offerings, err = passingCompute(offerings, filter); err != nil {
		return nil, cloudError(err)
	}
	props := map[string]any{"ephemeral_disk_size": res.EphemeralDiskSize}
	if err := computeProps(props, offerings, res, filter); err != nil {
		return nil, err
	}
	if f := c.diskFilter(); f.set() && res.EphemeralDiskSize > 0 {
		o, err := c.ephemeralOffering(res.EphemeralDiskSize, f)
		if err != nil {
			return nil, err
		}
		props["ephemeral_disk_offering"] = o.Name
	}
	return apiv1.NewVMCloudPropsFromMap(props), nil
}

func computeProps(props map[string]any, offerings []cloudstack.ServiceOffering, res apiv1.VMResources, filter tagFilter) error {
	var fits []cloudstack.ServiceOffering
	for _, o := range offerings {
		if !o.Customized && o.CPUs >= res.CPU && o.MemoryMB >= res.RAM {
			fits = append(fits, o)
		}
	}
	if len(fits) > 0 {
		sort.Slice(fits, func(i, j int) bool {
			if fits[i].MemoryMB != fits[j].MemoryMB {
				return fits[i].MemoryMB < fits[j].MemoryMB
			}
			return fits[i].CPUs < fits[j].CPUs
		})
		props["compute_offering"] = fits[0].Name
		return nil
	}
	o, err := vmtype.PickCustom(offerings, res.CPU, res.RAM, 0)
	if err != nil {
		among := ""
		if filter.set() {
			among = fmt.Sprintf(" among those passing %s", filter)
		}
		return cloudError(fmt.Errorf("no fixed compute offering%s has %d CPUs and %d MiB, and %w", among, res.CPU, res.RAM, err))
	}
	props["cpu"], props["ram"] = res.CPU, res.RAM
	if filter.set() {
		props["compute_offering"] = o.Name
	}
	return nil
}

// tagFilter is one pair of cloudstack.calculate's lists, with the meaning
// the earlier CPIs gave them: an offering passes when it carries one of the
// wanted tags (any, as the Java CPI's CPIImpl.findComputeOffering keeps an
// offering with any tag of the list; none given: every offering) and none
// of the refused ones (the Go CPI's not-tags, whose filter meant this but
// returned the unfiltered list). Tags are whole tags, not substrings.
type tagFilter struct {
	wantKey, refuseKey string
	want, refuse       []string
}

func (c offerings) computeFilter() tagFilter {
	k := c.cfg.CloudStack.Calculate
	return tagFilter{"cloudstack.calculate.compute_tags", "cloudstack.calculate.not_compute_tags", k.ComputeTags, k.NotComputeTags}
}

func (c offerings) diskFilter() tagFilter {
	k := c.cfg.CloudStack.Calculate
	return tagFilter{"cloudstack.calculate.disk_tags", "cloudstack.calculate.not_disk_tags", k.DiskTags, k.NotDiskTags}
}

func (f tagFilter) set() bool { return len(f.want)+len(f.refuse) > 0 }

func (f tagFilter) passes(tags cloudstack.OfferingTags) bool {
	for _, t := range f.refuse {
		if tags.Has(t) {
			return false
		}
	}
	if len(f.want) == 0 {
		return true
	}
	for _, t := range f.want {
		if tags.Has(t) {
			return true
		}
	}
	return false
}

// String names the lists that are set, for errors.
func (f tagFilter) String() string {
	var parts []string
	if len(f.want) > 0 {
		parts = append(parts, fmt.Sprintf("%s %q", f.wantKey, f.want))
	}
	if len(f.refuse) > 0 {
		parts = append(parts, fmt.Sprintf("%s %q", f.refuseKey, f.refuse))
	}
	return strings.Join(parts, " and ")
}

// passing keeps the offerings whose tags (as tagsOf reads them) the filter
// passes; none is an error naming the filter and every offering with its
// tags.
func passing[O any](offerings []O, f tagFilter, what string, tagsOf func(O) (string, cloudstack.OfferingTags)) ([]O, error) {
	var pass []O
	seen := make([]string, len(offerings))
	for i, o := range offerings {
		name, tags := tagsOf(o)
		seen[i] = fmt.Sprintf("%q (%s)", name, tags)
		if f.passes(tags) {
			pass = append(pass, o)
		}
	}
	if len(pass) > 0 {
		return pass, nil
	}
	offered := "CloudStack offers none"
	if len(seen) > 0 {
		offered = "CloudStack offers " + strings.Join(seen, ", ")
	}
	return nil, fmt.Errorf("no %s passing %s: %s", what, f, offered)
}

// passingCompute keeps the compute offerings whose storage tags pass the
// filter.
func passingCompute(offerings []cloudstack.ServiceOffering, f tagFilter) ([]cloudstack.ServiceOffering, error) {
	if !f.set() {
		return offerings, nil
	}
	return passing(offerings, f, "compute offering has storage tags", func(o cloudstack.ServiceOffering) (string, cloudstack.OfferingTags) {
		return o.Name, o.StorageTags
	})
}

// ephemeralOffering is the disk offering calculate_vm_cloud_properties
// answers when disk tags are configured: among those passing them, the
// smallest fixed one holding sizeMiB (as both earlier CPIs sort by size and
// keep the first big enough), else a customized one, which takes the size
// itself: cloudstack.default_custom_disk_offering when it passes, else
// "Custom" or the only customized one among them. The earlier CPIs fell back on an offering too small (the largest,
// or the smallest of all); that would make a disk smaller than the VM type
// asks, so here a customized one serves or the error says none does.
func (c offerings) ephemeralOffering(sizeMiB int, f tagFilter) (*cloudstack.DiskOffering, error) {
	all, err := c.cloud.DiskOfferings()
	if err != nil {
		return nil, wrap(err, "listing disk offerings")
	}
	pass, err := passing(all, f, "disk offering has tags", func(o cloudstack.DiskOffering) (string, cloudstack.OfferingTags) {
		return o.Name, o.Tags
	})
	if err != nil {
		return nil, cloudError(err)
	}
	sort.SliceStable(pass, func(i, j int) bool { return pass[i].SizeGB < pass[j].SizeGB })
	for i, o := range pass {
		if !o.Customized && o.SizeGB*1024 >= int64(sizeMiB) {
			return &pass[i], nil
		}
	}
	if ref := c.cfg.CloudStack.DefaultCustomDiskOffering; ref != "" {
		for i, o := range pass {
			if o.Customized && o.Is(ref) {
				return &pass[i], nil
			}
		}
	}
	o, err := cloudstack.PickCustomDiskOffering(pass)
	if err != nil {
		return nil, cloudError(fmt.Errorf("no fixed disk offering passing %s holds %d MiB, and among those passing: %w", f, sizeMiB, err))
	}
	return o, nil
}

// customDiskOffering is the customized disk offering a disk goes on when
// none is named: cloudstack.default_custom_disk_offering, which must be
// customized, else "Custom" or the only customized one (the Go CPI's
// default_offer.custom_disk). The log names the one chosen for what.
func (c offerings) customDiskOffering(what string) (*cloudstack.DiskOffering, error) {
	ref := c.cfg.CloudStack.DefaultCustomDiskOffering
	if ref == "" {
		o, err := c.cloud.CustomDiskOffering()
		if err != nil {
			return nil, err
		}
		c.logger.Info("disk", "%s: using customized disk offering %q (%s)", what, o.Name, o.ID)
		return o, nil
	}
	o, err := c.cloud.FindDiskOffering(ref)
	if err != nil {
		return nil, fmt.Errorf("cloudstack.default_custom_disk_offering: %w", err)
	}
	if !o.Customized {
		return nil, fmt.Errorf("cloudstack.default_custom_disk_offering %q is not a customized disk offering "+
			"(it has a fixed %d GiB), so it cannot take a disk's size", ref, o.SizeGB)
	}
	c.logger.Info("disk", "%s: using cloudstack.default_custom_disk_offering %q (%s)", what, o.Name, o.ID)
	return o, nil
}
