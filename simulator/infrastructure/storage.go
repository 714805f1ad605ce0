package infrastructure

import (
	"net/url"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// Primary storage pools and secondary (image) stores: StorageManagerImpl.

// storageCommands are the commands of storage.go (registerCommands).
func storageCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createStoragePool", Sync: createStoragePool},
		{Name: "listStoragePools", IDKind: model.KindStoragePool, Sync: listStoragePools},
		{Name: "addImageStore", Sync: addImageStore},
		{Name: "listImageStores", IDKind: model.KindImageStore, Sync: listImageStores},
	}
}

// PoolSpec is createStoragePool's input.
type PoolSpec struct {
	ZoneID, PodID, ClusterID, Name, URL, Scope, Hypervisor, Tags string
}

func createStoragePool(c *kernel.Call) (any, error) {
	p := c.Params
	pool, err := MakeStoragePool(c.State, PoolSpec{ZoneID: p.Get("zoneid"), PodID: p.Get("podid"),
		ClusterID: p.Get("clusterid"), Name: p.Get("name"), URL: p.Get("url"), Scope: p.Get("scope"),
		Hypervisor: p.Get("hypervisor"), Tags: p.Get("tags")}, c.Engine.Now())
	if err != nil {
		return nil, err
	}
	c.Changed()
	return map[string]any{"storagepool": views.PoolView(c, pool)}, nil
}

// MakeStoragePool follows StorageManagerImpl.createPool: the scope is
// CLUSTER unless told otherwise and then needs a cluster; a ZONE pool needs
// a hypervisor that supports zone-wide pools (KVM, VMware, Hyperv, LXC, Any,
// Simulator); a cluster pool's hypervisor is its cluster's. The simulator's
// mock storage accepts any URL with a scheme and the pool is Up at once.
// Departure: the text for a URL without a scheme is the simulator's own (the
// data store lifecycle's), and the pool is not mounted on the hosts.
func MakeStoragePool(st *model.State, s PoolSpec, now time.Time) (*model.StoragePool, error) {
	scope := strings.ToUpper(model.Or(s.Scope, "CLUSTER"))
	if scope != "CLUSTER" && scope != "ZONE" && scope != "HOST" && scope != "REGION" && scope != "GLOBAL" {
		return nil, kernel.ParamError("invalid scope for pool %s", s.Scope)
	}
	if scope != "CLUSTER" && scope != "ZONE" {
		return nil, kernel.NotImplemented("Only cluster and zone storage pools are implemented by the CloudStack simulator")
	}
	if scope == "CLUSTER" && s.ClusterID == "" {
		return nil, kernel.ParamError("cluster id can't be null, if scope is cluster")
	}
	pool := &model.StoragePool{Name: s.Name, Scope: scope, URL: s.URL, Tags: s.Tags, Created: now}
	if scope == "ZONE" {
		if s.Hypervisor == "" {
			return nil, kernel.ParamError("Missing parameter hypervisor. Hypervisor type is required to create zone wide primary storage.")
		}
		hv, err := CanonicalHypervisor(s.Hypervisor)
		if err != nil || hv == "XenServer" {
			return nil, kernel.ParamError("Zone wide storage pool is not supported for hypervisor type %s", s.Hypervisor)
		}
		pool.Hypervisor = hv
	} else {
		cl := st.Cluster(s.ClusterID)
		pool.PodID, pool.ClusterID, pool.Hypervisor = cl.PodID, cl.ID, cl.Hypervisor
	}
	z := st.Zone(s.ZoneID)
	if z == nil {
		return nil, kernel.ParamError("unable to find zone by id %s", s.ZoneID)
	}
	if u, err := url.Parse(s.URL); err != nil || u.Scheme == "" {
		return nil, kernel.InternalError("Failed to add data store: %s is not a valid uri", s.URL)
	}
	pool.ZoneID = z.ID
	pool.ID, pool.InternalID = st.NewID(model.KindStoragePool)
	st.StoragePools = append(st.StoragePools, pool)
	return pool, nil
}

