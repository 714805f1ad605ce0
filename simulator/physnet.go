package simulator

import (
	"slices"
	"strconv"
	"strings"
)

// Physical networks, their traffic types, network service providers and the
// virtual router element: NetworkServiceImpl (and its provider helpers), as
// marvin's deployDataCenter drives them.

// TrafficType is a traffic type carried by a physical network
// (PhysicalNetworkTrafficTypeVO).
type TrafficType struct {
	ID                string `json:"id"`
	InternalID        int64  `json:"internalid"`
	PhysicalNetworkID string `json:"physicalnetworkid"`
	Type              string `json:"traffictype"` // Guest, Management, Public, Storage
}

func (t *TrafficType) uuid() string { return t.ID }

// NetworkServiceProvider is a provider on a physical network
// (PhysicalNetworkServiceProviderVO).
type NetworkServiceProvider struct {
	ID                string `json:"id"`
	InternalID        int64  `json:"internalid"`
	PhysicalNetworkID string `json:"physicalnetworkid"`
	Name              string `json:"name"`
	State             string `json:"state"` // Enabled, Disabled
}

func (n *NetworkServiceProvider) uuid() string { return n.ID }

// VirtualRouterElement is a VirtualRouter, VpcVirtualRouter or InternalLbVm
// provider's element (VirtualRouterProviderVO, one table for the three
// types), which must be enabled before its provider can be.
type VirtualRouterElement struct {
	ID         string `json:"id"`
	InternalID int64  `json:"internalid"`
	NSPID      string `json:"nspid"`
	Type       string `json:"type"` // VirtualRouter, VPCVirtualRouter, InternalLbVm
	Enabled    bool   `json:"enabled"`
}

func (e *VirtualRouterElement) uuid() string { return e.ID }

const (
	kindTrafficType = "traffictype"
	kindProvider    = "networkserviceprovider"
	kindVRElement   = "virtualrouterelement"
)

// PhysicalNetwork is a zone's physical network carrying the guest VLANs.
type PhysicalNetwork struct {
	ID                   string `json:"id"`
	InternalID           int64  `json:"internalid"`
	Name                 string `json:"name"`
	ZoneID               string `json:"zoneid"`
	VLAN                 string `json:"vlan"`            // guest VLAN ranges, e.g. "100-200"
	State                string `json:"state,omitempty"` // Enabled, Disabled
	IsolationMethods     string `json:"isolationmethods,omitempty"`
	BroadcastDomainRange string `json:"broadcastdomainrange,omitempty"`
	Tags                 string `json:"tags,omitempty"`
}

func (p *PhysicalNetwork) uuid() string { return p.ID }

func init() {
	paramKinds["nspid"] = kindProvider
	register(
		command{name: "createPhysicalNetwork", async: createPhysicalNetwork},
		command{name: "updatePhysicalNetwork", idKind: kindPhysicalNetwork, async: updatePhysicalNetwork},
		command{name: "addTrafficType", async: addTrafficType},
		command{name: "listTrafficTypes", idKind: kindTrafficType, sync: listTrafficTypes},
		command{name: "listPhysicalNetworks", idKind: kindPhysicalNetwork, sync: listPhysicalNetworks},
	)
}

// physnetSpec is createPhysicalNetwork's input.
type physnetSpec struct {
	ZoneID, Name, VLAN, BroadcastDomainRange string
	IsolationMethods, Tags                   []string
}

func createPhysicalNetwork(c *Call) (*asyncJob, error) {
	p := c.Params
	pn, err := c.st.createPhysicalNetwork(physnetSpec{ZoneID: p.Get("zoneid"), Name: p.Get("name"), VLAN: p.Get("vlan"),
		BroadcastDomainRange: p.Get("broadcastdomainrange"), IsolationMethods: p.List("isolationmethods"),
		Tags: p.List("tags")})
	if err != nil {
		return nil, err
	}
	c.changed()
	// A BaseAsyncCreateCmd: the entity exists when the job is queued.
	return &asyncJob{instanceType: "PhysicalNetwork", instanceID: pn.ID, created: true,
		cmdClass: "org.apache.cloudstack.api.command.admin.network.CreatePhysicalNetworkCmd",
		run:      func() (any, error) { return map[string]any{"physicalnetwork": c.physnetView(pn)}, nil }}, nil
}

