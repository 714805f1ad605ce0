package network

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/netutils"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// createVlanIpRange and listVlanIpRanges, a zone's public addresses:
// ConfigurationManagerImpl.createVlanAndPublicIpRange and validateIpRange.

// vlanRangeCommands are the commands of vlanranges.go (registerCommands).
func vlanRangeCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createVlanIpRange", Sync: createVlanIPRange},
		{Name: "listVlanIpRanges", IDKind: model.KindVlanRange, Sync: listVlanIPRanges},
	}
}

// VlanSpec is createVlanIpRange's input.
type VlanSpec struct {
	ZoneID, PhysicalNetworkID, VLAN, Gateway, Netmask, StartIP, EndIP string
	ForVirtualNetwork                                                 bool
}

func createVlanIPRange(c *kernel.Call) (any, error) {
	p := c.Params
	if p.Get("networkid") != "" || p.Get("podid") != "" || p.Get("account") != "" || p.Get("projectid") != "" ||
		p.Get("ip6cidr") != "" || !p.Bool("forvirtualnetwork", true) {
		return nil, kernel.NotImplemented("Only public IPv4 ranges of a zone are implemented by the CloudStack simulator")
	}
	r, err := CreateVlanRange(c.State, VlanSpec{ZoneID: p.Get("zoneid"), PhysicalNetworkID: p.Get("physicalnetworkid"),
		VLAN: p.Get("vlan"), Gateway: p.Get("gateway"), Netmask: p.Get("netmask"), StartIP: p.Get("startip"),
		EndIP: p.Get("endip"), ForVirtualNetwork: true})
	if err != nil {
		return nil, err
	}
	c.Changed()
	return map[string]any{"vlan": views.VlanRangeView(c, r)}, nil
}

// CreateVlanRange follows createVlanAndPublicIpRange(CreateVlanIpRangeCmd)
// and its inner overload for a public range of an advanced zone, in their
// order: the end IP defaults to the start IP; the physical network is the
// named one or the zone's one carrying Public traffic; the range may not
// overlap a pod's (checkOverlapPrivateIpRange); the public network needs a
// VLAN ("untagged" is one); the gateway, netmask and range must agree; a
// range over the zone's guest CIDR on a guest VLAN is refused;
// checkPublicIpRangeErrors; then a VLAN in the physical network's guest
// range is refused. Departure: the text for a range overlapping another
// public range (checkZoneVlanIpOverlap) is the simulator's own.
func CreateVlanRange(st *model.State, s VlanSpec) (*model.VlanRange, error) {
	if s.StartIP == "" {
		return nil, kernel.ParamError("StartIP or IPv6 CIDR is missing in the parameters!")
	}
	s.EndIP = model.Or(s.EndIP, s.StartIP)
	z := st.Zone(s.ZoneID)
	if z == nil {
		return nil, kernel.ParamError("Unable to find zone by id %s", s.ZoneID)
	}
	pn, err := publicPhysicalNetwork(st, z, s.PhysicalNetworkID)
	if err != nil {
		return nil, err
	}
	if netutils.ValidIPv4(s.StartIP) && netutils.ValidIPv4(s.EndIP) {
		for _, pod := range st.Pods {
			if pod.ZoneID == z.ID && netutils.RangesOverlap(s.StartIP, s.EndIP, pod.StartIP, pod.EndIP) {
				return nil, kernel.ParamError("The Start IP and EndIP address range overlap with private IP :%s:%s", pod.StartIP, pod.EndIP)
			}
		}
	}
	if s.VLAN == "" {
		return nil, kernel.ParamError("Unable to determine vlan id or untagged vlan for public network")
	}
	tag := "vlan://" + strings.TrimPrefix(s.VLAN, "vlan://") // BroadcastDomainType.Vlan.toUri
	if !netutils.ValidIPv4(s.Gateway) {
		return nil, kernel.ParamError("Please specify a valid gateway")
	}
	if !netutils.ValidNetmask(s.Netmask) {
		return nil, kernel.ParamError("Please specify a valid netmask")
	}
	cidr, _ := netutils.CIDROf(s.Gateway, s.Netmask)
	if !netutils.ValidIPv4(s.StartIP) || !netutils.ValidIPv4(s.EndIP) || !cidr.Contains(netutils.ParseAddr(s.StartIP)) || !cidr.Contains(netutils.ParseAddr(s.EndIP)) {
		return nil, kernel.ParamError("Please specify a valid IP range or valid netmask or valid gateway")
	}
	guestVLAN := !strings.EqualFold(tag, "vlan://untagged") && pn.VnetInRange(tag)
	if g, ok := netutils.ParseCIDR(z.GuestCIDR); ok && g.Overlaps(cidr) && guestVLAN {
		return nil, kernel.ParamError("The new IP range you have specified has  overlapped with the guest network in zone: %salong with existing Vlan also. Please specify a different gateway/netmask", z.Name)
	}
	if err := checkPublicIPRangeErrors(s, cidr.Bits()); err != nil {
		return nil, err
	}
	for _, r := range st.VlanRanges {
		if r.ZoneID == z.ID && netutils.RangesOverlap(s.StartIP, s.EndIP, r.StartIP, r.EndIP) {
			return nil, kernel.ParamError("The IP range %s-%s overlaps with the range %s-%s of zone %s", s.StartIP, s.EndIP, r.StartIP, r.EndIP, z.Name)
		}
	}
	if guestVLAN {
		return nil, kernel.ParamError("The VLAN tag %s is already being used for dynamic vlan allocation for the guest network in zone %s", tag, z.Name)
	}
	id, internal := st.NewID(model.KindVlanRange)
	r := &model.VlanRange{ID: id, InternalID: internal, ZoneID: z.ID, PhysicalNetworkID: pn.ID, VLAN: tag,
		Gateway: s.Gateway, Netmask: s.Netmask, CIDR: cidr.String(), StartIP: s.StartIP, EndIP: s.EndIP}
	// A virtual range given no network belongs to the zone's public network
	// (getSystemNetworkByZoneAndTrafficType(zone, Public)); the inner
	// createVlanAndPublicIpRange keeps it as the row's network_id.
	if n := st.PublicNetworkOf(z.ID); n != nil {
		r.NetworkID = n.ID
	}
	st.VlanRanges = append(st.VlanRanges, r)
	return r, nil
}

