package simulator

import "time"

// Zone is an availability zone.
type Zone struct {
	ID           string    `json:"id"`
	InternalID   int64     `json:"internalid"`
	Name         string    `json:"name"`
	NetworkType  string    `json:"networktype"`
	Allocation   string    `json:"allocationstate"`
	DNS1         string    `json:"dns1"`
	DNS2         string    `json:"dns2,omitempty"`
	InternalDNS  string    `json:"internaldns1"`
	InternalDNS2 string    `json:"internaldns2,omitempty"`
	GuestCIDR    string    `json:"guestcidraddress"`
	Domain       string    `json:"domain,omitempty"` // the zone's network domain
	Token        string    `json:"zonetoken"`
	Created      time.Time `json:"created"`
}

func (z *Zone) uuid() string { return z.ID }

// Pod is a pod of a zone with its management IP range.
type Pod struct {
	ID         string `json:"id"`
	InternalID int64  `json:"internalid"`
	Name       string `json:"name"`
	ZoneID     string `json:"zoneid"`
	Gateway    string `json:"gateway"`
	Netmask    string `json:"netmask"`
	StartIP    string `json:"startip"`
	EndIP      string `json:"endip"`
	Allocation string `json:"allocationstate"`
}

func (p *Pod) uuid() string { return p.ID }

// Cluster is a cluster of hosts of one hypervisor.
type Cluster struct {
	ID         string `json:"id"`
	InternalID int64  `json:"internalid"`
	Name       string `json:"name"`
	PodID      string `json:"podid"`
	ZoneID     string `json:"zoneid"`
	Hypervisor string `json:"hypervisor"`
	Allocation string `json:"allocationstate"`
}

func (c *Cluster) uuid() string { return c.ID }

// setHypervisor switches every cluster and host to hv (a restart with a
// different -hypervisor flag).
func (st *state) setHypervisor(hv string) {
	for _, c := range st.Clusters {
		c.Hypervisor = hv
	}
	for _, h := range st.Hosts {
		h.Hypervisor = hv
	}
	for _, p := range st.StoragePools {
		p.Hypervisor = hv
	}
	if t := st.builtinTemplate(); t != nil {
		t.Hypervisor = hv
	}
}

func (st *state) zone(id string) *Zone       { z, _ := byID(st.Zones, id); return z }
func (st *state) pod(id string) *Pod         { p, _ := byID(st.Pods, id); return p }
func (st *state) cluster(id string) *Cluster { c, _ := byID(st.Clusters, id); return c }

func init() {
	register(
		command{name: "listZones", idKind: kindZone, sync: listZones},
		command{name: "listPods", idKind: kindPod, sync: listPods},
		command{name: "listClusters", idKind: kindCluster, sync: listClusters},
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
	l := lister[*Zone]{key: "zone", id: (*Zone).uuid, name: func(z *Zone) string { return z.Name },
		keyword: func(z *Zone) []string {
			if p.Get("id") != "" || p.Get("name") != "" {
				return []string{p.Get("keyword")} // keyword is not read: let it match
			}
			return []string{z.Name}
		},
		view: c.zoneView}
	if p.Get("id") != "" {
		l.name = nil // id wins over name
	}
	rootAdmin := c.Account.Type == 1
	return l.run(c, c.st.Zones, func(z *Zone) bool {
		return optEq(p.Get("networktype"), z.NetworkType) && (rootAdmin || z.Allocation != allocationDisabled)
	})
}

// zoneView is DataCenterJoinDaoImpl.newDataCenterResponse's ZoneResponse:
// the DNS servers and the guest CIDR only in ResponseView.Full (the
// ...ByAdmin command a root admin's role maps to; account type 1 here).
func (c *Call) zoneView(z *Zone) map[string]any {
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
	l := lister[*Pod]{key: "pod", id: (*Pod).uuid, name: func(p *Pod) string { return p.Name },
		zone: func(p *Pod) string { return p.ZoneID }, view: c.podView}
	return l.run(c, c.st.Pods, func(p *Pod) bool { return optEq(c.Params.Get("allocationstate"), p.Allocation) })
}

func (c *Call) podView(p *Pod) map[string]any {
	z := c.st.zone(p.ZoneID)
	return map[string]any{"id": p.ID, "name": p.Name, "zoneid": z.ID, "zonename": z.Name,
		"gateway": p.Gateway, "netmask": p.Netmask, "startip": []string{p.StartIP}, "endip": []string{p.EndIP},
		"forsystemvms": []string{"0"}, "vlanid": []string{"vlan://untagged"}, "allocationstate": p.Allocation,
		"hasannotations": false, "ipranges": []map[string]any{{"startip": p.StartIP, "endip": p.EndIP,
			"gateway": p.Gateway, "forsystemvms": "0", "vlanid": "vlan://untagged"}}}
}

// listClusters is ManagementServerImpl.searchForClusters (not re-read):
// every cluster is CloudManaged and Managed.
func listClusters(c *Call) (any, error) {
	l := lister[*Cluster]{key: "cluster", id: (*Cluster).uuid, name: func(cl *Cluster) string { return cl.Name },
		zone: func(cl *Cluster) string { return cl.ZoneID }, view: c.clusterView}
	p := c.Params
	return l.run(c, c.st.Clusters, func(cl *Cluster) bool {
		return optEq(p.Get("podid"), cl.PodID) && optEq(p.Get("hypervisor"), cl.Hypervisor) &&
			optEq(p.Get("allocationstate"), cl.Allocation) && optEq(p.Get("clustertype"), "CloudManaged") &&
			optEq(p.Get("managedstate"), "Managed")
	})
}

func (c *Call) clusterView(cl *Cluster) map[string]any {
	z, p := c.st.zone(cl.ZoneID), c.st.pod(cl.PodID)
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
	admin := c.Account.isAdmin()
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
