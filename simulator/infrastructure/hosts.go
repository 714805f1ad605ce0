package infrastructure

import (
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

func newHost(st *model.State, clusterID, podID, zoneID, hv, ip string, now time.Time) *model.Host {
	id, internal := st.NewID(model.KindHost)
	return &model.Host{ID: id, InternalID: internal, Name: "SimulatedAgent." + model.NewUUID(), ClusterID: clusterID,
		PodID: podID, ZoneID: zoneID, Hypervisor: hv, IPAddress: ip, State: model.HostUp, ResourceState: model.ResourceEnabled,
		CPUNumber: 4, CPUSpeed: 8000, MemoryTotal: 8 << 30, Created: now}
}

// hostCommands are the commands of hosts.go (registerCommands).
func hostCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listHosts", IDKind: model.KindHost, Sync: listHosts},
		{Name: "prepareHostForMaintenance", IDKind: model.KindHost, Async: prepareHostForMaintenance},
		{Name: "cancelHostMaintenance", IDKind: model.KindHost, Async: cancelHostMaintenance},
	}
}

// listHosts is QueryManagerImpl.searchForServerIdsAndCount: name EQ; keyword
// name, status, type or version LIKE; type, state (the status), zone, pod,
// cluster, resourcestate and hypervisor EQ; id ascending. Not modelled:
// out-of-band management, HA hosts, arch, management server, storage
// access groups.
func listHosts(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.Host]{Key: "host", ID: (*model.Host).UUID, Name: func(h *model.Host) string { return h.Name },
		Keyword: func(h *model.Host) []string { return []string{h.Name, h.State, "Routing", views.CloudStackVersion(c)} },
		Zone:    func(h *model.Host) string { return h.ZoneID }, View: views.HostView}
	p := c.Params
	return l.Run(c, c.State.Hosts, func(h *model.Host) bool {
		return kernel.OptEq(p.Get("podid"), h.PodID) && kernel.OptEq(p.Get("clusterid"), h.ClusterID) &&
			kernel.OptEq(p.Get("hypervisor"), h.Hypervisor) && kernel.OptEq(p.Get("state"), h.State) &&
			kernel.OptEq(p.Get("resourcestate"), h.ResourceState) && kernel.OptEq(p.Get("type"), "Routing")
	})
}

// prepareHostForMaintenance is PrepareForMaintenanceCmd.execute →
// ResourceManagerImpl.maintain(cmd): its refusals fail the job
// (CloudRuntimeException, 530) with the Java's texts, in its order
// (ResourceState.canAttemptMaintenance taken as Enabled or Disabled, the
// states the simulator's hosts can leave for maintenance; not re-read).
// They are decided when the job is queued, as the job starts at once in
// CloudStack; doMaintain then moves the host to PrepareForMaintenance.
// Departure: the mock agent has no VMs to migrate, so the job ends with
// the host in Maintenance; CloudStack's job answers it in
// PrepareForMaintenance and the background maintenance check moves it on.
func prepareHostForMaintenance(c *kernel.Call) (*kernel.AsyncJob, error) {
	h, _ := model.ByID(c.State.Hosts, c.Params.Get("id"))
	previous := h.ResourceState
	refused := maintenanceRefusal(c.State, h)
	if refused == nil {
		h.ResourceState = model.ResourcePrepareForMaintenance
		c.Changed()
	}
	return hostJob(c, h, "org.apache.cloudstack.api.command.admin.host.PrepareForMaintenanceCmd", model.ResourceMaintenance, previous, refused), nil
}

// maintenanceRefusal is ResourceManagerImpl.maintain(cmd)'s checks.
func maintenanceRefusal(st *model.State, h *model.Host) error {
	if h.ResourceState != model.ResourceEnabled && h.ResourceState != model.ResourceDisabled {
		return kernel.InternalError("Host is already in state %s. Cannot recall for maintenance until resolved.", h.ResourceState)
	}
	for _, o := range st.Hosts {
		if o.ClusterID == h.ClusterID && (o.ResourceState == model.ResourcePrepareForMaintenance || o.ResourceState == model.ResourceErrorInPrepareForMaintenance) {
			return kernel.InternalError("There are other servers attempting migrations for maintenance. "+
				"Found hosts in PrepareForMaintenance OR ErrorInPrepareForMaintenance STATUS in cluster %d", st.Cluster(h.ClusterID).InternalID)
		}
	}
	for _, vm := range st.VMs {
		if vm.HostID != h.ID || vm.Removed != nil {
			continue
		}
		switch vm.State {
		case model.VMMigrating:
			return kernel.InternalError("Host contains incoming VMs migrating. Please wait for them to complete before putting to maintenance.")
		case model.VMStarting, model.VMStopping:
			return kernel.InternalError("Host contains VMs in starting/stopping state. Please wait for them to complete before putting to maintenance.")
		case model.VMError, model.VMUnknown:
			return kernel.InternalError("Host contains VMs in error/unknown/shutdown state. Please fix errors to proceed.")
		}
	}
	return nil
}

// cancelHostMaintenance is CancelMaintenanceCmd.execute →
// ResourceManagerImpl.cancelMaintenance(cmd): a host not in a maintenance
// state (ResourceState.isMaintenanceState) fails the job; otherwise it
// returns to Enabled.
func cancelHostMaintenance(c *kernel.Call) (*kernel.AsyncJob, error) {
	h, _ := model.ByID(c.State.Hosts, c.Params.Get("id"))
	var refused error
	switch h.ResourceState {
	case model.ResourceMaintenance, model.ResourcePrepareForMaintenance, model.ResourceErrorInMaintenance, model.ResourceErrorInPrepareForMaintenance:
	default:
		refused = kernel.InternalError("Cannot perform cancelMaintenance when resource state is %s, hostId = %d", h.ResourceState, h.InternalID)
	}
	return hostJob(c, h, "org.apache.cloudstack.api.command.admin.host.CancelMaintenanceCmd", model.ResourceEnabled, h.ResourceState, refused), nil
}

// hostJob sets the host's resource state to target when the job succeeds and
// back to previous when it fails.
func hostJob(c *kernel.Call, h *model.Host, class, target, previous string, refused error) *kernel.AsyncJob {
	return &kernel.AsyncJob{InstanceType: "Host", InstanceID: h.ID, CmdClass: class,
		Run: func() (any, error) {
			if refused != nil {
				return nil, refused
			}
			h.ResourceState = target
			return map[string]any{"host": views.HostView(c, h)}, nil
		},
		Fail: func(*kernel.APIError) { h.ResourceState = previous },
	}
}