// createPhysicalNetwork follows NetworkServiceImpl.createPhysicalNetwork: a
// zone that is Enabled takes no new physical network; the broadcast domain
// range of an advanced zone is ZONE; the network starts Disabled with the
// default providers an advanced zone gets (addDefaultVirtualRouterToPhysicalNetwork
// and the rest, in that order; BaremetalPxeProvider, ConfigDrive and Netris
// enabled at once, as their helpers do).
func (st *state) createPhysicalNetwork(s physnetSpec) (*PhysicalNetwork, error) {
	z := st.zone(s.ZoneID)
	if z == nil {
		return nil, paramError("Please specify a valid zone.")
	}
	if z.Allocation == allocationEnabled {
		return nil, permissionDenied("Cannot create PhysicalNetwork since the Zone is currently enabled, zone Id: %d", z.InternalID)
	}
	if len(s.Tags) > 1 {
		return nil, paramError("Only one tag can be specified for a physical network at this time")
	}
	if len(s.IsolationMethods) > 1 {
		return nil, paramError("Only one isolationMethod can be specified for a physical network at this time")
	}
	if r := s.BroadcastDomainRange; r != "" {
		switch strings.ToUpper(r) {
		case "ZONE":
		case "POD":
			return nil, paramError("Advance zone can have broadcast domain type of value ZONE only")
		default:
			return nil, paramError("Unable to resolve broadcastDomainRange '%s' to a supported value {Pod or Zone}", r)
		}
	}
	id, internal := st.newID(kindPhysicalNetwork)
	pn := &PhysicalNetwork{ID: id, InternalID: internal, Name: s.Name, ZoneID: z.ID, State: physnetDisabled,
		IsolationMethods: strings.Join(s.IsolationMethods, ","), BroadcastDomainRange: "ZONE",
		Tags: strings.Join(s.Tags, ",")}
	if s.VLAN != "" {
		vlan, err := normalizeVnetRanges(pn, s.VLAN)
		if err != nil {
			return nil, err
		}
		pn.VLAN = vlan
	}
	st.PhysicalNetworks = append(st.PhysicalNetworks, pn)
	for _, name := range []string{"VirtualRouter", "SecurityGroupProvider", "VpcVirtualRouter", "BaremetalPxeProvider",
		"InternalLbVm", "Tungsten", "ConfigDrive", "Nsx", "Netris"} {
		nsp := st.addProvider(pn, name)
		switch name {
		case "VirtualRouter", "VpcVirtualRouter", "InternalLbVm":
			// VirtualRouterElement.addElement and
			// InternalLoadBalancerElement.addInternalLoadBalancerElement: a
			// disabled element per provider.
			eid, eint := st.newID(kindVRElement)
			st.VRElements = append(st.VRElements, &VirtualRouterElement{ID: eid, InternalID: eint, NSPID: nsp.ID,
				Type: map[string]string{"VirtualRouter": "VirtualRouter", "VpcVirtualRouter": "VPCVirtualRouter",
					"InternalLbVm": "InternalLbVm"}[name]})
		case "BaremetalPxeProvider", "ConfigDrive", "Netris":
			nsp.State = providerEnabled
		}
	}
	return pn, nil
}

func (st *state) addProvider(pn *PhysicalNetwork, name string) *NetworkServiceProvider {
	id, internal := st.newID(kindProvider)
	nsp := &NetworkServiceProvider{ID: id, InternalID: internal, PhysicalNetworkID: pn.ID, Name: name, State: providerDisabled}
	st.Providers = append(st.Providers, nsp)
	return nsp
}

// VLAN id limits of NetworkServiceImpl.validateVlanRange for VLAN isolation.
const (
	minVLAN = 0
	maxVLAN = 4095
)

