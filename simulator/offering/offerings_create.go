package offering

import (
	"math"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// Global settings createServiceOffering reads, at CloudStack's defaults.
const (
	OfferingMaxCPUCores = 0 // vm.serviceoffering.cpu.cores.max; 0 is no limit
	OfferingMaxRAMSize  = 0 // vm.serviceoffering.ram.size.max (MB); 0 is no limit
)

// offeringCreateCommands are the commands of offerings_create.go (registerCommands).
func offeringCreateCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createServiceOffering", Sync: createServiceOffering},
		{Name: "deleteServiceOffering", IDKind: model.KindServiceOffering, Sync: deleteServiceOffering},
	}
}

func createServiceOffering(c *kernel.Call) (any, error) {
	o, err := newServiceOffering(c.State, c.Params, c.Engine.Now())
	if err != nil {
		return nil, err
	}
	c.Changed()
	return map[string]any{"serviceoffering": views.ServiceOfferingView(o)}, nil
}

// nullableInt is an Integer parameter: nil when absent or blank, as
// setFieldValue leaves it.
func nullableInt(p kernel.Params, name string) *int {
	if strings.TrimSpace(p.Get(name)) == "" {
		return nil
	}
	n := int(p.Int(name, 0))
	return &n
}

func nullableInt64(p kernel.Params, name string) *int64 {
	if strings.TrimSpace(p.Get(name)) == "" {
		return nil
	}
	n := p.Int(name, 0)
	return &n
}

func nullableBool(p kernel.Params, name string) *bool {
	if !p.Has(name) {
		return nil
	}
	b := p.Bool(name, false)
	return &b
}

func anyNil(ps ...*int) bool {
	for _, p := range ps {
		if p == nil {
			return true
		}
	}
	return false
}

func allNil(ps ...*int) bool {
	for _, p := range ps {
		if p != nil {
			return false
		}
	}
	return true
}

// MaxOr is a "0 means Integer.MAX_VALUE" setting.
func MaxOr(setting int) int {
	if setting == 0 {
		return math.MaxInt32
	}
	return setting
}

// newServiceOffering is ConfigurationManagerImpl.createServiceOffering (the
// command's checks, then the persisting overload), for the API and the seed.
func newServiceOffering(st *model.State, p kernel.Params, now time.Time) (*model.ServiceOffering, error) {
	name := p.Get("name")
	if name == "" { // CreateServiceOfferingCmd.getServiceOfferingName
		return nil, kernel.ParamError("Failed to create service offering because offering name has not been spified.")
	}
	o := &model.ServiceOffering{Name: name, DisplayText: model.FirstNonEmpty(p.Get("displaytext"), name), // getDisplayText
		CPUNumber: nullableInt(p, "cpunumber"), CPUSpeed: nullableInt(p, "cpuspeed"), Memory: nullableInt(p, "memory")}
	if err := checkCompute(o, p); err != nil {
		return nil, err
	}
	if err := checkPlacement(o, p); err != nil {
		return nil, err
	}
	if err := checkDisk(o, p, st); err != nil {
		return nil, err
	}
	if err := takeDetails(o, p); err != nil {
		return nil, err
	}
	o.ID, o.InternalID = st.NewID(model.KindServiceOffering)
	o.Created = now
	st.ServiceOfferings = append(st.ServiceOfferings, o)
	return o, nil
}

// checkCompute is createServiceOffering's CPU and memory rules.
// CreateServiceOfferingCmd.isCustomized: the customized parameter, else
// "cpunumber or memory missing". A customized offering is unconstrained
// (no cpuspeed, no limits) or custom constrained (cpuspeed and all four
// limits, which go to the offering's details).
func checkCompute(o *model.ServiceOffering, p kernel.Params) error {
	minCPU, maxCPU := nullableInt(p, "mincpunumber"), nullableInt(p, "maxcpunumber")
	minMem, maxMem := nullableInt(p, "minmemory"), nullableInt(p, "maxmemory")
	customized := o.CPUNumber == nil || o.Memory == nil
	if b := nullableBool(p, "customized"); b != nil {
		customized = *b
	}
	fail := func(what string) error {
		return kernel.ParamError("Failed to create service offering %s: specify the %s", o.Name, what)
	}
	if !customized {
		switch maxCores, maxRAM := MaxOr(OfferingMaxCPUCores), MaxOr(OfferingMaxRAMSize); {
		case o.CPUNumber != nil && (*o.CPUNumber <= 0 || *o.CPUNumber > maxCores):
			return fail("cpu number value between 1 and " + model.Itoa(maxCores))
		case o.CPUSpeed == nil || *o.CPUSpeed < 0:
			return fail("cpu speed value between 0 and " + model.Itoa(math.MaxInt32))
		case o.Memory != nil && (*o.Memory < 32 || *o.Memory > maxRAM):
			return fail("memory value between 32 and " + model.Itoa(maxRAM) + " MB")
		}
		return nil
	}
	if o.CPUNumber != nil || o.Memory != nil {
		return kernel.ParamError("For creating a custom compute offering cpu and memory all should be null")
	}
	limits := []*int{minCPU, maxCPU, minMem, maxMem, o.CPUSpeed}
	if anyNil(limits...) {
		if !allNil(limits...) {
			return kernel.ParamError("For creating a custom compute offering min/max cpu and min/max memory/cpu speed should all be null or all specified")
		}
		return nil
	}
	switch {
	case *o.CPUSpeed < 0:
		return fail("cpu speed value between 1 and " + model.Itoa(math.MaxInt32))
	case *maxCPU <= 0 || *minCPU <= 0:
		return fail("minimum or minimum cpu number value between 1 and " + model.Itoa(math.MaxInt32))
	case *minMem < 32:
		return fail("memory value between 32 and " + model.Itoa(math.MaxInt32) + " MB")
	}
	o.Details = map[string]string{"minmemory": model.Itoa(*minMem), "maxmemory": model.Itoa(*maxMem),
		"mincpunumber": model.Itoa(*minCPU), "maxcpunumber": model.Itoa(*maxCPU)}
	return nil
}

