package simulator

import "strings"

// createVlanIpRange for a zone's public addresses:
// ConfigurationManagerImpl.createVlanAndPublicIpRange and validateIpRange.

func init() {
	register(command{name: "createVlanIpRange", sync: createVlanIpRange})
}

// vlanSpec is createVlanIpRange's input.
type vlanSpec struct {
	ZoneID, PhysicalNetworkID, VLAN, Gateway, Netmask, StartIP, EndIP string
	ForVirtualNetwork                                                 bool
}

func createVlanIpRange(c *Call) (any, error) {
	p := c.Params
	if p.Get("networkid") != "" || p.Get("podid") != "" || p.Get("account") != "" || p.Get("projectid") != "" ||
		p.Get("ip6cidr") != "" || !p.Bool("forvirtualnetwork", true) {
		return nil, notImplemented("Only public IPv4 ranges of a zone are implemented by the CloudStack simulator")
	}
	r, err := c.st.createVlanRange(vlanSpec{ZoneID: p.Get("zoneid"), PhysicalNetworkID: p.Get("physicalnetworkid"),
		VLAN: p.Get("vlan"), Gateway: p.Get("gateway"), Netmask: p.Get("netmask"), StartIP: p.Get("startip"),
		EndIP: p.Get("endip"), ForVirtualNetwork: true})
	if err != nil {
		return nil, err
	}
	c.changed()
	return map[string]any{"vlan": c.vlanRangeView(r)}, nil
}

// createVlanRange follows createVlanAndPublicIpRange for a public range of
// an advanced zone: the zone's physical network carrying Public traffic
// unless one is named; the public network needs a VLAN (or "untagged"); the
// gateway, netmask and range must agree; the gateway may not lie in the
// range; a VLAN in the physical network's guest range is refused; a range
// in a subnet the zone has already must keep its gateway
// (validateIpRange/hasSameSubnet). The end IP defaults to the start IP.
// Departure: the text for overlapping addresses of the same subnet
// (checkPublicIpRangeErrors) is the simulator's own.
func (st *state) createVlanRange(s vlanSpec) (*VlanRange, error) {
	if s.StartIP == "" {
		return nil, paramError("Please specify IPv4 or IPv6 address.")
	}
	z := st.zone(s.ZoneID)
	if z == nil {
		return nil, paramError("Please specify a valid zone.")
	}
	var pn *PhysicalNetwork
	if s.PhysicalNetworkID != "" {
		pn, _ = byID(st.PhysicalNetworks, s.PhysicalNetworkID)
	} else if pns := st.physicalNetworksWithTraffic(z.ID, "Public"); len(pns) == 1 {
		pn = pns[0]
	}
	if pn == nil || pn.ZoneID != z.ID {
		return nil, paramError("Please specify a valid physical network id")
	}
	if s.VLAN == "" {
		return nil, paramError("Unable to determine vlan id or untagged vlan for public network")
	}
	vlan := strings.TrimPrefix(s.VLAN, "vlan://")
	if !validIPv4(s.Gateway) {
		return nil, paramError("Please specify a valid gateway")
	}
	if !validNetmask(s.Netmask) {
		return nil, paramError("Please specify a valid netmask")
	}
	s.EndIP = or(s.EndIP, s.StartIP)
	cidr, _ := cidrOf(s.Gateway, s.Netmask)
	if !validIPv4(s.StartIP) || !validIPv4(s.EndIP) || !cidr.Contains(parseAddr(s.StartIP)) || !cidr.Contains(parseAddr(s.EndIP)) {
		return nil, paramError("Please specify a valid IP range or valid netmask or valid gateway")
	}
	if rangesOverlap(s.StartIP, s.EndIP, s.Gateway, s.Gateway) {
		return nil, paramError("The gateway ip should not be the part of the ip range being added.")
	}
	if !strings.EqualFold(vlan, "untagged") && pn.vnetInRange(vlan) {
		return nil, paramError("The VLAN tag %s is already being used for dynamic vlan allocation for the guest network in zone %s", vlan, z.Name)
	}
	for _, r := range st.VlanRanges {
		if r.ZoneID != z.ID || r.CIDR != cidr.String() {
			continue
		}
		if r.Gateway != s.Gateway {
			return nil, paramError("The gateway of the subnet should be unique. The subnet already has a gateway %s", r.Gateway)
		}
		if rangesOverlap(s.StartIP, s.EndIP, r.StartIP, r.EndIP) {
			return nil, paramError("The IP range %s-%s overlaps with the range %s-%s of zone %s", s.StartIP, s.EndIP, r.StartIP, r.EndIP, z.Name)
		}
	}
	tag := "vlan://" + vlan
	if strings.EqualFold(vlan, "untagged") {
		tag = "vlan://untagged"
	}
	id, internal := st.newID(kindVlanRange)
	r := &VlanRange{ID: id, InternalID: internal, ZoneID: z.ID, PhysicalNetworkID: pn.ID, VLAN: tag,
		Gateway: s.Gateway, Netmask: s.Netmask, CIDR: cidr.String(), StartIP: s.StartIP, EndIP: s.EndIP}
	st.VlanRanges = append(st.VlanRanges, r)
	return r, nil
}
