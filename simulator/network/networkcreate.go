package network

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/infrastructure"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/netutils"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// createNetwork and the network's implementation: NetworkServiceImpl.createGuestNetwork,
// GuestNetworkCreationPreparationServiceImpl (its checks), GuestNetworkGuru.

// networkCreateCommands are the commands of networkcreate.go (registerCommands).
func networkCreateCommands() []kernel.Command {
	return []kernel.Command{{Name: "createNetwork", Sync: createNetwork}}
}

// guestDomainSuffix is guest.domain.suffix's default.
const guestDomainSuffix = "cloud.internal"

// Spec is createNetwork's input.
type Spec struct {
	Name, DisplayText, OfferingID, ZoneID, PhysicalNetworkID       string
	Gateway, Netmask, StartIP, EndIP, VLAN, NetworkDomain, ACLType string
	VPCID, ACLID                                                   string // a VPC tier's VPC and ACL list
	Account                                                        *model.Account
}

func createNetwork(c *kernel.Call) (any, error) {
	p := c.Params
	owner, err := c.Owner() // NetworkServiceImpl.createGuestNetwork: finalizeOwner, the project's account with projectid
	if err != nil {
		return nil, err
	}
	if name := p.Get("account"); name != "" {
		owner = accountNamed(c.State, name, model.Or(p.Get("domainid"), owner.DomainID))
		if owner == nil {
			return nil, kernel.ParamError("Unable to find account %s in specified domain", name)
		}
	}
	n, err := MakeNetwork(c.State, Spec{Name: p.Get("name"), DisplayText: p.Get("displaytext"),
		OfferingID: p.Get("networkofferingid"), ZoneID: p.Get("zoneid"), PhysicalNetworkID: p.Get("physicalnetworkid"),
		Gateway: p.Get("gateway"), Netmask: p.Get("netmask"), StartIP: p.Get("startip"), EndIP: p.Get("endip"),
		VLAN: p.Get("vlan"), NetworkDomain: p.Get("networkdomain"), ACLType: p.Get("acltype"), Account: owner,
		VPCID: p.Get("vpcid"), ACLID: p.Get("aclid")},
		c.Engine.Now())
	if err != nil {
		return nil, err
	}
	c.Changed()
	return map[string]any{"network": views.NetworkView(c, n)}, nil
}

// MakeNetwork follows NetworkServiceImpl.createGuestNetwork and
// GuestNetworkCreationPreparationServiceImpl.prepareGuestNetworkCreation:
// the offering and the physical network (the zone's one carrying Guest
// traffic unless named) must be Enabled; Shared networks need a gateway and
// netmask; an Isolated network's CIDR must be RFC 1918 or 6598
// (validateGuestCidr; an admin's Shared network may use any range); an
// Isolated network without a gateway takes the zone's guest CIDR
// (GuestNetworkGuru.design). The network domain defaults to
// "cs" + the owner's hex id + guest.domain.suffix (normalizeNetworkDomain).
// Isolated networks start Allocated and are implemented when a VM first
// starts on them; Shared ones are Setup. Departure: a Shared network's
// start/end IP range is recorded but guest addresses come from its whole
// CIDR; IPv6 and private VLANs are not modelled. A VPC tier passes the VPC
// branch's checks (vpcOfTier) and takes the VPC's network domain.
func MakeNetwork(st *model.State, s Spec, now time.Time) (*model.Network, error) {
	o, z, pn, err := networkHome(st, s)
	if err != nil {
		return nil, err
	}
	cidr, err := checkNetworkCIDR(o, s)
	if err != nil {
		return nil, err
	}
	if s.NetworkDomain != "" && !netutils.VerifyDomainName(s.NetworkDomain) {
		return nil, infrastructure.InvalidNetworkDomain()
	}
	vpc, domain, err := vpcOfTier(st, o, s, cidr)
	if err != nil {
		return nil, err
	}
	if domain == "" {
		domain = "cs" + strconv.FormatInt(s.Account.InternalID, 16) + guestDomainSuffix
	}
	gateway, netmask := s.Gateway, s.Netmask
	if cidr == "" && o.GuestType == "Isolated" {
		if cidr, gateway, netmask = zoneGuestCIDR(z); cidr == "" {
			// GuestNetworkGuru.design (the network and zone named, not toString'd)
			return nil, kernel.InternalError("Can't design network %s; guest CIDR is not configured per zone %s", s.Name, z.Name)
		}
	}
	n := &model.Network{Name: s.Name, DisplayText: model.Or(s.DisplayText, s.Name), ZoneID: z.ID, PhysicalNetworkID: pn.ID,
		OfferingID: o.ID, Type: o.GuestType, State: model.NetworkAllocated, Gateway: gateway, Netmask: netmask, CIDR: cidr,
		NetworkDomain: domain, AccountID: s.Account.ID, ACLType: model.Or(s.ACLType, "Account"), StartIP: s.StartIP,
		EndIP: model.Or(s.EndIP, s.StartIP), Created: now}
	if vpc != nil {
		n.VPCID, n.ACLID = vpc.ID, s.ACLID
	}
	if o.GuestType == "Shared" {
		n.State, n.VLAN = model.NetworkSetup, strings.TrimPrefix(s.VLAN, "vlan://")
		n.ACLType = model.Or(s.ACLType, "Domain")
	}
	n.ID, n.InternalID = st.NewID(model.KindNetwork)
	st.Networks = append(st.Networks, n)
	return n, nil
}

