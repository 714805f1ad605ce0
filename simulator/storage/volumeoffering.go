package storage

import (
	"slices"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// changeOfferingForVolume (4.17) follows VolumeApiServiceImpl.changeDiskOfferingForVolume and
// changeDiskOfferingForVolumeInternal, with the checks the 4.22 line keeps in
// validateVolumeResizeWithNewDiskOfferingAndLoad, checkIfVolumeCanResizeWithNewDiskOffering and
// validateVolumeResizeWithSize (since moved to VolumeResizeValidatorImpl on main). The command's
// execute runs inside its async job, so every refusal is a failed job.

// volumeOfferingCommands are the commands of volumeoffering.go (registerCommands).
func volumeOfferingCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "changeOfferingForVolume", IDKind: model.KindVolume, Async: changeOfferingForVolume},
	}
}

// offeringChange is changeOfferingForVolume's parameters, read when the job is
// queued. An absent automigrate is false and an absent shrinkok false
// (ChangeOfferingForVolumeCmd.getAutoMigrate and isShrinkOk, in the revision
// with shrinkok, as the 4.22 schema has it; the earlier revision without
// shrinkok took an absent automigrate as true).
type offeringChange struct {
	id, offeringID         string
	sizeGB                 *int64
	minIOPS, maxIOPS       *int64
	shrinkOK, autoMigrate  bool
	newSize                int64 // bytes, once validated
	newMinIOPS, newMaxIOPS *int64
	existing, target       *model.DiskOffering
	volume                 *model.Volume
	vm                     *model.VirtualMachine
	resizeNeeded, migrated bool
}

func changeOfferingForVolume(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	r := &offeringChange{id: p.Get("id"), offeringID: p.Get("diskofferingid"), shrinkOK: p.Bool("shrinkok", false),
		autoMigrate: p.Bool("automigrate", false), sizeGB: optInt(p, "size"), minIOPS: optInt(p, "miniops"), maxIOPS: optInt(p, "maxiops")}
	return &kernel.AsyncJob{InstanceType: "Volume", InstanceID: strings.ToLower(r.id),
		CmdClass: "org.apache.cloudstack.api.command.user.volume.ChangeOfferingForVolumeCmd",
		Run:      func() (any, error) { return changeOffering(c, r) }}, nil
}

func optInt(p kernel.Params, name string) *int64 {
	if !p.Has(name) {
		return nil
	}
	n := p.Int(name, 0)
	return &n
}

// changeOffering is the job: changeDiskOfferingForVolumeInternal.
func changeOffering(c *kernel.Call, r *offeringChange) (any, error) {
	v, ok := c.State.LiveVolume(r.id)
	if !ok {
		return nil, kernel.ParamError("No such volume")
	}
	r.volume = v
	if err := loadOfferingChange(c, r); err != nil {
		return nil, err
	}
	if err := validateSizeChange(c, r); err != nil {
		return nil, err
	}
	// An Allocated volume was never created on storage: the database changes alone.
	if v.State == model.VolumeAllocated {
		v.SizeBytes, v.DiskOfferingID = r.newSize, r.target.ID
		c.Changed()
		return restrictedVolumeView(c, v), nil
	}
	if err := placeForOffering(c, r); err != nil {
		return nil, err
	}
	if r.resizeNeeded {
		if err := resizeForOffering(c, r); err != nil {
			return nil, err
		}
	}
	v.DiskOfferingID = r.target.ID // updateDiskOffering, or orchestrateResizeVolume's setDiskOfferingId
	c.Changed()
	return restrictedVolumeView(c, v), nil
}

// restrictedVolumeView is the job's answer: ChangeOfferingForVolumeCmd.execute builds it
// with ResponseView.Restricted whoever calls (there is no ByAdmin command), so even the
// root admin sees no hypervisor, storage type, pool or path (VolumeJoinDaoImpl.newVolumeResponse).
func restrictedVolumeView(c *kernel.Call, v *model.Volume) map[string]any {
	view := views.VolumeView(c, v)
	for _, k := range []string{"hypervisor", "storagetype", "storage", "path"} {
		delete(view, k)
	}
	return map[string]any{"volume": view}
}

