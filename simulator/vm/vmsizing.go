package vm

import (
	"strconv"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/offering"
)

// The compute and disk sizes of a VM being deployed: the offering's, or the
// custom ones the caller gave within the limits CloudStack enforces.

// deployDetails is BaseDeployVMCmd.getDetails: details[i].* merged, plus
// rootdisksize unless a detail already gives it.
func deployDetails(p kernel.Params) map[string]string {
	details := map[string]string{}
	for _, m := range p.Map("details") {
		for k, v := range m {
			details[k] = v
		}
	}
	if p.Has("rootdisksize") {
		if _, ok := details["rootdisksize"]; !ok {
			details["rootdisksize"] = p.Get("rootdisksize")
		}
	}
	if len(details) == 0 {
		return nil
	}
	return details
}

// computeOf is the VM's CPU, speed and memory: a fixed offering's own, or
// for a dynamic one what validateCustomParameters accepts from the details,
// filled in as ServiceOfferingDaoImpl.getComputeOffering does.
func computeOf(o *model.ServiceOffering, details map[string]string) (cpu, speed, mem int, err error) {
	if !o.Dynamic() {
		return *o.CPUNumber, *o.CPUSpeed, *o.Memory, nil
	}
	if err := validateCustomParameters(o, details); err != nil {
		return 0, 0, 0, err
	}
	pick := func(fixed *int, key string) int {
		if fixed != nil {
			return *fixed
		}
		return model.ParseIntOr(details[key], -1)
	}
	return pick(o.CPUNumber, "cpuNumber"), pick(o.CPUSpeed, "cpuSpeed"), pick(o.Memory, "memory"), nil
}

// validateCustomParameters is UserVmManagerImpl.validateCustomParameters: what
// the offering leaves open must come in the details, within the offering's
// limits (vm.serviceoffering.cpu.cores.max and ram.size.max at their default,
// no limit); what it fixes may not be overridden.
func validateCustomParameters(o *model.ServiceOffering, details map[string]string) error {
	if len(details) == 0 {
		return kernel.ParamError("Need to specify custom parameter values cpu, cpu speed and memory when using custom offering")
	}
	inRange := func(key, label string, lo, hi int) error {
		if n := model.ParseIntOr(details[key], -1); n < lo || n > hi {
			return kernel.ParamError("Invalid %s value, specify a value between %d and %d", label, lo, hi)
		}
		return nil
	}
	for _, v := range []struct {
		fixed       *int
		key, label  string
		lo, hi, cap int
	}{
		{o.CPUNumber, "cpuNumber", "cpu cores", o.Limit("mincpunumber", 1), o.Limit("maxcpunumber", model.CustomParameterLimit), offering.OfferingMaxCPUCores},
		// isCustomCpuSpeedSupported is false once the offering has a speed.
		{o.CPUSpeed, "cpuSpeed", "cpu speed", 1, model.CustomParameterLimit, 0},
		{o.Memory, "memory", "memory", o.Limit("minmemory", 32), o.Limit("maxmemory", model.CustomParameterLimit), offering.OfferingMaxRAMSize},
	} {
		_, given := details[v.key]
		switch {
		case v.fixed == nil:
			if err := inRange(v.key, v.label, v.lo, min(v.hi, offering.MaxOr(v.cap))); err != nil {
				return err
			}
		case given:
			return kernel.ParamError("The %s of this offering id:%s is not customizable. This is predefined in the template.", v.label, o.ID)
		}
	}
	return nil
}

// rootDiskBytes is the ROOT volume's size: the template's, or the
// rootdisksize override in GB, which may not be smaller.
func rootDiskBytes(tmpl deployTemplate, details map[string]string) (int64, error) {
	raw, ok := details["rootdisksize"]
	if !ok {
		return tmpl.sizeBytes, nil
	}
	gb, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil || gb <= 0 {
		return 0, kernel.ParamError("Root disk size should be a positive number.")
	}
	if gb<<30 < tmpl.sizeBytes {
		return 0, kernel.ParamError("Unsupported: rootdisksize override (%d GB) is smaller than template size %s", gb, model.HumanSize(tmpl.sizeBytes))
	}
	return gb << 30, nil
}

// deployDataDisk is the DATADISK diskofferingid (and, for a customized
// offering, size in GB) asks for.
func deployDataDisk(c *kernel.Call) (*model.DiskOffering, int64, error) {
	p := c.Params
	if p.Get("diskofferingid") == "" {
		return nil, 0, nil
	}
	o, ok := model.ByID(c.State.DiskOfferings, p.Get("diskofferingid"))
	if !ok {
		return nil, 0, kernel.ParamError("Unable to find disk offering by id %s", p.Get("diskofferingid"))
	}
	if !o.Customized {
		return o, o.DiskSize << 30, nil
	}
	if !p.Has("size") {
		return nil, 0, kernel.ParamError("This disk offering requires a custom size specified")
	}
	size := p.Int("size", 0)
	if size < model.CustomDiskMinSizeGB || size > model.CustomDiskMaxSizeGB {
		return nil, 0, kernel.ParamError("VM Creation failed. Volume size: %dGB is out of allowed range. Max: %d Min:%d",
			size, model.CustomDiskMaxSizeGB, model.CustomDiskMinSizeGB)
	}
	return o, size << 30, nil
}
