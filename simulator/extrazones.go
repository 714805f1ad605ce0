package simulator

import (
	"fmt"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/infrastructure"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// seedExtraZones adds Options.ExtraZones: more advanced zones next to
// Sandbox-simulator, each deployed like it (zonedeploy.go) with a pod, one
// cluster of one host running the zone's hypervisor, a primary and a
// secondary storage (which gives it the builtin template) and a public
// range, but no guest network. Zones already in the state (by name) are
// kept as they are. A simulator feature with no Java of its own: each zone
// is made by the functions that follow ConfigurationManagerImpl.createZone,
// createPod, ResourceManagerImpl.discoverCluster/discoverHosts and
// StorageManagerImpl (zonedeploy.go), as marvin's deployDataCenter calls
// them.
func seedExtraZones(st *model.State, names []string, hypervisor string, now time.Time) {
	for _, name := range names {
		if strings.TrimSpace(name) == "" || infrastructure.ZoneNamed(st, name) != nil {
			continue
		}
		n := len(st.Zones) // 1 for the first extra zone
		l := advancedCfg(hypervisor)
		if len(st.Zones) > 0 {
			l.DNS, l.GuestCIDR = st.Zones[0].DNS1, st.Zones[0].GuestCIDR
		}
		pod, public := fmt.Sprintf("172.16.%d.", 15+n), fmt.Sprintf("192.168.%d.", 2+n)
		l.Name, l.PhysicalNetwork = name, name+"-pnet"
		l.PodGateway, l.PodStart, l.PodEnd = pod+"1", pod+"2", pod+"200"
		l.PublicGateway, l.PublicStart, l.PublicEnd = public+"1", public+"2", public+"200"
		// Image store names (their URLs by default) are unique.
		l.SecondaryURL = fmt.Sprintf("nfs://%s:/export/home/sandbox/secondary-%d", l.DNS, n)
		l.Clusters = []clusterLayout{{Name: "C0", Hosts: []string{"http://sim/c0/h0"}, Pools: []string{"PS0"}}}
		deployZone(st, l, now)
	}
}
