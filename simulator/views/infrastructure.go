package views

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// ZoneView is DataCenterJoinDaoImpl.newDataCenterResponse's ZoneResponse:
// the DNS servers and the guest CIDR only in ResponseView.Full (the
// ...ByAdmin command a root admin's role maps to; account type 1 here).
func ZoneView(c *kernel.Call, z *model.Zone) map[string]any {
	v := map[string]any{"id": z.ID, "name": z.Name, "networktype": z.NetworkType,
		"allocationstate": z.Allocation, "zonetoken": z.Token, "securitygroupsenabled": false,
		"localstorageenabled": false, "dhcpprovider": "VirtualRouter", "type": "Core",
		"hasannotations": false, "ismultiarch": false, "isnsxenabled": false, "routedmodeenabled": false,
		"allowuserspecifyvrmtu": false, "routerprivateinterfacemaxmtu": 1500,
		"routerpublicinterfacemaxmtu": 1500, "tags": []any{}, "resourcedetails": map[string]string{}}
	shown := map[string]string{"domain": z.Domain}
	if c.Account.Type == 1 {
		for k, val := range map[string]string{"dns1": z.DNS1, "dns2": z.DNS2, "internaldns1": z.InternalDNS,
			"internaldns2": z.InternalDNS2, "guestcidraddress": z.GuestCIDR} {
			shown[k] = val
		}
	}
	for k, val := range shown {
		if val != "" {
			v[k] = val
		}
	}
	return v
}

// PodView is ApiResponseHelper.createPodResponse's PodResponse.
func PodView(c *kernel.Call, p *model.Pod) map[string]any {
	z := c.State.Zone(p.ZoneID)
	return map[string]any{"id": p.ID, "name": p.Name, "zoneid": z.ID, "zonename": z.Name,
		"gateway": p.Gateway, "netmask": p.Netmask, "startip": []string{p.StartIP}, "endip": []string{p.EndIP},
		"forsystemvms": []string{"0"}, "vlanid": []string{"vlan://untagged"}, "allocationstate": p.Allocation,
		"hasannotations": false, "ipranges": []map[string]any{{"startip": p.StartIP, "endip": p.EndIP,
			"gateway": p.Gateway, "forsystemvms": "0", "vlanid": "vlan://untagged"}}}
}

// ClusterView is ApiResponseHelper.createClusterResponse's ClusterResponse.
func ClusterView(c *kernel.Call, cl *model.Cluster) map[string]any {
	z, p := c.State.Zone(cl.ZoneID), c.State.Pod(cl.PodID)
	return map[string]any{"id": cl.ID, "name": cl.Name, "podid": p.ID, "podname": p.Name, "zoneid": z.ID,
		"zonename": z.Name, "hypervisortype": cl.Hypervisor, "clustertype": "CloudManaged",
		"allocationstate": cl.Allocation, "managedstate": "Managed", "cpuovercommitratio": "1.0",
		"memoryovercommitratio": "1.0", "arch": "x86_64", "hasannotations": false,
		"resourcedetails": map[string]string{"cpuOvercommitRatio": "1.0", "memoryOvercommitRatio": "1.0"}}
}

// CloudStackVersion is the version of the release the simulator is
// (ManagementServerImpl.getVersion).
func CloudStackVersion(c *kernel.Call) string { return c.Engine.Schema.Release }

// hypervisorVersion is what each hypervisor's hosts report; the Simulator
// hypervisor reports the management server's version.
func hypervisorVersion(c *kernel.Call, hv string) string {
	switch hv {
	case "XenServer":
		return "8.2.0"
	case "VMware":
		return "8.0"
	case "KVM":
		return ""
	}
	return CloudStackVersion(c)
}

