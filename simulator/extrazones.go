package simulator

import (
	"fmt"
	"strings"
	"time"
)

// seedExtraZones adds Options.ExtraZones: more advanced zones next to
// Sandbox-simulator, each with a pod, one cluster of one host running the
// zone's hypervisor, and the builtin template. Zones already in the state
// (by name) are kept as they are.
func seedExtraZones(st *state, names []string, hypervisor string, now time.Time) {
	for _, name := range names {
		if strings.TrimSpace(name) == "" || zoneNamed(st, name) != nil {
			continue
		}
		n := len(st.Zones) // 1 for the first extra zone
		first := st.Zones[0]
		zid, zint := st.newID(kindZone)
		st.Zones = append(st.Zones, &Zone{ID: zid, InternalID: zint, Name: name, NetworkType: "Advanced",
			Allocation: "Enabled", DNS1: first.DNS1, InternalDNS: first.InternalDNS, GuestCIDR: first.GuestCIDR,
			Token: newUUID(), Created: now})
		subnet := fmt.Sprintf("172.16.%d.", 15+n)
		pid, pint := st.newID(kindPod)
		st.Pods = append(st.Pods, &Pod{ID: pid, InternalID: pint, Name: "POD0", ZoneID: zid,
			Gateway: subnet + "1", Netmask: "255.255.255.0", StartIP: subnet + "2", EndIP: subnet + "200",
			Allocation: "Enabled"})
		cid, cint := st.newID(kindCluster)
		st.Clusters = append(st.Clusters, &Cluster{ID: cid, InternalID: cint, Name: "C0", PodID: pid, ZoneID: zid,
			Hypervisor: hypervisor, Allocation: "Enabled"})
		st.Hosts = append(st.Hosts, newHost(st, cid, pid, zid, hypervisor, subnet+"3", now))
		if t := st.builtinTemplate(); t != nil {
			st.addBuiltinCopy(t, zid, now)
		}
	}
}

func zoneNamed(st *state, name string) *Zone {
	for _, z := range st.Zones {
		if strings.EqualFold(z.Name, name) {
			return z
		}
	}
	return nil
}

// firstZoneHypervisor is the hypervisor of the first zone's clusters.
func (st *state) firstZoneHypervisor() string {
	if len(st.Clusters) > 0 {
		return st.Clusters[0].Hypervisor
	}
	return defaultHypervisor
}