// publicPhysicalNetwork is the named physical network or the zone's default
// one for Public traffic (getDefaultPhysicalNetworkByZoneAndTrafficType).
func publicPhysicalNetwork(st *model.State, z *model.Zone, id string) (*model.PhysicalNetwork, *kernel.APIError) {
	if id != "" {
		pn, ok := model.ByID(st.PhysicalNetworks, id)
		if !ok {
			return nil, kernel.ParamError("Unable to find Physical Network with id=%s", id)
		}
		return pn, nil
	}
	switch pns := model.PhysicalNetworksWithTraffic(st, z.ID, "Public"); len(pns) {
	case 0:
		return nil, kernel.ParamError("Unable to find the default physical network with traffic=Public in the specified zone id")
	case 1:
		return pns[0], nil
	}
	return nil, kernel.ParamError("More than one physical networks exist in zone id=%d with traffic type=Public", z.InternalID)
}

// checkPublicIPRangeErrors is ConfigurationManagerImpl.checkPublicIpRangeErrors
// for a range already known to lie in the gateway's subnet.
func checkPublicIPRangeErrors(s VlanSpec, bits int) *kernel.APIError {
	if netutils.IPLess(s.EndIP, s.StartIP) {
		return kernel.ParamError("Please specify a valid IP range.")
	}
	// RFC 3021: a /31 has no gateway to keep out of the range.
	if bits != 31 && netutils.RangesOverlap(s.StartIP, s.EndIP, s.Gateway, s.Gateway) {
		return kernel.ParamError("The gateway ip should not be the part of the ip range being added.")
	}
	return nil
}

func listVlanIPRanges(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.VlanRange]{Key: "vlaniprange", ID: (*model.VlanRange).UUID, Zone: func(v *model.VlanRange) string { return v.ZoneID },
		Keyword: func(v *model.VlanRange) []string { return []string{v.VLAN} }, View: views.VlanRangeView}
	p := c.Params
	return l.Run(c, c.State.VlanRanges, func(v *model.VlanRange) bool {
		return kernel.OptEq(p.Get("physicalnetworkid"), v.PhysicalNetworkID) &&
			(p.Get("vlan") == "" || strings.TrimPrefix(v.VLAN, "vlan://") == strings.TrimPrefix(p.Get("vlan"), "vlan://")) &&
			p.Bool("forvirtualnetwork", true) && p.Get("networkid") == "" && p.Get("podid") == ""
	})
}
