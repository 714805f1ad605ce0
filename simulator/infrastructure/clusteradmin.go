package infrastructure

import (
	"fmt"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/netutils"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// clusterAdminCommands are the commands of clusteradmin.go (registerCommands).
// addCluster and addHost: ResourceManagerImpl.discoverCluster and
// discoverHosts, as the simulator's hosts need them.
func clusterAdminCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "addCluster", Sync: addCluster},
		{Name: "addHost", Sync: addHost},
	}
}

// ClusterSpec is addCluster's input.
type ClusterSpec struct {
	ZoneID, PodID, Name, Hypervisor, ClusterType, Allocation string
}

func addCluster(c *kernel.Call) (any, error) {
	p := c.Params
	cl, err := MakeCluster(c.State, ClusterSpec{ZoneID: p.Get("zoneid"), PodID: p.Get("podid"), Name: p.Get("clustername"),
		Hypervisor: p.Get("hypervisor"), ClusterType: p.Get("clustertype"), Allocation: p.Get("allocationstate")})
	if err != nil {
		return nil, err
	}
	c.Changed()
	// AddClusterCmd answers a ListResponse of the one cluster.
	return kernel.ListBody("cluster", 1, []map[string]any{views.ClusterView(c, cl)}), nil
}

// MakeCluster follows ResourceManagerImpl.discoverCluster for a CloudManaged
// cluster: no hosts are discovered, they are added with addHost. Departure:
// ExternalManaged (vCenter) clusters are refused as not implemented; the
// duplicate-name failure is the database's unique key on the pod's cluster
// names, which CloudStack reports as this CloudRuntimeException.
func MakeCluster(st *model.State, s ClusterSpec) (*model.Cluster, error) {
	z, pod, err := zoneAndPod(st, s.ZoneID, s.PodID)
	if err != nil {
		return nil, err
	}
	if s.Name == "" {
		return nil, kernel.ParamError("Please specify cluster name")
	}
	if s.Hypervisor == "" {
		return nil, kernel.ParamError("Please specify a hypervisor")
	}
	hv, hvErr := CanonicalHypervisor(s.Hypervisor)
	if hvErr != nil {
		return nil, kernel.ParamError("Unable to resolve %s to a supported ", s.Hypervisor)
	}
	if s.ClusterType != "" && s.ClusterType != "CloudManaged" {
		return nil, kernel.NotImplemented("Only CloudManaged clusters are implemented by the CloudStack simulator")
	}
	if s.Allocation == "" {
		s.Allocation = model.AllocationEnabled
	}
	if err := checkAllocationState(s.Allocation); err != nil {
		return nil, err
	}
	for _, other := range st.Clusters {
		if other.PodID == pod.ID && strings.EqualFold(other.Name, s.Name) {
			return nil, kernel.InternalError("Unable to create cluster %s in pod and data center with specified ids", s.Name)
		}
	}
	id, internal := st.NewID(model.KindCluster)
	cl := &model.Cluster{ID: id, InternalID: internal, Name: s.Name, PodID: pod.ID, ZoneID: z.ID, Hypervisor: hv,
		Allocation: s.Allocation}
	st.Clusters = append(st.Clusters, cl)
	return cl, nil
}

// zoneAndPod is discoverCluster's and discoverHosts' check of the zone and
// pod they are given.
func zoneAndPod(st *model.State, zoneID, podID string) (*model.Zone, *model.Pod, *kernel.APIError) {
	z := st.Zone(zoneID)
	if z == nil {
		return nil, nil, kernel.ParamError("Can't find zone by the id specified")
	}
	pod := st.Pod(podID)
	if pod == nil {
		return nil, nil, kernel.ParamError("Can't find pod by id %s", podID)
	}
	if pod.ZoneID != z.ID {
		return nil, nil, kernel.ParamError("Pod with specified id doesn't belong to the zone %s", z.Name)
	}
	return z, pod, nil
}

// HostSpec is addHost's input.
type HostSpec struct {
	ZoneID, PodID, ClusterID, ClusterName, Hypervisor, URL, Username, Password, Allocation string
}

func addHost(c *kernel.Call) (any, error) {
	p := c.Params
	h, err := MakeHost(c.State, HostSpec{ZoneID: p.Get("zoneid"), PodID: p.Get("podid"), ClusterID: p.Get("clusterid"),
		ClusterName: p.Get("clustername"), Hypervisor: p.Get("hypervisor"), URL: p.Get("url"),
		Username: p.Get("username"), Password: p.Get("password"), Allocation: p.Get("allocationstate")}, c.Engine.Now())
	if err != nil {
		return nil, err
	}
	c.Changed()
	// AddHostCmd answers a ListResponse of the discovered hosts.
	return kernel.ListBody("host", 1, []map[string]any{views.HostView(c, h)}), nil
}

