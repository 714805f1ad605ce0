package model

import "time"

// TrafficPublic is Networks.TrafficType.Public, the traffic type of a zone's
// public network; a guest network's TrafficType is empty (Guest).
const TrafficPublic = "Public"

// SystemPublicNetwork is NetworkOffering.SystemPublicNetwork, the unique name
// of the system offering a zone's public network is made of.
const SystemPublicNetwork = "System-Public-Network"

// systemNetworkTables are the rows CloudStack keeps for its system networks:
// the System-Public-Network offering and each zone's public network. They
// are apart from NetworkOfferings and Networks because no guest command
// finds them (createNetwork and deployVirtualMachine take guest networks and
// offerings only; listNetworks shows them to the root admin asking for
// issystem=true: NetworkServiceImpl.searchForNetworks).
type systemNetworkTables struct {
	SystemNetworkOfferings []*NetworkOffering `json:"systemnetworkofferings,omitempty"`
	SystemNetworks         []*Network         `json:"systemnetworks,omitempty"`
}

// PublicNetworkOf is the zone's public network
// (NetworkModelImpl.getSystemNetworkByZoneAndTrafficType(zone, Public));
// nil when the zone has none.
func (st *State) PublicNetworkOf(zoneID string) *Network {
	for _, n := range st.SystemNetworks {
		if n.ZoneID == zoneID && n.TrafficType == TrafficPublic {
			return n
		}
	}
	return nil
}

// SystemNetworkOffering finds a system network offering by UUID; nil when none.
func (st *State) SystemNetworkOffering(id string) *NetworkOffering {
	o, _ := ByID(st.SystemNetworkOfferings, id)
	return o
}

// EnsurePublicNetwork gives an advanced zone without security groups (the
// only zones the simulator makes) its public network, as
// ConfigurationManagerImpl.createDefaultSystemNetworks does when the zone is
// created (ZoneServiceImpl on main): NetworkOrchestrator.setupNetwork for the
// system account (id 1) in ROOT with no name or display text, designed by
// PublicNetworkGuru.design (traffic Public, broadcast domain Vlan, state
// Setup, no physical network: the plan has none). The System-Public-Network
// offering comes first, as NetworkModelImpl.configure persists it
// (NetworkOfferingVO(name, TrafficType.Public, specifyIpRanges true):
// "System Offering for " + name, system only, default, Required, conserve
// mode, Enabled). A state saved before either existed gains them here.
func (st *State) EnsurePublicNetwork(z *Zone, now time.Time) *Network {
	if n := st.PublicNetworkOf(z.ID); n != nil {
		return n
	}
	o := st.systemPublicOffering(now)
	id, internal := st.NewID(KindNetwork)
	n := &Network{ID: id, InternalID: internal, ZoneID: z.ID, OfferingID: o.ID, State: NetworkSetup,
		TrafficType: TrafficPublic, Created: now}
	st.SystemNetworks = append(st.SystemNetworks, n)
	return n
}

func (st *State) systemPublicOffering(now time.Time) *NetworkOffering {
	for _, o := range st.SystemNetworkOfferings {
		if o.Name == SystemPublicNetwork {
			return o
		}
	}
	id, internal := st.NewID(KindNetworkOffering)
	o := &NetworkOffering{ID: id, InternalID: internal, Name: SystemPublicNetwork,
		DisplayText: "System Offering for " + SystemPublicNetwork, Availability: "Required", State: "Enabled",
		ConserveMode: true, SpecifyIPRanges: true, Services: map[string][]string{}, Created: now}
	st.SystemNetworkOfferings = append(st.SystemNetworkOfferings, o)
	return o
}

// EnsurePublicNetworks gives every zone its public network
// (EnsurePublicNetwork) and every public range of a state saved before
// ranges kept theirs its network_id.
func (st *State) EnsurePublicNetworks(now time.Time) {
	for _, z := range st.Zones {
		n := st.EnsurePublicNetwork(z, now)
		for _, r := range st.VlanRanges {
			if r.ZoneID == z.ID && r.NetworkID == "" {
				r.NetworkID = n.ID
			}
		}
	}
}
