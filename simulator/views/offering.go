package views

import (
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// StorageType is an offering's storagetype: local or shared (the
// ServiceOfferingJoinDaoImpl and DiskOfferingJoinDaoImpl responses).
func StorageType(local bool) string {
	if local {
		return "local"
	}
	return "shared"
}

func stateName(inactive bool) string {
	if inactive {
		return model.OfferingInactive
	}
	return model.OfferingActive
}

// ServiceOfferingView is ServiceOfferingJoinDaoImpl.newServiceOfferingResponse;
// Gson leaves out what is null (cpunumber, cpuspeed and memory of what a
// customized offering leaves open).
func ServiceOfferingView(o *model.ServiceOffering) map[string]any {
	v := map[string]any{"id": o.ID, "name": o.Name, "displaytext": o.DisplayText, "created": kernel.CsTime(o.Created),
		"iscustomized": o.Dynamic(), "storagetype": StorageType(o.LocalStorage),
		"provisioningtype": model.FirstNonEmpty(o.ProvisioningType, "thin"), "offerha": o.OfferHA,
		"limitcpuuse": o.LimitCPUUse, "isvolatile": o.Volatile, "issystem": false, "defaultuse": false,
		"iscustomizediops": false, "cacheMode": model.FirstNonEmpty(o.CacheMode, "none"),
		"dynamicscalingenabled": !o.NoDynamicScaling, "diskofferingstrictness": o.DiskStrictness,
		"encryptroot": o.EncryptRoot, "hasannotations": false, "state": stateName(o.Inactive),
		"purgeresources": false, "gpudisplay": false, "rootdisksize": o.RootDiskSizeGB}
	setInt := func(key string, n *int) {
		if n != nil {
			v[key] = *n
		}
	}
	setInt("cpunumber", o.CPUNumber)
	setInt("cpuspeed", o.CPUSpeed)
	setInt("memory", o.Memory)
	setInt("networkrate", o.NetworkRate)
	if len(o.Details) > 0 {
		v["serviceofferingdetails"] = o.Details
	}
	// setHostTag(getHostTag()) and setTags(getTags()): the join view's
	// storage tags are those of the offering's own disk offering.
	setString(v, "hosttags", o.HostTags)
	setString(v, "storagetags", o.StorageTags)
	return v
}

// setString sets what is not null, as Gson writes it: ApiResponseGsonHelper
// leaves out nulls and writes empty strings.
func setString(v map[string]any, key string, s *string) {
	if s != nil {
		v[key] = *s
	}
}

// DiskOfferingView is DiskOfferingJoinDaoImpl.newDiskOfferingResponse.
func DiskOfferingView(o *model.DiskOffering) map[string]any {
	v := map[string]any{"id": o.ID, "name": o.Name, "displaytext": o.DisplayText, "disksize": o.DiskSize,
		"iscustomized": o.Customized, "created": kernel.CsTime(o.Created), "storagetype": StorageType(o.LocalStorage),
		"provisioningtype": model.FirstNonEmpty(o.ProvisioningType, "thin"), "cacheMode": model.FirstNonEmpty(o.CacheMode, "none"),
		"displayoffering": !o.Hidden, "encrypt": o.Encrypt, "iscustomizediops": o.CustomizedIOPS != nil && *o.CustomizedIOPS,
		"disksizestrictness": o.SizeStrictness, "hasannotations": false, "state": stateName(o.Inactive),
		"suitableforvirtualmachine": true}
	if o.MinIOPS != nil {
		v["miniops"] = *o.MinIOPS
	}
	if o.MaxIOPS != nil {
		v["maxiops"] = *o.MaxIOPS
	}
	setString(v, "tags", o.Tags) // setTags(getTags())
	if len(o.Details) > 0 {
		v["details"] = o.Details
	}
	return v
}