// HasPrimaryStorage is what the storage pool allocators need for a host's
// cluster to take a VM: a pool of the cluster, or a zone-wide pool of its
// hypervisor (ClusterScopeStoragePoolAllocator, ZoneWideStoragePoolAllocator).
func HasPrimaryStorage(st *model.State, h *model.Host) bool {
	for _, p := range st.StoragePools {
		if p.ClusterID == h.ClusterID || p.Scope == "ZONE" && p.ZoneID == h.ZoneID && p.Hypervisor == h.Hypervisor {
			return true
		}
	}
	return false
}

func listStoragePools(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.StoragePool]{Key: "storagepool", ID: (*model.StoragePool).UUID, Name: func(p *model.StoragePool) string { return p.Name },
		Zone: func(p *model.StoragePool) string { return p.ZoneID }, View: views.PoolView}
	p := c.Params
	return l.Run(c, c.State.StoragePools, func(s *model.StoragePool) bool {
		return kernel.OptEq(p.Get("podid"), s.PodID) && kernel.OptEq(p.Get("clusterid"), s.ClusterID) &&
			kernel.OptEq(p.Get("scope"), s.Scope) && kernel.OptEq(p.Get("status"), model.PoolUp)
	})
}

// StoreSpec is addImageStore's input.
type StoreSpec struct {
	ZoneID, Name, URL, Provider string
}

func addImageStore(c *kernel.Call) (any, error) {
	p := c.Params
	s, err := MakeImageStore(c.State, StoreSpec{ZoneID: p.Get("zoneid"), Name: p.Get("name"), URL: p.Get("url"),
		Provider: p.Get("provider")}, c.Engine.Now())
	if err != nil {
		return nil, err
	}
	c.Changed()
	return map[string]any{"imagestore": views.ImageStoreView(c, s)}, nil
}

// MakeImageStore follows discoverImageStore (StorageManagerImpl, the image
// store service in 4.22): the name defaults to the URL and is unique; NFS
// stores are zone-wide, so a zone is required; then the secondary storage
// VM syncs the builtin template to the store (handleTemplateSync,
// associateCrosszoneTemplatesToZone), which the simulator's mock SSVM
// finishes at once. Departure: only the NFS provider is modelled.
func MakeImageStore(st *model.State, s StoreSpec, now time.Time) (*model.ImageStore, error) {
	if !strings.EqualFold(s.Provider, "NFS") {
		return nil, kernel.NotImplemented("Only NFS image stores are implemented by the CloudStack simulator")
	}
	name := model.Or(s.Name, s.URL)
	for _, other := range st.ImageStores {
		if strings.EqualFold(other.Name, name) {
			return nil, kernel.ParamError("The image store with name %s already exists, try creating with another name", name)
		}
	}
	if s.ZoneID == "" {
		return nil, kernel.ParamError("Image store provider NFS does not support scope REGION")
	}
	z := st.Zone(s.ZoneID)
	if z == nil {
		return nil, kernel.ParamError("Can't find zone by id %s", s.ZoneID)
	}
	if u, err := url.Parse(s.URL); err != nil || u.Scheme == "" {
		return nil, kernel.InternalError("Failed to add data store: %s is not a valid uri", s.URL)
	}
	id, internal := st.NewID(model.KindImageStore)
	store := &model.ImageStore{ID: id, InternalID: internal, Name: name, ZoneID: z.ID, URL: s.URL, Provider: "NFS", Created: now}
	st.ImageStores = append(st.ImageStores, store)
	if t := st.BuiltinTemplate(); t != nil {
		st.AddBuiltinCopy(t, z.ID, now)
	}
	return store, nil
}

func listImageStores(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.ImageStore]{Key: "imagestore", ID: (*model.ImageStore).UUID, Name: func(s *model.ImageStore) string { return s.Name },
		Zone: func(s *model.ImageStore) string { return s.ZoneID }, View: views.ImageStoreView}
	p := c.Params
	return l.Run(c, c.State.ImageStores, func(s *model.ImageStore) bool {
		return kernel.OptEq(p.Get("provider"), s.Provider) && kernel.OptEq(p.Get("protocol"), "nfs") &&
			(!p.Has("readonly") || !p.Bool("readonly", false))
	})
}