// networkHome is the network's offering, zone and guest physical network,
// each found and Enabled.
func networkHome(st *model.State, s Spec) (*model.NetworkOffering, *model.Zone, *model.PhysicalNetwork, error) {
	o := st.NetworkOffering(s.OfferingID)
	if o == nil {
		return nil, nil, nil, kernel.ParamError("Unable to find network offering by id %s", s.OfferingID)
	}
	z := st.Zone(s.ZoneID)
	if z == nil {
		return nil, nil, nil, kernel.ParamError("Specified zone id was not found")
	}
	pn, err := guestPhysicalNetwork(st, z, s.PhysicalNetworkID)
	if err != nil {
		return nil, nil, nil, err
	}
	if o.State != model.OfferingEnabled {
		return nil, nil, nil, kernel.ParamError("Can't use specified network offering id as its state is not Enabled")
	}
	if pn.State != model.PhysnetEnabled {
		return nil, nil, nil, kernel.ParamError("Specified physical network id is in incorrect state:%s", model.Or(pn.State, model.PhysnetDisabled))
	}
	return o, z, pn, nil
}

// checkNetworkCIDR is the IPv4 CIDR the caller gave ("" for none), where
// the offering allows it: a VLAN only where the offering specifies VLANs, a
// CIDR required for Shared networks and for Isolated ones that provide
// neither SourceNat nor Gateway, and an Isolated CIDR private.
func checkNetworkCIDR(o *model.NetworkOffering, s Spec) (string, error) {
	cidr, err := guestCIDROf(s)
	if err != nil {
		return "", err
	}
	if o.GuestType == "Shared" && !o.SpecifyVLAN && s.VLAN != "" {
		return "", kernel.ParamError("Cannot specify vlanId when create a network from network offering with specifyvlan=false")
	}
	needsCIDR := o.GuestType == "Shared" || o.GuestType == "Isolated" && !o.Has("SourceNat") && !o.Has("Gateway")
	if cidr == "" && needsCIDR {
		if o.GuestType == "Shared" {
			return "", kernel.ParamError("Gateway/netmask are required when creating Shared networks.")
		}
		return "", kernel.ParamError("gateway/netmask are required when create network of type Isolated with service SourceNat disabled")
	}
	if cidr != "" && o.GuestType == "Isolated" && !netutils.ValidateGuestCIDR(cidr) {
		return "", kernel.ParamError("Virtual Guest Cidr %s is not RFC 1918 or 6598 compliant", cidr)
	}
	return cidr, nil
}

