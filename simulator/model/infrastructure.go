package model

import (
	"time"
)

// The infrastructure tables' rows as CloudStack's VOs hold them (DataCenterVO,
// HostPodVO, ClusterVO, HostVO, StoragePoolVO, ImageStoreVO); the lookups by
// UUID are GenericDaoBase.findByUuidIncludingRemoved.

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

// UUID is the row's UUID, the key ByID finds it by.
func (z *Zone) UUID() string { return z.ID }

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

// UUID is the row's UUID, the key ByID finds it by.
func (p *Pod) UUID() string { return p.ID }

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

// UUID is the row's UUID, the key ByID finds it by.
func (c *Cluster) UUID() string { return c.ID }

// Zone finds a zone by UUID; nil when none.
func (st *State) Zone(id string) *Zone { z, _ := ByID(st.Zones, id); return z }

// Pod finds a pod by UUID; nil when none.
func (st *State) Pod(id string) *Pod { p, _ := ByID(st.Pods, id); return p }

// Cluster finds a cluster by UUID; nil when none.
func (st *State) Cluster(id string) *Cluster { c, _ := ByID(st.Clusters, id); return c }

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

// UUID is the row's UUID, the key ByID finds it by.
func (h *Host) UUID() string { return h.ID }

// StoragePool is a primary storage pool, cluster- or zone-wide.
type StoragePool struct {
	ID         string    `json:"id"`
	InternalID int64     `json:"internalid"`
	Name       string    `json:"name"`
	ZoneID     string    `json:"zoneid"`
	PodID      string    `json:"podid,omitempty"`
	ClusterID  string    `json:"clusterid,omitempty"`
	Scope      string    `json:"scope"` // CLUSTER, ZONE
	Hypervisor string    `json:"hypervisor"`
	URL        string    `json:"url"`
	Tags       string    `json:"tags,omitempty"`
	Created    time.Time `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (p *StoragePool) UUID() string { return p.ID }

// ImageStore is a zone's secondary storage.
type ImageStore struct {
	ID         string    `json:"id"`
	InternalID int64     `json:"internalid"`
	Name       string    `json:"name"`
	ZoneID     string    `json:"zoneid"`
	URL        string    `json:"url"`
	Provider   string    `json:"provider"`
	Created    time.Time `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (s *ImageStore) UUID() string { return s.ID }

// Allocation sums what the VMs placed on a host use.
func Allocation(st *State, hostID string) (cpuMHz, memBytes int64) {
	for _, vm := range st.VMs {
		if vm.HostID == hostID && vm.UsesHost() {
			cpuMHz += int64(vm.CPUNumber) * int64(vm.CPUSpeed)
			memBytes += int64(vm.Memory) << 20
		}
	}
	return cpuMHz, memBytes
}