// MakeHost follows ResourceManagerImpl.discoverHosts and discoverHostsFull
// for one simulated agent: without a cluster the host gets a "Standalone-"
// cluster of its URL; a cluster named is found or created in the pod;
// credentials are required (KVM: a username). The discoverer of a host's
// hypervisor finds nothing in a cluster of another hypervisor (as
// XenServerDiscoverer.find and its siblings do), which AddHostCmd reports as
// the DiscoveryException's text. The agent connects at once (the
// simulator's mock agent): the host is Up with the mock agent's capacity,
// its IP the URL's host when that is an address, otherwise the next free
// address of the pod's range.
func MakeHost(st *model.State, s HostSpec, now time.Time) (*model.Host, error) {
	z := st.Zone(s.ZoneID)
	if z == nil {
		return nil, kernel.ParamError("Can't find zone by id %s", s.ZoneID)
	}
	pod := st.Pod(s.PodID)
	if pod == nil {
		return nil, kernel.ParamError("Can't find pod by id %s", s.PodID)
	}
	if pod.ZoneID != z.ID {
		return nil, kernel.ParamError("Pod with specified podId%d doesn't belong to the zone with specified zoneId%d", pod.InternalID, z.InternalID)
	}
	if s.ClusterName == "" && s.ClusterID == "" {
		s.ClusterName = "Standalone-" + s.URL
	}
	switch {
	case s.ClusterName != "" && s.ClusterID != "":
		return nil, kernel.ParamError("Can't specify cluster by both id and name")
	case s.Hypervisor == "":
		return nil, kernel.ParamError("Need to specify Hypervisor Type")
	case strings.EqualFold(s.Hypervisor, "KVM") && s.Username == "":
		return nil, kernel.ParamError("Username need to be provided.")
	case !strings.EqualFold(s.Hypervisor, "KVM") && !strings.EqualFold(s.Hypervisor, "VMware") && (s.Username == "" || s.Password == ""):
		return nil, kernel.ParamError("Username and Password need to be provided.")
	case !strings.Contains(s.URL, "://"):
		return nil, kernel.ParamError("uri.scheme is null %s, add nfs:// (or cifs://) as a prefix", s.URL)
	}
	hv, hvErr := CanonicalHypervisor(s.Hypervisor)
	if hvErr != nil {
		return nil, discoveryError("Do not support HypervisorType %s for %s", s.Hypervisor, s.URL)
	}
	cl := st.Cluster(s.ClusterID)
	if s.ClusterName != "" {
		cl = clusterNamed(st, pod.ID, s.ClusterName)
		if cl == nil {
			id, internal := st.NewID(model.KindCluster)
			cl = &model.Cluster{ID: id, InternalID: internal, Name: s.ClusterName, PodID: pod.ID, ZoneID: z.ID, Hypervisor: hv,
				Allocation: model.AllocationEnabled}
			st.Clusters = append(st.Clusters, cl)
		}
	}
	if cl == nil {
		return nil, kernel.ParamError("Can't find cluster by id %s", s.ClusterID)
	}
	if cl.PodID != pod.ID || cl.Hypervisor != hv {
		return nil, discoveryError("Unable to add the host: Cannot find the server resources at %s", s.URL)
	}
	h := newHost(st, cl.ID, pod.ID, z.ID, cl.Hypervisor, hostAddress(st, pod, s.URL), now)
	if s.Allocation == model.AllocationDisabled {
		h.ResourceState = model.ResourceDisabled
	}
	st.Hosts = append(st.Hosts, h)
	return h, nil
}

// discoveryError is a DiscoveryException as AddHostCmd reports it: a
// ServerApiException(INTERNAL_ERROR) with its message.
func discoveryError(format string, args ...any) *kernel.APIError {
	return &kernel.APIError{Code: kernel.CodeInternalError, CSCode: kernel.CsServerAPIException, Text: fmt.Sprintf(format, args...)}
}

func clusterNamed(st *model.State, podID, name string) *model.Cluster {
	for _, cl := range st.Clusters {
		if cl.PodID == podID && cl.Name == name {
			return cl
		}
	}
	return nil
}

// hostAddress is the URL's host if it is an IPv4 address, otherwise the
// lowest address of the pod's range after the first (the first goes to
// system VMs in marvin's layout) no host has.
func hostAddress(st *model.State, pod *model.Pod, url string) string {
	host := url
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	host, _, _ = strings.Cut(host, "/")
	if netutils.ValidIPv4(host) {
		return host
	}
	used := map[string]bool{pod.StartIP: true}
	for _, h := range st.Hosts {
		used[h.IPAddress] = true
	}
	start, end := netutils.ParseAddr(pod.StartIP), netutils.ParseAddr(pod.EndIP)
	for a := start; a.IsValid() && !end.Less(a); a = a.Next() {
		if !used[a.String()] {
			return a.String()
		}
	}
	return pod.StartIP
}

// CanonicalHypervisor spells a hypervisor the way HypervisorType.getType
// answers it, for the hypervisors the simulator's hosts can run.
func CanonicalHypervisor(h string) (string, error) {
	for _, known := range []string{"XenServer", "KVM", "VMware", "Simulator"} {
		if strings.EqualFold(h, known) {
			return known, nil
		}
	}
	return "", fmt.Errorf("unsupported hypervisor %q (XenServer, KVM, VMware or Simulator)", h)
}
