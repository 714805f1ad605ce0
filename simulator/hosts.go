package simulator

import (
	"fmt"
	"time"
)

// Host is a hypervisor host. The capacity is the CloudStack simulator's mock
// agent default: 4 cores at 8000 MHz and 8 GiB.
type Host struct {
	ID            string    `json:"id"`
	InternalID    int64     `json:"internalid"`
	Name          string    `json:"name"`
	ClusterID     string    `json:"clusterid"`
	PodID         string    `json:"podid"`
	ZoneID        string    `json:"zoneid"`
	Hypervisor    string    `json:"hypervisor"`
	IPAddress     string    `json:"ipaddress"`
	State         string    `json:"state"`         // Up, Down, ...
	ResourceState string    `json:"resourcestate"` // Enabled, PrepareForMaintenance, Maintenance, ...
	CPUNumber     int       `json:"cpunumber"`
	CPUSpeed      int64     `json:"cpuspeed"`
	MemoryTotal   int64     `json:"memorytotal"`
	Created       time.Time `json:"created"`
}

func (h *Host) uuid() string { return h.ID }

func newHost(st *state, clusterID, podID, zoneID, hv, ip string, now time.Time) *Host {
	id, internal := st.newID(kindHost)
	return &Host{ID: id, InternalID: internal, Name: "SimulatedAgent." + newUUID(), ClusterID: clusterID,
		PodID: podID, ZoneID: zoneID, Hypervisor: hv, IPAddress: ip, State: hostUp, ResourceState: resourceEnabled,
		CPUNumber: 4, CPUSpeed: 8000, MemoryTotal: 8 << 30, Created: now}
}

// hypervisorVersion is what each hypervisor's hosts report.
func hypervisorVersion(hv string) string {
	switch hv {
	case "XenServer":
		return "8.2.0"
	case "VMware":
		return "8.0"
	case "KVM":
		return ""
	}
	return cloudStackVersion
}

func init() {
	register(
		command{name: "listHosts", idKind: kindHost, sync: listHosts},
		command{name: "prepareHostForMaintenance", idKind: kindHost, async: prepareHostForMaintenance},
		command{name: "cancelHostMaintenance", idKind: kindHost, async: cancelHostMaintenance},
	)
}

// listHosts is QueryManagerImpl.searchForServerIdsAndCount: name EQ; keyword
// name, status, type or version LIKE; type, state (the status), zone, pod,
// cluster, resourcestate and hypervisor EQ; id ascending. Not modelled:
// out-of-band management, HA hosts, arch, management server, storage
// access groups.
func listHosts(c *Call) (any, error) {
	l := lister[*Host]{key: "host", id: (*Host).uuid, name: func(h *Host) string { return h.Name },
		keyword: func(h *Host) []string { return []string{h.Name, h.State, "Routing", cloudStackVersion} },
		zone:    func(h *Host) string { return h.ZoneID }, view: c.hostView}
	p := c.Params
	return l.run(c, c.st.Hosts, func(h *Host) bool {
		return optEq(p.Get("podid"), h.PodID) && optEq(p.Get("clusterid"), h.ClusterID) &&
			optEq(p.Get("hypervisor"), h.Hypervisor) && optEq(p.Get("state"), h.State) &&
			optEq(p.Get("resourcestate"), h.ResourceState) && optEq(p.Get("type"), "Routing")
	})
}

// allocation sums what the VMs placed on a host use.
func (st *state) allocation(hostID string) (cpuMHz, memBytes int64) {
	for _, vm := range st.VMs {
		if vm.HostID == hostID && vm.usesHost() {
			cpuMHz += int64(vm.CPUNumber) * int64(vm.CPUSpeed)
			memBytes += int64(vm.Memory) << 20
		}
	}
	return cpuMHz, memBytes
}