// checkPlacement is createServiceOffering's storage type, system VM, network
// rate and cache mode rules.
func checkPlacement(o *model.ServiceOffering, p kernel.Params) error {
	o.OfferHA, o.LimitCPUUse, o.Volatile = p.Bool("offerha", false), p.Bool("limitcpuuse", false), p.Bool("isvolatile", false)
	if err := validateCacheMode(p.Get("cachemode")); err != nil {
		return err
	}
	o.CacheMode = strings.ToLower(p.Get("cachemode"))
	switch st := p.Get("storagetype"); {
	case strings.EqualFold(st, "local"):
		if o.OfferHA {
			return kernel.ParamError("HA offering with local storage is not supported. ")
		}
		o.LocalStorage = true
	case st != "" && !strings.EqualFold(st, "shared"):
		return kernel.ParamError("Invalid storage type %s specified, valid types are: 'local' and 'shared'", st)
	}
	if p.Bool("issystem", false) {
		// The simulator runs no system VMs; it refuses to hold their offerings.
		return &kernel.APIError{Code: kernel.CodeUnsupported, CSCode: kernel.CsUnavailableCmd,
			Text: "System VM offerings are not implemented by the CloudStack simulator"}
	}
	if o.NetworkRate = nullableInt(p, "networkrate"); o.NetworkRate != nil && *o.NetworkRate < 0 {
		return kernel.ParamError("Failed to create service offering %s: specify the network rate value more than 0", o.Name)
	}
	// createServiceOffering cleans up the storage tags (given to the disk
	// offering it makes beside) and keeps the host tags as given.
	o.HostTags = given(p, "hosttags")
	var err *kernel.APIError
	if o.StorageTags, err = cleanupTags(given(p, "tags")); err != nil {
		return err
	}
	o.NoDynamicScaling = !p.Bool("dynamicscalingenabled", true)
	o.DiskStrictness, o.EncryptRoot = p.Bool("diskofferingstrictness", false), p.Bool("encryptroot", false)
	return nil
}

// checkDisk is the root disk half: the disk offering it maps to, or the
// rules createDiskOfferingInternal applies to the one it makes.
func checkDisk(o *model.ServiceOffering, p kernel.Params, st *model.State) error {
	if p.Get("storagepolicy") != "" {
		return kernel.ParamError("Please specify a valid vSphere storage policy id")
	}
	if id := p.Get("diskofferingid"); id != "" {
		if _, ok := model.ByID(st.DiskOfferings, id); !ok {
			return kernel.ParamError("Please specify a valid disk offering.")
		}
	}
	if p.Get("vgpuprofileid") != "" { // validateVgpuProfileAndGetGpuCount: the simulator has no GPUs
		return kernel.ParamError("Please specify a valid vgpu profile.")
	}
	if err := checkIOPS(p); err != nil {
		return err
	}
	if size := nullableInt64(p, "rootdisksize"); size != nil {
		if *size <= 0 {
			return kernel.ParamError("The Root disk size is of %d GB but it must be greater than 0.", *size)
		}
		if *size > MaxVolumeSizeGB {
			return kernel.ParamError("The maximum size for a disk is %d GB.", MaxVolumeSizeGB)
		}
		o.RootDiskSizeGB = *size
	}
	if r := nullableInt(p, "hypervisorsnapshotreserve"); r != nil && *r < 0 {
		return kernel.ParamError("If provided, Hypervisor Snapshot Reserve must be greater than or equal to 0.")
	}
	o.ProvisioningType = strings.ToLower(model.FirstNonEmpty(p.Get("provisioningtype"), "thin"))
	return nil
}