// loadOfferingChange is validateVolumeResizeWithNewDiskOfferingAndLoad: the new
// size and IOPS from the new offering, then the offering checks.
func loadOfferingChange(c *kernel.Call, r *offeringChange) error {
	v := r.volume
	r.existing, _ = model.ByID(c.State.DiskOfferings, v.DiskOfferingID)
	if r.existing == nil {
		// Departure: the simulator's ROOT volumes carry no compute-only disk
		// offering; they are checked as if theirs had no tags and no strictness.
		r.existing = &model.DiskOffering{}
	}
	r.target, _ = model.ByID(c.State.DiskOfferings, r.offeringID)
	if r.target == nil || r.target.Inactive { // the API layer refused unknown ids already
		return kernel.ParamError("Requested disk offering has been removed.")
	}
	// Departure: checkDiskOfferingAccess passes: the simulator's disk offerings are public.
	if err := newOfferingSize(r); err != nil {
		return err
	}
	if err := newOfferingIOPS(r); err != nil {
		return err
	}
	if r.existing.SizeStrictness && v.SizeBytes != r.newSize {
		return kernel.ParamError("Resize volume for %s is not allowed since disk offering's size is fixed", v.Name)
	}
	r.vm, _ = model.ByID(c.State.VMs, v.VMID)
	if err := canTakeOffering(c, r); err != nil {
		return err
	}
	// checkIfVolumeIsRootAndVmIsRunning
	if v.SizeBytes != r.newSize && v.Type == model.VolumeRoot && r.vm != nil && r.vm.State != model.VMStopped {
		return kernel.ParamError("Cannot resize ROOT volume [%s] when VM is not on Stopped State. VM %s is in state %s", v.Name, r.vm.InstanceName, r.vm.State)
	}
	return nil
}

// newOfferingSize: a fixed offering sets the size; a customized one takes
// size in GiB, unchecked against the custom range (changeOfferingForVolume,
// unlike resizeVolume, skips validateCustomDiskOfferingSizeRange). The
// simulator has no compute-only disk offerings.
func newOfferingSize(r *offeringChange) error {
	o := r.target
	switch {
	case o.DiskSize > 0:
		r.newSize = o.DiskSize << 30
	case o.Customized:
		if r.sizeGB == nil {
			return kernel.ParamError("The new disk offering requires that a size be specified.")
		}
		r.newSize = *r.sizeGB << 30
	case r.sizeGB != nil:
		return kernel.ParamError("You cannot pass in a custom disk size to a non-custom disk offering.")
	default:
		r.newSize = o.DiskSize << 30
	}
	return nil
}

// newOfferingIOPS is setNewIopsLimits and validateIops: customized IOPS are
// the given ones (the simulator's volumes keep none of their own), fixed
// ones the offering's.
func newOfferingIOPS(r *offeringChange) error {
	if r.target.CustomizedIOPS == nil || !*r.target.CustomizedIOPS {
		r.newMinIOPS, r.newMaxIOPS = r.target.MinIOPS, r.target.MaxIOPS
		return nil
	}
	r.newMinIOPS, r.newMaxIOPS = r.minIOPS, r.maxIOPS
	if (r.minIOPS == nil) != (r.maxIOPS == nil) {
		return kernel.ParamError("Either 'miniops' and 'maxiops' must both be provided or neither must be provided.")
	}
	if r.minIOPS != nil && *r.minIOPS > *r.maxIOPS {
		return kernel.ParamError("The 'miniops' parameter must be less than or equal to the 'maxiops' parameter.")
	}
	return nil
}

