// Package infrastructure is the infrastructure family of the API
// (api/command/admin/{zone,pod,cluster,host,storage,config} and the user
// listings of zones and hypervisors): zones, pods, clusters, hosts, primary
// and secondary storage, global settings.
package infrastructure

import (
	"slices"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// SetHypervisor switches every cluster and host to hv (a restart with a
// different -hypervisor flag).
func SetHypervisor(st *model.State, hv string) {
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

// infraCommands are the commands of infra.go (registerCommands).
func infraCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listZones", IDKind: model.KindZone, Sync: listZones},
		{Name: "listPods", IDKind: model.KindPod, Sync: listPods},
		{Name: "listClusters", IDKind: model.KindCluster, Sync: listClusters},
		{Name: "listHypervisors", Sync: listHypervisors},
		{Name: "listCapabilities", Sync: listCapabilities},
	}
}

// listZones is QueryManagerImpl.listDataCentersInternal: id, else name
// (EQ), else keyword (name or description LIKE; zones here have no
// description); networktype EQ. A caller that is not a root admin does not
// see Disabled zones (buildSearchCriteriaForUserDomainAndAbove,
// buildSearchCriteriaForDomainAdmins: allocationState NEQ Disabled).
// Not modelled: available, domainid and dedication, tags, showcapacities.
func listZones(c *kernel.Call) (any, error) {
	p := c.Params
	l := kernel.Lister[*model.Zone]{Key: "zone", ID: (*model.Zone).UUID, Name: func(z *model.Zone) string { return z.Name },
		Keyword: func(z *model.Zone) []string {
			if p.Get("id") != "" || p.Get("name") != "" {
				return []string{p.Get("keyword")} // keyword is not read: let it match
			}
			return []string{z.Name}
		},
		View: views.ZoneView}
	if p.Get("id") != "" {
		l.Name = nil // id wins over name
	}
	rootAdmin := c.Account.Type == 1
	return l.Run(c, c.State.Zones, func(z *model.Zone) bool {
		return kernel.OptEq(p.Get("networktype"), z.NetworkType) && (rootAdmin || z.Allocation != model.AllocationDisabled)
	})
}

// listPods is searchForPods (ManagementServerImpl; PodVlanListingServiceImpl
// on main): id, name EQ (as main; an older release used LIKE), zone and
// allocationstate EQ (the keyword part not read: LIKE on the name here).
func listPods(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.Pod]{Key: "pod", ID: (*model.Pod).UUID, Name: func(p *model.Pod) string { return p.Name },
		Zone: func(p *model.Pod) string { return p.ZoneID }, View: views.PodView}
	return l.Run(c, c.State.Pods, func(p *model.Pod) bool { return kernel.OptEq(c.Params.Get("allocationstate"), p.Allocation) })
}

// listClusters is ManagementServerImpl.searchForClusters (not re-read):
// every cluster is CloudManaged and Managed.
func listClusters(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.Cluster]{Key: "cluster", ID: (*model.Cluster).UUID, Name: func(cl *model.Cluster) string { return cl.Name },
		Zone: func(cl *model.Cluster) string { return cl.ZoneID }, View: views.ClusterView}
	p := c.Params
	return l.Run(c, c.State.Clusters, func(cl *model.Cluster) bool {
		return kernel.OptEq(p.Get("podid"), cl.PodID) && kernel.OptEq(p.Get("hypervisor"), cl.Hypervisor) &&
			kernel.OptEq(p.Get("allocationstate"), cl.Allocation) && kernel.OptEq(p.Get("clustertype"), "CloudManaged") &&
			kernel.OptEq(p.Get("managedstate"), "Managed")
	})
}

// listHypervisors answers the hypervisors of the zone's clusters
// (ManagementServerImpl.getHypervisors, not re-read).
func listHypervisors(c *kernel.Call) (any, error) {
	seen := map[string]bool{}
	var rows []map[string]any
	for _, cl := range c.State.Clusters {
		if kernel.OptEq(c.Params.Get("zoneid"), cl.ZoneID) && !seen[cl.Hypervisor] {
			seen[cl.Hypervisor] = true
			rows = append(rows, map[string]any{"name": cl.Hypervisor})
		}
	}
	return kernel.ListBody("hypervisor", len(rows), rows), nil
}