// hostView is the HostResponse of HostJoinDaoImpl.newHostResponse (not
// re-read): capacity from the VMs placed on the host, overcommit 1.0.
func (c *Call) hostView(h *Host) map[string]any {
	z, p, cl := c.st.zone(h.ZoneID), c.st.pod(h.PodID), c.st.cluster(h.ClusterID)
	cpu, mem := c.st.allocation(h.ID)
	totalCPU := int64(h.CPUNumber) * h.CPUSpeed
	return map[string]any{"id": h.ID, "name": h.Name, "type": "Routing", "state": h.State,
		"resourcestate": h.ResourceState, "ipaddress": h.IPAddress, "hypervisor": h.Hypervisor,
		"hypervisorversion": hypervisorVersion(h.Hypervisor), "version": cloudStackVersion,
		"zoneid": z.ID, "zonename": z.Name, "podid": p.ID, "podname": p.Name, "clusterid": cl.ID,
		"clustername": cl.Name, "clustertype": "CloudManaged", "cpunumber": h.CPUNumber, "cpusockets": 1,
		"cpuspeed": h.CPUSpeed, "cpuwithoverprovisioning": fmt.Sprint(totalCPU),
		"cpuallocatedvalue": cpu, "cpuallocated": percent(cpu, totalCPU),
		"cpuallocatedpercentage": percent(cpu, totalCPU), "cpuallocatedwithoverprovisioning": percent(cpu, totalCPU),
		"memorytotal": h.MemoryTotal, "memorywithoverprovisioning": fmt.Sprint(h.MemoryTotal),
		"memoryallocated": mem, "memoryallocatedbytes": mem, "memoryallocatedpercentage": percent(mem, h.MemoryTotal),
		"capabilities": "hvm", "created": csTime(h.Created), "lastpinged": csTime(time.Unix(1600000, 0)),
		"managementserverid": c.st.ManagementServerID, "islocalstorageactive": false, "hahost": false,
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
func prepareHostForMaintenance(c *Call) (*asyncJob, error) {
	h, _ := byID(c.st.Hosts, c.Params.Get("id"))
	previous := h.ResourceState
	refused := c.st.maintenanceRefusal(h)
	if refused == nil {
		h.ResourceState = resourcePrepareForMaintenance
		c.changed()
	}
	return c.hostJob(h, "org.apache.cloudstack.api.command.admin.host.PrepareForMaintenanceCmd", resourceMaintenance, previous, refused), nil
}

// maintenanceRefusal is ResourceManagerImpl.maintain(cmd)'s checks.
func (st *state) maintenanceRefusal(h *Host) error {
	if h.ResourceState != resourceEnabled && h.ResourceState != resourceDisabled {
		return internalError("Host is already in state %s. Cannot recall for maintenance until resolved.", h.ResourceState)
	}
	for _, o := range st.Hosts {
		if o.ClusterID == h.ClusterID && (o.ResourceState == resourcePrepareForMaintenance || o.ResourceState == resourceErrorInPrepareForMaintenance) {
			return internalError("There are other servers attempting migrations for maintenance. "+
				"Found hosts in PrepareForMaintenance OR ErrorInPrepareForMaintenance STATUS in cluster %d", st.cluster(h.ClusterID).InternalID)
		}
	}
	for _, vm := range st.VMs {
		if vm.HostID != h.ID || vm.Removed != nil {
			continue
		}
		switch vm.State {
		case vmMigrating:
			return internalError("Host contains incoming VMs migrating. Please wait for them to complete before putting to maintenance.")
		case vmStarting, vmStopping:
			return internalError("Host contains VMs in starting/stopping state. Please wait for them to complete before putting to maintenance.")
		case vmError, vmUnknown:
			return internalError("Host contains VMs in error/unknown/shutdown state. Please fix errors to proceed.")
		}
	}
	return nil
}

// cancelHostMaintenance is CancelMaintenanceCmd.execute →
// ResourceManagerImpl.cancelMaintenance(cmd): a host not in a maintenance
// state (ResourceState.isMaintenanceState) fails the job; otherwise it
// returns to Enabled.
func cancelHostMaintenance(c *Call) (*asyncJob, error) {
	h, _ := byID(c.st.Hosts, c.Params.Get("id"))
	var refused error
	switch h.ResourceState {
	case resourceMaintenance, resourcePrepareForMaintenance, resourceErrorInMaintenance, resourceErrorInPrepareForMaintenance:
	default:
		refused = internalError("Cannot perform cancelMaintenance when resource state is %s, hostId = %d", h.ResourceState, h.InternalID)
	}
	return c.hostJob(h, "org.apache.cloudstack.api.command.admin.host.CancelMaintenanceCmd", resourceEnabled, h.ResourceState, refused), nil
}

// hostJob sets the host's resource state to target when the job succeeds and
// back to previous when it fails.
func (c *Call) hostJob(h *Host, class, target, previous string, refused error) *asyncJob {
	return &asyncJob{instanceType: "Host", instanceID: h.ID, cmdClass: class,
		run: func() (any, error) {
			if refused != nil {
				return nil, refused
			}
			h.ResourceState = target
			return map[string]any{"host": c.hostView(h)}, nil
		},
		fail: func(*APIError) { h.ResourceState = previous },
	}
}