// guestCIDROf is createGuestNetwork's IPv4 checks: a start IP needs a
// gateway and netmask, the end IP defaults to the start IP, and the gateway
// may be neither the network's nor its broadcast address.
func guestCIDROf(s Spec) (string, *kernel.APIError) {
	if s.StartIP != "" {
		if !netutils.ValidIPv4(s.StartIP) {
			return "", kernel.ParamError("Invalid format for the startIp parameter")
		}
		if s.EndIP != "" && !netutils.ValidIPv4(s.EndIP) {
			return "", kernel.ParamError("Invalid format for the endIp parameter")
		}
		if s.Gateway == "" || s.Netmask == "" {
			return "", kernel.ParamError("gateway and netmask should be defined when startIP/endIP are passed in")
		}
	}
	if s.Gateway == "" || s.Netmask == "" {
		return "", nil
	}
	if !netutils.ValidIPv4(s.Gateway) {
		return "", kernel.ParamError("Invalid gateway")
	}
	pfx, ok := netutils.CIDROf(s.Gateway, s.Netmask)
	if !ok {
		return "", kernel.ParamError("Invalid netmask")
	}
	if gw := netutils.ParseAddr(s.Gateway); pfx.Bits() < 31 && (gw == pfx.Addr() || gw == model.LastAddr(pfx)) {
		return "", kernel.ParamError("Invalid gateway IP provided. Either the IP is broadcast or network IP.")
	}
	return pfx.String(), nil
}

// guestPhysicalNetwork is the named physical network, or the zone's one
// carrying Guest traffic (NetworkModelImpl.findPhysicalNetworkId).
func guestPhysicalNetwork(st *model.State, z *model.Zone, id string) (*model.PhysicalNetwork, *kernel.APIError) {
	if id != "" {
		pn, ok := model.ByID(st.PhysicalNetworks, id)
		if !ok || pn.ZoneID != z.ID {
			return nil, kernel.ParamError("Unable to find physical network by id %s in zone %s", id, z.Name)
		}
		return pn, nil
	}
	pns := model.PhysicalNetworksWithTraffic(st, z.ID, "Guest")
	switch len(pns) {
	case 0:
		return nil, kernel.ParamError("Unable to find physical network in zone id=%d with traffic type Guest", z.InternalID)
	case 1:
		return pns[0], nil
	}
	return nil, kernel.ParamError("More than one physical networks exist in zone id=%d with traffic type=Guest. Specify the physical network id", z.InternalID)
}

// zoneGuestCIDR is GuestNetworkGuru.design's default: the zone's guest CIDR
// with its first host address (getIpRangeStartIpFromCidr) as the gateway.
func zoneGuestCIDR(z *model.Zone) (cidr, gateway, netmask string) {
	p, ok := netutils.ParseCIDR(z.GuestCIDR)
	if !ok {
		return "", "", ""
	}
	p = p.Masked()
	mask := netip.AddrFrom4([4]byte{}).As4()
	for i := 0; i < p.Bits(); i++ {
		mask[i/8] |= 0x80 >> (i % 8)
	}
	return p.String(), p.Addr().Next().String(), netip.AddrFrom4(mask).String()
}

// ImplementNetwork is NetworkOrchestrator.implementNetwork for an Allocated
// Isolated network: GuestNetworkGuru.implement takes the lowest guest VLAN
// of the physical network's range no other network of the zone holds, and
// the network is Implemented (its source NAT address is taken on first use
// of the public IP commands, ensurePublicIPs). Departure: no virtual router
// is started.
func ImplementNetwork(st *model.State, n *model.Network) *kernel.APIError {
	if n.State != model.NetworkAllocated || n.Type != "Isolated" {
		return nil
	}
	pn, ok := model.ByID(st.PhysicalNetworks, n.PhysicalNetworkID)
	if !ok {
		return kernel.InternalError("Unable to implement network %s: no physical network", n.Name)
	}
	used := map[string]bool{}
	for _, other := range st.Networks {
		if other.ZoneID == n.ZoneID && other.VLAN != "" {
			used[other.VLAN] = true
		}
	}
	for _, r := range strings.Split(pn.VLAN, ",") {
		lo, hi, _ := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil {
			continue
		}
		for v := a; v <= b; v++ {
			if !used[strconv.Itoa(v)] {
				n.VLAN, n.State = strconv.Itoa(v), model.NetworkImplemented
				return nil
			}
		}
	}
	return &kernel.APIError{Code: kernel.CodeCapacity, CSCode: kernel.CsInsufficientCap,
		Text: fmt.Sprintf("Unable to allocate guest vlan for network %s in physical network %s", n.Name, pn.Name)}
}

// accountNamed finds an active account by name in a domain.
func accountNamed(st *model.State, name, domainID string) *model.Account {
	for _, a := range st.Accounts {
		if strings.EqualFold(a.Name, name) && strings.EqualFold(a.DomainID, domainID) {
			return a
		}
	}
	return nil
}