// HostView is the HostResponse of HostJoinDaoImpl.newHostResponse (not
// re-read): capacity from the VMs placed on the host, overcommit 1.0.
func HostView(c *kernel.Call, h *model.Host) map[string]any {
	z, p, cl := c.State.Zone(h.ZoneID), c.State.Pod(h.PodID), c.State.Cluster(h.ClusterID)
	cpu, mem := model.Allocation(c.State, h.ID)
	totalCPU := int64(h.CPUNumber) * h.CPUSpeed
	return map[string]any{"id": h.ID, "name": h.Name, "type": "Routing", "state": h.State,
		"resourcestate": h.ResourceState, "ipaddress": h.IPAddress, "hypervisor": h.Hypervisor,
		"hypervisorversion": hypervisorVersion(c, h.Hypervisor), "version": CloudStackVersion(c),
		"zoneid": z.ID, "zonename": z.Name, "podid": p.ID, "podname": p.Name, "clusterid": cl.ID,
		"clustername": cl.Name, "clustertype": "CloudManaged", "cpunumber": h.CPUNumber, "cpusockets": 1,
		"cpuspeed": h.CPUSpeed, "cpuwithoverprovisioning": fmt.Sprint(totalCPU),
		"cpuallocatedvalue": cpu, "cpuallocated": percent(cpu, totalCPU),
		"cpuallocatedpercentage": percent(cpu, totalCPU), "cpuallocatedwithoverprovisioning": percent(cpu, totalCPU),
		"memorytotal": h.MemoryTotal, "memorywithoverprovisioning": fmt.Sprint(h.MemoryTotal),
		"memoryallocated": mem, "memoryallocatedbytes": mem, "memoryallocatedpercentage": percent(mem, h.MemoryTotal),
		"capabilities": "hvm", "created": kernel.CsTime(h.Created), "lastpinged": kernel.CsTime(time.Unix(1600000, 0)),
		"managementserverid": c.State.ManagementServerID, "islocalstorageactive": false, "hahost": false,
		"hasannotations": false, "arch": "x86_64", "encryptionsupported": true,
		"hostha":              map[string]any{"haenable": false, "hastate": "Disabled"},
		"outofbandmanagement": map[string]any{"enabled": false, "powerstate": "Disabled"}}
}

func percent(used, total int64) string {
	if total <= 0 {
		return "0%"
	}
	return fmt.Sprintf("%.2f%%", float64(used)*100/float64(total))
}

const (
	// poolCapacity is what a simulated pool reports (the simulator agent's
	// mock storage).
	poolCapacity = int64(1) << 40
)

// PoolView is ApiResponseHelper.createStoragePoolResponse (StoragePoolJoinDao).
func PoolView(c *kernel.Call, s *model.StoragePool) map[string]any {
	z := c.State.Zone(s.ZoneID)
	u, _ := url.Parse(s.URL)
	v := map[string]any{"id": s.ID, "name": s.Name, "zoneid": z.ID, "zonename": z.Name, "scope": s.Scope,
		"hypervisor": s.Hypervisor, "state": model.PoolUp, "type": poolType(u.Scheme), "ipaddress": u.Hostname(),
		"path": u.Path, "provider": "DefaultPrimary", "created": kernel.CsTime(s.Created), "disksizetotal": poolCapacity,
		"disksizeallocated": 0, "disksizeused": 0, "overprovisionfactor": "2.0", "managed": false,
		"hasannotations": false, "istagarule": false}
	if pod := c.State.Pod(s.PodID); pod != nil {
		v["podid"], v["podname"] = pod.ID, pod.Name
	}
	if cl := c.State.Cluster(s.ClusterID); cl != nil {
		v["clusterid"], v["clustername"] = cl.ID, cl.Name
	}
	if s.Tags != "" {
		v["tags"] = s.Tags
	}
	return v
}

// poolType is Storage.StoragePoolType for the URL schemes createPool maps.
func poolType(scheme string) string {
	switch strings.ToLower(scheme) {
	case "nfs":
		return "NetworkFilesystem"
	case "file":
		return "Filesystem"
	case "iscsi":
		return "IscsiLUN"
	case "rbd":
		return "RBD"
	}
	return "NetworkFilesystem"
}

// ImageStoreView is ApiResponseHelper.createImageStoreResponse.
func ImageStoreView(c *kernel.Call, s *model.ImageStore) map[string]any {
	z := c.State.Zone(s.ZoneID)
	return map[string]any{"id": s.ID, "name": s.Name, "url": s.URL, "protocol": "nfs", "providername": s.Provider,
		"scope": "ZONE", "zoneid": z.ID, "zonename": z.Name, "readonly": false, "disksizetotal": poolCapacity,
		"disksizeused": 0, "hasannotations": false}
}

// ConfigView is ApiResponseHelper.createConfigurationResponse for a global
// setting (ListCfgsByCmd.setScope leaves scope out at global scope).
func ConfigView(c *kernel.Call, d *model.SettingDef) map[string]any {
	v := map[string]any{"category": d.Category, "name": d.Name, "description": d.Description,
		"isdynamic": d.Dynamic, "component": d.Component, "type": configValueType(d.Kind)}
	if val := c.State.SettingValue(d.Name); val != nil {
		v["value"] = *val
	}
	if d.DefaultValue != nil {
		v["defaultvalue"] = *d.DefaultValue
	}
	return v
}

// configValueType is ConfigurationManagerImpl.parseConfigurationTypeIntoString
// (Configuration.ValueType) for the modelled types.
func configValueType(kind string) string {
	switch kind {
	case model.ConfigTypeInteger:
		return "Number"
	case model.ConfigTypeBoolean:
		return "Boolean"
	}
	return "String"
}
