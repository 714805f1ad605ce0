package offering

import (
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// diskOfferingCreateCommands are the commands of diskofferings_create.go (registerCommands).
func diskOfferingCreateCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createDiskOffering", Sync: createDiskOffering},
		{Name: "deleteDiskOffering", IDKind: model.KindDiskOffering, Sync: deleteDiskOffering},
	}
}

func createDiskOffering(c *kernel.Call) (any, error) {
	o, err := newDiskOffering(c.State, c.Params, c.Engine.Now())
	if err != nil {
		return nil, err
	}
	c.Changed()
	return map[string]any{"diskoffering": views.DiskOfferingView(o)}, nil
}

// newDiskOffering is ConfigurationManagerImpl.createDiskOffering and
// persistDiskOffering, for the API and the seed.
func newDiskOffering(st *model.State, p kernel.Params, now time.Time) (*model.DiskOffering, error) {
	name := p.Get("name")
	o := &model.DiskOffering{Name: name, DisplayText: model.FirstNonEmpty(p.Get("displaytext"), name), // CreateDiskOfferingCmd.getDisplayText
		Customized: p.Bool("customized", false), Hidden: !p.Bool("displayoffering", true),
		SizeStrictness: p.Bool("disksizestrictness", false), Encrypt: p.Bool("encrypt", false)}
	size := nullableInt64(p, "disksize")
	switch {
	case !o.Customized && size == nil:
		return nil, kernel.ParamError("Disksize is required for a non-customized disk offering")
	case o.Customized && size != nil:
		return nil, kernel.ParamError("Disksize is not allowed for a customized disk offering")
	}
	if err := validateCacheMode(p.Get("cachemode")); err != nil {
		return nil, err
	}
	switch t := p.Get("storagetype"); {
	case strings.EqualFold(t, "local"):
		o.LocalStorage = true
	case t != "" && !strings.EqualFold(t, "shared"):
		return nil, kernel.ParamError("Invalid storage type %s specified, valid types are: 'local' and 'shared'", t)
	}
	if p.Get("storagepolicy") != "" {
		return nil, kernel.ParamError("Please specify a valid vSphere storage policy id")
	}
	if err := checkRates(p); err != nil {
		return nil, err
	}
	if size != nil && *size <= 0 {
		return nil, kernel.ParamError("Please specify a disk size of at least 1 GB.")
	} else if size != nil && *size > MaxVolumeSizeGB {
		return nil, kernel.ParamError("The maximum size for a disk is %d GB.", MaxVolumeSizeGB)
	}
	if size != nil {
		o.DiskSize = *size
	} else {
		o.Customized = true // persistDiskOffering: diskSize == 0 makes it customized
	}
	if err := takeIOPS(o, p); err != nil {
		return nil, err
	}
	if r := nullableInt(p, "hypervisorsnapshotreserve"); r != nil && *r < 0 {
		return nil, kernel.ParamError("If provided, Hypervisor Snapshot Reserve must be greater than or equal to 0.")
	}
	o.ProvisioningType = strings.ToLower(model.FirstNonEmpty(p.Get("provisioningtype"), "thin"))
	o.CacheMode = strings.ToLower(p.Get("cachemode"))
	var err *kernel.APIError
	if o.Tags, err = cleanupTags(given(p, "tags")); err != nil {
		return nil, err
	}
	if d := offeringDetails(p.Map("details")); len(d) > 0 {
		o.Details = d
	}
	o.ID, o.InternalID = st.NewID(model.KindDiskOffering)
	o.Created = now
	st.DiskOfferings = append(st.DiskOfferings, o)
	return o, nil
}

// takeIOPS is persistDiskOffering's IOPS rule: customized IOPS (or none
// said) keeps no min/max; fixed IOPS default to 0/0.
func takeIOPS(o *model.DiskOffering, p kernel.Params) error {
	if err := checkIOPS(p); err != nil {
		return err
	}
	o.CustomizedIOPS = nullableBool(p, "customizediops")
	if o.CustomizedIOPS == nil || *o.CustomizedIOPS {
		return nil
	}
	minIOPS, maxIOPS := nullableInt64(p, "miniops"), nullableInt64(p, "maxiops")
	zero := int64(0)
	if minIOPS == nil {
		minIOPS = &zero
	}
	if maxIOPS == nil {
		maxIOPS = &zero
	}
	o.MinIOPS, o.MaxIOPS = minIOPS, maxIOPS
	return nil
}

// deleteDiskOffering is ConfigurationManagerImpl.deleteDiskOffering.
func deleteDiskOffering(c *kernel.Call) (any, error) {
	o, ok := model.ByID(c.State.DiskOfferings, c.Params.Get("id"))
	if !ok {
		return nil, kernel.ParamError("Unable to find disk offering by id %s", c.Params.Get("id"))
	}
	o.Inactive = true
	c.Changed()
	return kernel.Success(), nil
}

// Limits at CloudStack's defaults.
const (
	MaxVolumeSizeGB = 2000 // storage.max.volume.size
	// DefaultMaxDataVolumes is the per-VM data disk limit when
	// hypervisor_capabilities has no value (DEFAULT_MAX_DATA_VOLUMES).
	DefaultMaxDataVolumes = 6
)
