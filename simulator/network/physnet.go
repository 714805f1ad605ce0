package network

import (
	"slices"
	"strconv"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// Physical networks, their traffic types, network service providers and the
// virtual router element: NetworkServiceImpl (and its provider helpers), as
// marvin's deployDataCenter drives them.

// physicalNetworkCommands are the commands of physnet.go (registerCommands).
func physicalNetworkCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createPhysicalNetwork", Async: createPhysicalNetwork},
		{Name: "updatePhysicalNetwork", IDKind: model.KindPhysicalNetwork, Async: updatePhysicalNetwork},
		{Name: "addTrafficType", Async: addTrafficType},
		{Name: "listTrafficTypes", IDKind: model.KindTrafficType, Sync: listTrafficTypes},
		{Name: "listPhysicalNetworks", IDKind: model.KindPhysicalNetwork, Sync: listPhysicalNetworks},
	}
}

// PhysnetSpec is createPhysicalNetwork's input.
type PhysnetSpec struct {
	ZoneID, Name, VLAN, BroadcastDomainRange string
	IsolationMethods, Tags                   []string
}

func createPhysicalNetwork(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	pn, err := MakePhysicalNetwork(c.State, PhysnetSpec{ZoneID: p.Get("zoneid"), Name: p.Get("name"), VLAN: p.Get("vlan"),
		BroadcastDomainRange: p.Get("broadcastdomainrange"), IsolationMethods: p.List("isolationmethods"),
		Tags: p.List("tags")})
	if err != nil {
		return nil, err
	}
	c.Changed()
	// A BaseAsyncCreateCmd: the entity exists when the job is queued.
	return &kernel.AsyncJob{InstanceType: "PhysicalNetwork", InstanceID: pn.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.admin.network.CreatePhysicalNetworkCmd",
		Run:      func() (any, error) { return map[string]any{"physicalnetwork": views.PhysnetView(c, pn)}, nil }}, nil
}

// MakePhysicalNetwork follows NetworkServiceImpl.createPhysicalNetwork: a
// zone that is Enabled takes no new physical network; the broadcast domain
// range of an advanced zone is ZONE; the network starts Disabled with the
// default providers an advanced zone gets (addDefaultVirtualRouterToPhysicalNetwork
// and the rest, in that order; BaremetalPxeProvider, ConfigDrive and Netris
// enabled at once, as their helpers do).
func MakePhysicalNetwork(st *model.State, s PhysnetSpec) (*model.PhysicalNetwork, error) {
	z := st.Zone(s.ZoneID)
	if z == nil {
		return nil, kernel.ParamError("Please specify a valid zone.")
	}
	if z.Allocation == model.AllocationEnabled {
		return nil, kernel.PermissionDenied("Cannot create PhysicalNetwork since the Zone is currently enabled, zone Id: %d", z.InternalID)
	}
	if len(s.Tags) > 1 {
		return nil, kernel.ParamError("Only one tag can be specified for a physical network at this time")
	}
	if len(s.IsolationMethods) > 1 {
		return nil, kernel.ParamError("Only one isolationMethod can be specified for a physical network at this time")
	}
	if r := s.BroadcastDomainRange; r != "" {
		switch strings.ToUpper(r) {
		case "ZONE":
		case "POD":
			return nil, kernel.ParamError("Advance zone can have broadcast domain type of value ZONE only")
		default:
			return nil, kernel.ParamError("Unable to resolve broadcastDomainRange '%s' to a supported value {Pod or Zone}", r)
		}
	}
	id, internal := st.NewID(model.KindPhysicalNetwork)
	pn := &model.PhysicalNetwork{ID: id, InternalID: internal, Name: s.Name, ZoneID: z.ID, State: model.PhysnetDisabled,
		IsolationMethods: strings.Join(s.IsolationMethods, ","), BroadcastDomainRange: "ZONE",
		Tags: strings.Join(s.Tags, ",")}
	if s.VLAN != "" {
		vlan, err := NormalizeVnetRanges(pn, s.VLAN)
		if err != nil {
			return nil, err
		}
		pn.VLAN = vlan
	}
	st.PhysicalNetworks = append(st.PhysicalNetworks, pn)
	for _, name := range []string{"VirtualRouter", "SecurityGroupProvider", "VpcVirtualRouter", "BaremetalPxeProvider",
		"InternalLbVm", "Tungsten", "ConfigDrive", "Nsx", "Netris"} {
		nsp := addProvider(st, pn, name)
		switch name {
		case "VirtualRouter", "VpcVirtualRouter", "InternalLbVm":
			// VirtualRouterElement.addElement and
			// InternalLoadBalancerElement.addInternalLoadBalancerElement: a
			// disabled element per provider.
			eid, eint := st.NewID(model.KindVRElement)
			st.VRElements = append(st.VRElements, &model.VirtualRouterElement{ID: eid, InternalID: eint, NSPID: nsp.ID,
				Type: map[string]string{"VirtualRouter": "VirtualRouter", "VpcVirtualRouter": "VPCVirtualRouter",
					"InternalLbVm": "InternalLbVm"}[name]})
		case "BaremetalPxeProvider", "ConfigDrive", "Netris":
			nsp.State = model.ProviderEnabled
		}
	}
	return pn, nil
}

