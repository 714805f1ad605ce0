package simulator

import (
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// setHypervisor switches every cluster and host to hv (a restart with a
// different -hypervisor flag).
func setHypervisor(st *model.State, hv string) {
	for _, c := range st.Clusters {
		c.Hypervisor = hv
	}
	for _, h := range st.Hosts {
		h.Hypervisor = hv
	}
	for _, p := range st.StoragePools {
		p.Hypervisor = hv
	}
	if t := st.BuiltinTemplate(); t != nil {
		t.Hypervisor = hv
	}
}

func init() {
	register(
		command{name: "listZones", idKind: model.KindZone, sync: listZones},
		command{name: "listPods", idKind: model.KindPod, sync: listPods},
		command{name: "listClusters", idKind: model.KindCluster, sync: listClusters},
		command{name: "listHypervisors", sync: listHypervisors},
		command{name: "listCapabilities", sync: listCapabilities},
	)
}

// listZones is QueryManagerImpl.listDataCentersInternal: id, else name
// (EQ), else keyword (name or description LIKE; zones here have no
// description); networktype EQ. A caller that is not a root admin does not
// see Disabled zones (buildSearchCriteriaForUserDomainAndAbove,
// buildSearchCriteriaForDomainAdmins: allocationState NEQ Disabled).
// Not modelled: available, domainid and dedication, tags, showcapacities.
func listZones(c *Call) (any, error) {
	p := c.Params
	l := lister[*model.Zone]{key: "zone", id: (*model.Zone).UUID, name: func(z *model.Zone) string { return z.Name },
		keyword: func(z *model.Zone) []string {
			if p.Get("id") != "" || p.Get("name") != "" {
				return []string{p.Get("keyword")} // keyword is not read: let it match
			}
			return []string{z.Name}
		},
		view: (*Call).zoneView}
	if p.Get("id") != "" {
		l.name = nil // id wins over name
	}
	rootAdmin := c.Account.Type == 1
	return l.run(c, c.st.Zones, func(z *model.Zone) bool {
		return optEq(p.Get("networktype"), z.NetworkType) && (rootAdmin || z.Allocation != model.AllocationDisabled)
	})
}

// zoneView is DataCenterJoinDaoImpl.newDataCenterResponse's ZoneResponse:
// the DNS servers and the guest CIDR only in ResponseView.Full (the
// ...ByAdmin command a root admin's role maps to; account type 1 here).
func (c *Call) zoneView(z *model.Zone) map[string]any {
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

// listPods is searchForPods (ManagementServerImpl; PodVlanListingServiceImpl
// on main): id, name EQ (as main; an older release used LIKE), zone and
// allocationstate EQ (the keyword part not read: LIKE on the name here).
func listPods(c *Call) (any, error) {
	l := lister[*model.Pod]{key: "pod", id: (*model.Pod).UUID, name: func(p *model.Pod) string { return p.Name },
		zone: func(p *model.Pod) string { return p.ZoneID }, view: (*Call).podView}
	return l.run(c, c.st.Pods, func(p *model.Pod) bool { return optEq(c.Params.Get("allocationstate"), p.Allocation) })
}

func (c *Call) podView(p *model.Pod) map[string]any {
	z := c.st.Zone(p.ZoneID)
	return map[string]any{"id": p.ID, "name": p.Name, "zoneid": z.ID, "zonename": z.Name,
		"gateway": p.Gateway, "netmask": p.Netmask, "startip": []string{p.StartIP}, "endip": []string{p.EndIP},
		"forsystemvms": []string{"0"}, "vlanid": []string{"vlan://untagged"}, "allocationstate": p.Allocation,
		"hasannotations": false, "ipranges": []map[string]any{{"startip": p.StartIP, "endip": p.EndIP,
			"gateway": p.Gateway, "forsystemvms": "0", "vlanid": "vlan://untagged"}}}
}

// listClusters is ManagementServerImpl.searchForClusters (not re-read):
// every cluster is CloudManaged and Managed.
func listClusters(c *Call) (any, error) {
	l := lister[*model.Cluster]{key: "cluster", id: (*model.Cluster).UUID, name: func(cl *model.Cluster) string { return cl.Name },
		zone: func(cl *model.Cluster) string { return cl.ZoneID }, view: (*Call).clusterView}
	p := c.Params
	return l.run(c, c.st.Clusters, func(cl *model.Cluster) bool {
		return optEq(p.Get("podid"), cl.PodID) && optEq(p.Get("hypervisor"), cl.Hypervisor) &&
			optEq(p.Get("allocationstate"), cl.Allocation) && optEq(p.Get("clustertype"), "CloudManaged") &&
			optEq(p.Get("managedstate"), "Managed")
	})
}

func (c *Call) clusterView(cl *model.Cluster) map[string]any {
	z, p := c.st.Zone(cl.ZoneID), c.st.Pod(cl.PodID)
	return map[string]any{"id": cl.ID, "name": cl.Name, "podid": p.ID, "podname": p.Name, "zoneid": z.ID,
		"zonename": z.Name, "hypervisortype": cl.Hypervisor, "clustertype": "CloudManaged",
		"allocationstate": cl.Allocation, "managedstate": "Managed", "cpuovercommitratio": "1.0",
		"memoryovercommitratio": "1.0", "arch": "x86_64", "hasannotations": false,
		"resourcedetails": map[string]string{"cpuOvercommitRatio": "1.0", "memoryOvercommitRatio": "1.0"}}
}

// listHypervisors answers the hypervisors of the zone's clusters
// (ManagementServerImpl.getHypervisors, not re-read).
func listHypervisors(c *Call) (any, error) {
	seen := map[string]bool{}
	var views []map[string]any
	for _, cl := range c.st.Clusters {
		if optEq(c.Params.Get("zoneid"), cl.ZoneID) && !seen[cl.Hypervisor] {
			seen[cl.Hypervisor] = true
			views = append(views, map[string]any{"name": cl.Hypervisor})
		}
	}
	return listBody("hypervisor", len(views), views), nil
}

// cloudStackVersion is the version the simulator claims to be.
const cloudStackVersion = "4.22.0.0"

// listCapabilities is ManagementServerImpl.listCapabilities (ListCapabilitiesCmd)
// with 4.22's defaults: the allowUser* flags are the setting OR an admin
// caller; apiLimitInterval/apiLimitMax only with api.throttling.enabled
// (false); extensionspath only for a root admin; cloudstackversion as
// exposeCloudStackVersionInApiListCapabilities allows (taken as true; its
// default not read). Not served: snapshotshowchainsize and the VPN
// customer gateway parameters (their defaults not read).
func listCapabilities(c *Call) (any, error) {
	admin := c.Account.IsAdmin()
	capability := map[string]any{
		"cloudstackversion": cloudStackVersion, "securitygroupsenabled": false,
		"userpublictemplateenabled": true, "supportELB": "false", "projectinviterequired": false,
		"allowusercreateprojects": true, "customdiskofferingminsize": 1, "customdiskofferingmaxsize": 1024,
		"regionsecondaryenabled": false, "kvmsnapshotenabled": true, "allowuserviewdestroyedvm": admin,
		"allowuserexpungerecovervm": admin, "allowuserexpungerecovervolume": true,
		"allowuserviewalldomainaccounts": false, "allowuserforcestopvm": true,
		"kubernetesserviceenabled": false, "kubernetesclusterexperimentalfeaturesenabled": false,
		"dynamicrolesenabled": true, "dynamicscalingenabled": true, "instanceleaseenabled": false,
		"defaultuipagesize": defaultPageSize, "customhypervisordisplayname": "Custom", "sharedfsvmmincpucount": 2, "sharedfsvmminramsize": 512,
		"instancesstatsretentiontime": 720, "instancesstatsuseronly": false,
		"instancesdisksstatsretentionenabled": false, "instancesdisksstatsretentiontime": 720,
		"additionalconfigenabled": false,
	}
	if c.Account.Type == 1 {
		capability["extensionspath"] = "/usr/share/cloudstack-management/extensions"
	}
	return map[string]any{"capability": capability}, nil
}