// canTakeOffering is checkIfVolumeCanResizeWithNewDiskOffering. Its "already
// having" test shifts the new size, already in bytes, by 30 once more, so a
// customized offering is only refused as "the same" when that overflowed
// product happens to equal the size: in practice the same customized offering
// with any size passes; int64 shifts wrap as Java's long shifts do.
func canTakeOffering(c *kernel.Call, r *offeringChange) error {
	v, old, o := r.volume, r.existing, r.target
	if old.ID == o.ID && (!o.Customized || v.SizeBytes == r.newSize<<30) {
		return kernel.ParamError("Volume %s is already having disk offering %s", VolumeString(c.State, v), o.ID)
	}
	if old.SizeStrictness != o.SizeStrictness {
		return kernel.ParamError("Disk offering size strictness does not match with new disk offering.")
	}
	// match.storage.pool.tags.with.disk.offering at its default, true.
	if !hasTagsOf(old, o) {
		return kernel.ParamError("Selected disk offering %s does not have tags as in existing disk offering of volume %s", old.ID, v.ID)
	}
	if v.Type == model.VolumeRoot && r.vm != nil {
		if so, ok := model.ByID(c.State.ServiceOfferings, r.vm.ServiceOfferingID); ok && so.DiskStrictness {
			return kernel.ParamError("Cannot resize ROOT volume [%s] with new disk offering since existing disk offering is strictly assigned to the ROOT volume.", v.Name)
		}
	}
	if old.SizeStrictness && v.SizeBytes != r.newSize {
		return kernel.ParamError("Resize volume for %s is not allowed since disk offering's size is fixed", v.Name)
	}
	return nil
}

// hasTagsOf is VolumeApiServiceImpl.doesNewDiskOfferingHasTagsAsOldDiskOffering:
// the new offering carries every storage tag of the old one.
func hasTagsOf(old, o *model.DiskOffering) bool {
	oldTags, newTags := tagsArray(old.Tags), tagsArray(o.Tags)
	if len(oldTags) == 0 {
		return true
	}
	return len(newTags) > 0 && subset(oldTags, newTags)
}

// tagsArray is DiskOfferingVO.getTagsArray: the comma-separated tags.
func tagsArray(tags *string) []string {
	if tags == nil || strings.TrimSpace(*tags) == "" {
		return nil
	}
	return strings.Split(*tags, ",")
}

// subset is CollectionUtils.isSubCollection, counting repeats.
func subset(a, b []string) bool {
	rest := slices.Clone(b)
	for _, t := range a {
		i := slices.Index(rest, t)
		if i < 0 {
			return false
		}
		rest = slices.Delete(rest, i, i+1)
	}
	return true
}

// validateSizeChange is validateVolumeResizeWithSize. The simulator has no VM
// snapshots, managed pools or resource limits, so those checks pass.
func validateSizeChange(c *kernel.Call, r *offeringChange) error {
	current := r.volume.SizeBytes
	if current == r.newSize {
		return nil
	}
	if err := validateVolumeSize(r.newSize); err != nil {
		return err
	}
	if current > r.newSize {
		if volumeFormat(r.volume) == "QCOW2" && r.volume.State != model.VolumeAllocated {
			return kernel.ParamError("Unable to shrink volumes of type QCOW2")
		}
		if !r.shrinkOK {
			return kernel.ParamError("Going from existing size of %d to size of %d would shrink the volume."+
				"Need to sign off by supplying the shrinkok parameter with value of true.", current, r.newSize)
		}
	}
	return nil
}

// volumeFormat is the format a volume on primary storage has: the
// hypervisor's own (KVM QCOW2, XenServer VHD, VMware OVA), as
// VolumeOrchestrator.getSupportedImageFormatForCluster gives new volumes.
func volumeFormat(v *model.Volume) string {
	switch v.Hypervisor {
	case "KVM":
		return "QCOW2"
	case "XenServer":
		return "VHD"
	case "VMware":
		return "OVA"
	}
	return ""
}