// listCapabilities is ManagementServerImpl.listCapabilities (ListCapabilitiesCmd)
// with 4.22's defaults: the allowUser* flags are the setting OR an admin
// caller; apilimitinterval/apilimitmax only while api.throttling.enabled is
// true, read from the settings on every call (so an updateConfiguration
// shows here at once, while ApiRateLimitServiceImpl enforces what it read at
// start: kernel.Throttle); extensionspath only for a root admin;
// cloudstackversion (getVersion) while exposeCloudStackVersionInApiListCapabilities
// is true, read on every call: exposeVersion. Not served: snapshotshowchainsize
// and the VPN customer gateway parameters (their defaults not read). An
// older release answers without the fields it did not have yet
// (laterCapabilities).
func listCapabilities(c *kernel.Call) (any, error) {
	admin := c.Account.IsAdmin()
	capability := map[string]any{
		"securitygroupsenabled": false, "userpublictemplateenabled": true, "supportELB": "false",
		"projectinviterequired": false, "allowusercreateprojects": true, "customdiskofferingminsize": 1, "customdiskofferingmaxsize": 1024,
		"regionsecondaryenabled": false, "kvmsnapshotenabled": true, "allowuserviewdestroyedvm": admin,
		"allowuserexpungerecovervm": admin, "allowuserexpungerecovervolume": true,
		"allowuserviewalldomainaccounts": false, "allowuserforcestopvm": true,
		"kubernetesserviceenabled": false, "kubernetesclusterexperimentalfeaturesenabled": false,
		"dynamicrolesenabled": true, "dynamicscalingenabled": true, "instanceleaseenabled": false,
		"defaultuipagesize": kernel.DefaultPageSize, "customhypervisordisplayname": "Custom", "sharedfsvmmincpucount": 2, "sharedfsvmminramsize": 512,
		"instancesstatsretentiontime": 720, "instancesstatsuseronly": false,
		"instancesdisksstatsretentionenabled": false, "instancesdisksstatsretentiontime": 720,
		"additionalconfigenabled": false,
	}
	// "add some parameters UI needs to handle API throttling":
	// Boolean.parseBoolean and Integer.valueOf of the stored values.
	if strings.EqualFold(c.State.Setting(model.SettingAPILimitEnabled), "true") {
		capability["apilimitinterval"] = c.State.SettingInt(model.SettingAPILimitInterval)
		capability["apilimitmax"] = c.State.SettingInt(model.SettingAPILimitMax)
	}
	if exposeVersion(c) {
		capability["cloudstackversion"] = views.CloudStackVersion(c)
	}
	if c.Account.Type == 1 {
		capability["extensionspath"] = "/usr/share/cloudstack-management/extensions"
	}
	for field, since := range laterCapabilities {
		if !c.Engine.Schema.Version.AtLeast(string(since)) {
			delete(capability, field)
		}
	}
	return map[string]any{"capability": capability}, nil
}

// laterCapabilities are the capability fields an older release's
// listCapabilities does not answer, each with the first release line
// (of those served) whose listApis lists it in the response
// (cloudstack-go's generate/listApis.json: v2.16.1 for 4.19, v2.17.1 for
// 4.20, v2.19.0 for 4.22).
var laterCapabilities = map[string]schema.Version{
	"allowuserforcestopvm": schema.V420, "sharedfsvmmincpucount": schema.V420, "sharedfsvmminramsize": schema.V420,
	"additionalconfigenabled": schema.V422, "dynamicscalingenabled": schema.V422, "extensionspath": schema.V422,
	"instanceleaseenabled": schema.V422,
}

// exposeVersion is ManagementServerImpl.listCapabilities' check of
// expose.cloudstack.version.api.list.capabilities (a dynamic ConfigKey,
// default true). A release before the setting (4.20 and older: it came with
// 4.21, apache/cloudstack#10575) always shows the version.
func exposeVersion(c *kernel.Call) bool {
	d := model.SettingDefByName(model.SettingExposeVersion)
	return !settingIn(c, d) || !strings.EqualFold(c.State.Setting(d.Name), "false")
}

// Commands are the family's commands, for the simulator's registration.
func Commands() []kernel.Command {
	return slices.Concat(
		zoneAdminCommands(),
		infraCommands(),
		clusterAdminCommands(),
		hostCommands(),
		storageCommands(),
		configurationCommands(),
		managementServerCommands(),
	)
}