// takeDetails adds serviceofferingdetails to the offering's details
// (createServiceOffering's details loop; bandwidth and IOPS limits belong to
// the disk offering).
func takeDetails(o *model.ServiceOffering, p kernel.Params) error {
	details := offeringDetails(p.Map("serviceofferingdetails"))
	_, pci := details["pciDevice"]
	_, vgpu := details["vgpuType"]
	if pci != vgpu {
		return kernel.ParamError("Please specify the pciDevice and vgpuType correctly.")
	}
	for k, v := range details {
		if strings.HasPrefix(k, "extraconfig") && !strings.HasPrefix(k, "extraconfig-dpdk-") {
			return kernel.ParamError("Only extraconfig for DPDK are supported in service offering details")
		}
		if strings.EqualFold(k, "bandwidthLimitInMbps") || strings.EqualFold(k, "iopsLimit") {
			continue
		}
		if o.Details == nil {
			o.Details = map[string]string{}
		}
		o.Details[k] = v
	}
	return nil
}

// offeringDetails is CreateServiceOfferingCmd.getDetails: key/value pairs,
// or each entry's own fields.
func offeringDetails(entries []map[string]string) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		if e["key"] != "" && e["value"] != "" {
			out[e["key"]] = e["value"]
			continue
		}
		for k, v := range e {
			out[k] = v
		}
	}
	return out
}

// checkIOPS is createDiskOfferingInternal's (and persistDiskOffering's) min
// and max IOPS rule for offerings whose IOPS are not customized.
func checkIOPS(p kernel.Params) error {
	custom := nullableBool(p, "customizediops")
	if custom == nil || *custom {
		return nil
	}
	minIOPS, maxIOPS := nullableInt64(p, "miniops"), nullableInt64(p, "maxiops")
	if minIOPS == nil && maxIOPS == nil {
		return nil
	}
	if minIOPS == nil || *minIOPS <= 0 {
		return kernel.ParamError("The min IOPS must be greater than 0.")
	}
	if maxIOPS == nil || *minIOPS > *maxIOPS {
		return kernel.ParamError("The min IOPS must be less than or equal to the max IOPS.")
	}
	return nil
}

// validateCacheMode is ConfigurationManagerImpl.validateCacheMode
// (DiskOffering.DiskCacheMode).
func validateCacheMode(mode string) error {
	switch strings.ToLower(mode) {
	case "", "none", "writeback", "writethrough", "hypervisor_default":
		return nil
	}
	return kernel.ParamError("Invalid cache mode (%s). Please specify one of the following valid cache mode parameters: none, writeback, writethrough or hypervisor_default.", mode)
}

// given is a string parameter as the command holds it: nil when not sent.
func given(p kernel.Params, name string) *string {
	if !p.Has(name) {
		return nil
	}
	v := p.Get(name)
	return &v
}

// cleanupTags is com.cloud.utils.StringUtils.cleanupTags: split on commas
// as String.split does (trailing empty entries dropped, inner ones kept),
// each entry trimmed as String.trim does, joined again. Tags of commas only
// split into nothing, and its StringBuilder.delete(-1, 0) throws:
// ApiServer.handleRequest answers that exception's message as a 530.
func cleanupTags(tags *string) (*string, *kernel.APIError) {
	if tags == nil {
		return nil, nil
	}
	parts := strings.Split(*tags, ",")
	if *tags != "" {
		for len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
	}
	if len(parts) == 0 {
		return nil, &kernel.APIError{Code: kernel.CodeInternalError, CSCode: kernel.CsServerAPIException, Text: "start -1, end 0, length 0"}
	}
	for i, t := range parts {
		parts[i] = strings.TrimFunc(t, func(r rune) bool { return r <= ' ' })
	}
	cleaned := strings.Join(parts, ",")
	return &cleaned, nil
}

// checkRates is validateMaxRateEqualsOrGreater for the four rate pairs.
func checkRates(p kernel.Params) error {
	for _, r := range []struct{ rate, max, label string }{
		{"iopsreadrate", "iopsreadratemax", "IOPS Read"}, {"iopswriterate", "iopswriteratemax", "IOPS Write"},
		{"bytesreadrate", "bytesreadratemax", "Bytes Read"}, {"byteswriterate", "byteswriteratemax", "Bytes Write"},
	} {
		n, m := nullableInt64(p, r.rate), nullableInt64(p, r.max)
		if n != nil && m != nil && *m < *n {
			return kernel.ParamError("%s rate (%d) cannot be greater than %s maximum rate (%d)", r.label, *n, r.label, *m)
		}
	}
	return nil
}

// deleteServiceOffering is ConfigurationManagerImpl.deleteServiceOffering:
// the offering becomes Inactive (VMs keep using it).
func deleteServiceOffering(c *kernel.Call) (any, error) {
	o, ok := model.ByID(c.State.ServiceOfferings, c.Params.Get("id"))
	if !ok {
		return nil, kernel.ParamError("unable to find service offering %s", c.Params.Get("id"))
	}
	o.Inactive = true
	c.Changed()
	return kernel.Success(), nil
}