// normalizeVnetRanges is NetworkServiceImpl.validateVlanRange and
// generateVnetString: "100-200,300-310" checked and merged. Departure: only
// VLAN isolation's limits (GRE and VXLAN physical networks are not modelled).
func normalizeVnetRanges(pn *PhysicalNetwork, ranges string) (string, error) {
	msg := " between " + strconv.Itoa(minVLAN) + " and " + strconv.Itoa(maxVLAN)
	var vnets []int
	for _, r := range strings.Split(ranges, ",") {
		parts := strings.Split(r, "-")
		if len(parts) == 1 && parts[0] == "" {
			continue
		}
		if len(parts) < 2 {
			return "", paramError("Please provide valid vnet range. vnet range should be a comma separated list of vlan ranges. example 500-500,600-601%s", msg)
		}
		start, err1 := strconv.Atoi(parts[0])
		end, err2 := strconv.Atoi(parts[1])
		if err1 != nil || err2 != nil {
			return "", paramError("Please provide valid vnet range. The vnet range should be a comma separated list example 2001-2012,3000-3005.%s", msg)
		}
		if start < minVLAN || end > maxVLAN {
			return "", paramError("Vnet range has to be%s", msg)
		}
		if start > end {
			return "", paramError("Vnet range has to be%s and start range should be lesser than or equal to stop range", msg)
		}
		for v := start; v <= end; v++ {
			if !slices.Contains(vnets, v) {
				vnets = append(vnets, v)
			}
		}
	}
	slices.Sort(vnets)
	var out []string
	for i := 0; i < len(vnets); {
		j := i
		for j+1 < len(vnets) && vnets[j+1] == vnets[j]+1 {
			j++
		}
		out = append(out, strconv.Itoa(vnets[i])+"-"+strconv.Itoa(vnets[j]))
		i = j + 1
	}
	return strings.Join(out, ","), nil
}

// vnetInRange reports whether a VLAN id lies in a physical network's guest
// VLAN ranges (DataCenterDao.findVnet).
func (p *PhysicalNetwork) vnetInRange(vlan string) bool {
	v, err := strconv.Atoi(strings.TrimPrefix(vlan, "vlan://"))
	if err != nil {
		return false
	}
	for _, r := range strings.Split(p.VLAN, ",") {
		lo, hi, _ := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 == nil && err2 == nil && v >= a && v <= b {
			return true
		}
	}
	return false
}

// updatePhysicalNetwork follows NetworkServiceImpl.updatePhysicalNetwork for
// state and the guest VLAN range. Departure: shrinking the range is not
// checked against VLANs in use.
func updatePhysicalNetwork(c *Call) (*asyncJob, error) {
	p := c.Params
	pn, _ := byID(c.st.PhysicalNetworks, p.Get("id"))
	if len(p.List("tags")) > 1 {
		return nil, paramError("Unable to support more than one tag on network yet")
	}
	state := p.Get("state")
	if state != "" && state != physnetEnabled && state != physnetDisabled {
		return nil, paramError("Unable to resolve state '%s' to a supported value {Enabled or Disabled}", state)
	}
	vlan := pn.VLAN
	if p.Has("vlan") {
		v, err := normalizeVnetRanges(pn, p.Get("vlan"))
		if err != nil {
			return nil, err
		}
		vlan = v
	}
	return &asyncJob{instanceType: "PhysicalNetwork", instanceID: pn.ID,
		cmdClass: "org.apache.cloudstack.api.command.admin.network.UpdatePhysicalNetworkCmd",
		run: func() (any, error) {
			pn.update(state, vlan)
			if p.Has("tags") {
				pn.Tags = strings.Join(p.List("tags"), ",")
			}
			return map[string]any{"physicalnetwork": c.physnetView(pn)}, nil
		}}, nil
}

// update sets a checked state (empty keeps it) and guest VLAN ranges.
func (p *PhysicalNetwork) update(state, vlan string) {
	if state != "" {
		p.State = state
	}
	p.VLAN = vlan
}

// physnetView is ApiResponseHelper.createPhysicalNetworkResponse.
func (c *Call) physnetView(pn *PhysicalNetwork) map[string]any {
	z := c.st.zone(pn.ZoneID)
	v := map[string]any{"id": pn.ID, "name": pn.Name, "zoneid": z.ID, "zonename": z.Name,
		"state": or(pn.State, physnetEnabled), "isolationmethods": or(pn.IsolationMethods, "VLAN"),
		"broadcastdomainrange": or(pn.BroadcastDomainRange, "ZONE")}
	if pn.VLAN != "" {
		v["vlan"] = pn.VLAN
	}
	if pn.Tags != "" {
		v["tags"] = pn.Tags
	}
	return v
}