func addProvider(st *model.State, pn *model.PhysicalNetwork, name string) *model.NetworkServiceProvider {
	id, internal := st.NewID(model.KindProvider)
	nsp := &model.NetworkServiceProvider{ID: id, InternalID: internal, PhysicalNetworkID: pn.ID, Name: name, State: model.ProviderDisabled}
	st.Providers = append(st.Providers, nsp)
	return nsp
}

// VLAN id limits of NetworkServiceImpl.validateVlanRange for VLAN isolation.
const (
	minVLAN = 0
	maxVLAN = 4095
)

// NormalizeVnetRanges is NetworkServiceImpl.validateVlanRange and
// generateVnetString: "100-200,300-310" checked and merged. Departure: only
// VLAN isolation's limits (GRE and VXLAN physical networks are not modelled).
func NormalizeVnetRanges(pn *model.PhysicalNetwork, ranges string) (string, error) {
	msg := " between " + strconv.Itoa(minVLAN) + " and " + strconv.Itoa(maxVLAN)
	var vnets []int
	for _, r := range strings.Split(ranges, ",") {
		parts := strings.Split(r, "-")
		if len(parts) == 1 && parts[0] == "" {
			continue
		}
		if len(parts) < 2 {
			return "", kernel.ParamError("Please provide valid vnet range. vnet range should be a comma separated list of vlan ranges. example 500-500,600-601%s", msg)
		}
		start, err1 := strconv.Atoi(parts[0])
		end, err2 := strconv.Atoi(parts[1])
		if err1 != nil || err2 != nil {
			return "", kernel.ParamError("Please provide valid vnet range. The vnet range should be a comma separated list example 2001-2012,3000-3005.%s", msg)
		}
		if start < minVLAN || end > maxVLAN {
			return "", kernel.ParamError("Vnet range has to be%s", msg)
		}
		if start > end {
			return "", kernel.ParamError("Vnet range has to be%s and start range should be lesser than or equal to stop range", msg)
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

// updatePhysicalNetwork follows NetworkServiceImpl.updatePhysicalNetwork for
// state and the guest VLAN range. Departure: shrinking the range is not
// checked against VLANs in use.
func updatePhysicalNetwork(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	pn, _ := model.ByID(c.State.PhysicalNetworks, p.Get("id"))
	if len(p.List("tags")) > 1 {
		return nil, kernel.ParamError("Unable to support more than one tag on network yet")
	}
	state := p.Get("state")
	if state != "" && state != model.PhysnetEnabled && state != model.PhysnetDisabled {
		return nil, kernel.ParamError("Unable to resolve state '%s' to a supported value {Enabled or Disabled}", state)
	}
	vlan := pn.VLAN
	if p.Has("vlan") {
		v, err := NormalizeVnetRanges(pn, p.Get("vlan"))
		if err != nil {
			return nil, err
		}
		vlan = v
	}
	return &kernel.AsyncJob{InstanceType: "PhysicalNetwork", InstanceID: pn.ID,
		CmdClass: "org.apache.cloudstack.api.command.admin.network.UpdatePhysicalNetworkCmd",
		Run: func() (any, error) {
			pn.Update(state, vlan)
			if p.Has("tags") {
				pn.Tags = strings.Join(p.List("tags"), ",")
			}
			return map[string]any{"physicalnetwork": views.PhysnetView(c, pn)}, nil
		}}, nil
}

// addTrafficType follows NetworkServiceImpl.addTrafficTypeToPhysicalNetwork:
// a physical network carries a traffic type once, and a zone carries
// Management, Control, Public and Storage on one physical network only.
func addTrafficType(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	pn, ok := model.ByID(c.State.PhysicalNetworks, p.Get("physicalnetworkid"))
	if !ok {
		return nil, kernel.ParamError("Physical Network id=%s doesn't exist in the system", p.Get("physicalnetworkid"))
	}
	tt, err := AddTrafficTypeTo(c.State, pn, p.Get("traffictype"))
	if err != nil {
		return nil, err
	}
	c.Changed()
	return &kernel.AsyncJob{InstanceType: "PhysicalNetworkTrafficType", InstanceID: tt.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.admin.usage.AddTrafficTypeCmd",
		Run:      func() (any, error) { return map[string]any{"traffictype": views.TrafficTypeView(tt)}, nil }}, nil
}

// trafficTypes are Networks.TrafficType's values (valueOf is case-sensitive).
var trafficTypes = []string{"None", "Public", "Guest", "Storage", "Management", "Control", "Vpn"}

// AddTrafficTypeTo is NetworkServiceImpl.addTrafficTypeToPhysicalNetwork's
// checks and row: a known type, once per physical network.
func AddTrafficTypeTo(st *model.State, pn *model.PhysicalNetwork, typ string) (*model.TrafficType, error) {
	if typ != "" && !slices.Contains(trafficTypes, typ) {
		return nil, kernel.ParamError("Unable to resolve trafficType '%s' to a supported value", typ)
	}
	if model.TrafficTypeOf(st, pn.ID, typ) != nil {
		return nil, kernel.InternalError("This physical network already supports the traffic type: %s", typ)
	}
	if typ != "Guest" && len(model.PhysicalNetworksWithTraffic(st, pn.ZoneID, typ)) > 0 {
		return nil, kernel.InternalError("Fail to add the traffic type to physical network because Zone already has a physical network with this traffic type: %s", typ)
	}
	return model.AddTrafficTypeRow(st, pn, typ), nil
}

func listTrafficTypes(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.TrafficType]{Key: "traffictype", ID: (*model.TrafficType).UUID,
		Keyword: func(t *model.TrafficType) []string { return []string{t.Type} }, View: kernel.PlainView(views.TrafficTypeView)}
	return l.Run(c, c.State.TrafficTypes, func(t *model.TrafficType) bool {
		return strings.EqualFold(t.PhysicalNetworkID, c.Params.Get("physicalnetworkid"))
	})
}

func listPhysicalNetworks(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.PhysicalNetwork]{Key: "physicalnetwork", ID: (*model.PhysicalNetwork).UUID,
		Name: func(p *model.PhysicalNetwork) string { return p.Name }, NameLike: true,
		Zone: func(p *model.PhysicalNetwork) string { return p.ZoneID }, View: views.PhysnetView}
	return l.Run(c, c.State.PhysicalNetworks)
}