// addTrafficType follows NetworkServiceImpl.addTrafficTypeToPhysicalNetwork:
// a physical network carries a traffic type once, and a zone carries
// Management, Control, Public and Storage on one physical network only.
func addTrafficType(c *Call) (*asyncJob, error) {
	p := c.Params
	pn, ok := byID(c.st.PhysicalNetworks, p.Get("physicalnetworkid"))
	if !ok {
		return nil, paramError("Physical Network id=%s doesn't exist in the system", p.Get("physicalnetworkid"))
	}
	tt, err := c.st.addTrafficTypeTo(pn, p.Get("traffictype"))
	if err != nil {
		return nil, err
	}
	c.changed()
	return &asyncJob{instanceType: "PhysicalNetworkTrafficType", instanceID: tt.ID, created: true,
		cmdClass: "org.apache.cloudstack.api.command.admin.usage.AddTrafficTypeCmd",
		run:      func() (any, error) { return map[string]any{"traffictype": trafficTypeView(tt)}, nil }}, nil
}

// trafficTypes are Networks.TrafficType's values (valueOf is case-sensitive).
var trafficTypes = []string{"None", "Public", "Guest", "Storage", "Management", "Control", "Vpn"}

func (st *state) addTrafficTypeTo(pn *PhysicalNetwork, typ string) (*TrafficType, error) {
	if typ != "" && !slices.Contains(trafficTypes, typ) {
		return nil, paramError("Unable to resolve trafficType '%s' to a supported value", typ)
	}
	if st.trafficTypeOf(pn.ID, typ) != nil {
		return nil, internalError("This physical network already supports the traffic type: %s", typ)
	}
	if typ != "Guest" && len(st.physicalNetworksWithTraffic(pn.ZoneID, typ)) > 0 {
		return nil, internalError("Fail to add the traffic type to physical network because Zone already has a physical network with this traffic type: %s", typ)
	}
	return st.addTrafficTypeRow(pn, typ), nil
}

func (st *state) addTrafficTypeRow(pn *PhysicalNetwork, typ string) *TrafficType {
	id, internal := st.newID(kindTrafficType)
	tt := &TrafficType{ID: id, InternalID: internal, PhysicalNetworkID: pn.ID, Type: typ}
	st.TrafficTypes = append(st.TrafficTypes, tt)
	return tt
}

func (st *state) trafficTypeOf(physnetID, typ string) *TrafficType {
	for _, t := range st.TrafficTypes {
		if t.PhysicalNetworkID == physnetID && t.Type == typ {
			return t
		}
	}
	return nil
}

// physicalNetworksWithTraffic is PhysicalNetworkDao.listByZoneAndTrafficType.
func (st *state) physicalNetworksWithTraffic(zoneID, typ string) []*PhysicalNetwork {
	var out []*PhysicalNetwork
	for _, pn := range st.PhysicalNetworks {
		if pn.ZoneID == zoneID && st.trafficTypeOf(pn.ID, typ) != nil {
			out = append(out, pn)
		}
	}
	return out
}

// trafficTypeView is ApiResponseHelper.createTrafficTypeResponse; no
// hypervisor network labels are stored.
func trafficTypeView(t *TrafficType) map[string]any {
	return map[string]any{"id": t.ID, "traffictype": t.Type, "physicalnetworkid": t.PhysicalNetworkID}
}

func listTrafficTypes(c *Call) (any, error) {
	l := lister[*TrafficType]{key: "traffictype", id: (*TrafficType).uuid,
		keyword: func(t *TrafficType) []string { return []string{t.Type} }, view: trafficTypeView}
	return l.run(c, c.st.TrafficTypes, func(t *TrafficType) bool {
		return strings.EqualFold(t.PhysicalNetworkID, c.Params.Get("physicalnetworkid"))
	})
}

func listPhysicalNetworks(c *Call) (any, error) {
	l := lister[*PhysicalNetwork]{key: "physicalnetwork", id: (*PhysicalNetwork).uuid,
		name: func(p *PhysicalNetwork) string { return p.Name }, nameLike: true,
		zone: func(p *PhysicalNetwork) string { return p.ZoneID }, view: c.physnetView}
	return l.run(c, c.st.PhysicalNetworks)
}
