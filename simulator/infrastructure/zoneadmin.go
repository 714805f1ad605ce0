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

// The admin API an operator (or marvin's deployDataCenter) builds a zone
// with: zones and pods (ConfigurationManagerImpl) here, clusters and hosts
// (ResourceManagerImpl) in clusteradmin.go. The seeded zone is built
// through the same functions (zonedeploy.go).

// zoneAdminCommands are the commands of zoneadmin.go (registerCommands).
func zoneAdminCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createZone", Sync: createZone},
		{Name: "updateZone", IDKind: model.KindZone, Sync: updateZone},
		{Name: "createPod", Sync: createPod},
	}
}

// ZoneSpec is createZone's input.
type ZoneSpec struct {
	Name, NetworkType, DNS1, DNS2, InternalDNS1, InternalDNS2, GuestCIDR, Domain, Allocation string
	SecurityGroups, Edge                                                                     bool
}

func createZone(c *kernel.Call) (any, error) {
	p := c.Params
	z, err := MakeZone(c.State, ZoneSpec{Name: p.Get("name"), NetworkType: p.Get("networktype"), DNS1: p.Get("dns1"),
		DNS2: p.Get("dns2"), InternalDNS1: p.Get("internaldns1"), InternalDNS2: p.Get("internaldns2"),
		GuestCIDR: p.Get("guestcidraddress"), Domain: p.Get("domain"), Allocation: p.Get("allocationstate"),
		SecurityGroups: p.Bool("securitygroupenabled", false), Edge: p.Bool("isedge", false)}, c.Engine.Now())
	if err != nil {
		return nil, err
	}
	c.Changed()
	return map[string]any{"zone": views.ZoneView(c, z)}, nil
}

// MakeZone follows ConfigurationManagerImpl.createZone(CreateZoneCmd) and
// createZone(userId, ...): a new zone is Disabled unless told otherwise
// ("Admin should enable it after physical network and providers setup").
// Departure: only advanced zones without security groups are modelled, so
// Basic, security-group and edge zones are refused as not implemented.
func MakeZone(st *model.State, s ZoneSpec, now time.Time) (*model.Zone, error) {
	typ := s.NetworkType
	if !strings.EqualFold(typ, "Basic") && !strings.EqualFold(typ, "Advanced") {
		return nil, kernel.ParamError("Invalid zone type; only Advanced and Basic values are supported")
	}
	if strings.EqualFold(typ, "Basic") && s.GuestCIDR != "" {
		return nil, kernel.ParamError("guestCidrAddress parameter is not supported for Basic zone")
	}
	if strings.EqualFold(typ, "Basic") || s.SecurityGroups || s.Edge {
		return nil, kernel.NotImplemented("Basic, security-group and edge zones are not implemented by the CloudStack simulator")
	}
	if s.Allocation == "" {
		s.Allocation = model.AllocationDisabled
	}
	if s.GuestCIDR != "" && !netutils.ValidateGuestCIDR(s.GuestCIDR) {
		return nil, kernel.ParamError("Please enter a valid guest cidr")
	}
	if s.Domain != "" && !netutils.VerifyDomainName(s.Domain) {
		return nil, InvalidNetworkDomain()
	}
	if err := checkZoneParameters(st, s, true); err != nil {
		return nil, err
	}
	id, internal := st.NewID(model.KindZone)
	z := &model.Zone{ID: id, InternalID: internal, Name: s.Name, NetworkType: "Advanced", Allocation: s.Allocation,
		DNS1: s.DNS1, DNS2: s.DNS2, InternalDNS: s.InternalDNS1, InternalDNS2: s.InternalDNS2,
		GuestCIDR: s.GuestCIDR, Domain: s.Domain, Created: now,
		// createZone: UUID.nameUUIDFromBytes(zoneName + System.currentTimeMillis())
		Token: model.NameUUID(fmt.Sprintf("%s%d", s.Name, now.UnixMilli()))}
	st.Zones = append(st.Zones, z)
	st.EnsurePublicNetwork(z, now) // createZone's createDefaultSystemNetworks
	return z, nil
}

// InvalidNetworkDomain is the refusal of a network domain NetUtils.verifyDomainName rejects.
func InvalidNetworkDomain() *kernel.APIError {
	return kernel.ParamError("Invalid network domain. Total length shouldn't exceed 190 chars. Each domain label must be " +
		"between 1 and 63 characters long, can contain ASCII letters 'a' through 'z', the digits '0' through '9', " +
		"and the hyphen ('-'); can't start or end with \"-\"")
}

// checkZoneParameters is ConfigurationManagerImpl.checkZoneParameters.
func checkZoneParameters(st *model.State, s ZoneSpec, checkDuplicates bool) *kernel.APIError {
	if checkDuplicates && ZoneNamed(st, s.Name) != nil {
		return kernel.ParamError("A zone with that name already exists. Please specify a unique zone name.")
	}
	for _, ip := range []struct{ value, what string }{{s.DNS1, "DNS1"}, {s.DNS2, "DNS2"},
		{s.InternalDNS1, "internal DNS1"}, {s.InternalDNS2, "internal DNS2"}} {
		if ip.value != "" && !netutils.ValidIPv4(ip.value) {
			return kernel.ParamError("Please enter a valid IP address for %s", ip.what)
		}
	}
	return checkAllocationState(s.Allocation)
}

// checkAllocationState is Grouping.AllocationState.valueOf as the zone, pod
// and cluster commands use it: case-sensitive.
func checkAllocationState(state string) *kernel.APIError {
	if state != "" && state != model.AllocationEnabled && state != model.AllocationDisabled {
		return kernel.ParamError("Unable to resolve Allocation State '%s' to a supported state", state)
	}
	return nil
}

// updateZone follows ConfigurationManagerImpl.editZone for the parameters
// the simulator stores; enabling an advanced zone needs physical networks
// carrying Management and Public traffic, and adds Storage traffic to the
// management one when none carries it.
func updateZone(c *kernel.Call) (any, error) {
	p := c.Params
	z := c.State.Zone(p.Get("id"))
	if z == nil {
		return nil, kernel.ParamError("unable to find zone by id %s", p.Get("id"))
	}
	if cidr := p.Get("guestcidraddress"); cidr != "" && !netutils.ValidateGuestCIDR(cidr) {
		return nil, kernel.ParamError("Please enter a valid guest cidr")
	}
	if d := p.Get("domain"); d != "" && !netutils.VerifyDomainName(d) {
		return nil, InvalidNetworkDomain()
	}
	s := ZoneSpec{Name: model.Or(p.Get("name"), z.Name), DNS1: model.Or(p.Get("dns1"), z.DNS1), DNS2: model.Or(p.Get("dns2"), z.DNS2),
		InternalDNS1: model.Or(p.Get("internaldns1"), z.InternalDNS), InternalDNS2: model.Or(p.Get("internaldns2"), z.InternalDNS2),
		Allocation: p.Get("allocationstate")}
	if err := checkZoneParameters(c.State, s, !strings.EqualFold(s.Name, z.Name) && s.Name != z.Name); err != nil {
		return nil, err
	}
	if s.Allocation == model.AllocationEnabled {
		if err := CheckZoneCanBeEnabled(c.State, z); err != nil {
			return nil, err
		}
	}
	z.Name, z.DNS1, z.DNS2, z.InternalDNS, z.InternalDNS2 = s.Name, s.DNS1, s.DNS2, s.InternalDNS1, s.InternalDNS2
	z.GuestCIDR = model.Or(p.Get("guestcidraddress"), z.GuestCIDR)
	if p.Has("domain") {
		z.Domain = p.Get("domain")
	}
	if s.Allocation != "" {
		z.Allocation = s.Allocation
	}
	c.Changed()
	return map[string]any{"zone": views.ZoneView(c, z)}, nil
}

// CheckZoneCanBeEnabled is editZone's check before Enabled, with
// NetworkModelImpl.getDefaultPhysicalNetworkByZoneAndTrafficType's text.
func CheckZoneCanBeEnabled(st *model.State, z *model.Zone) *kernel.APIError {
	var mgmt *model.PhysicalNetwork
	for _, traffic := range []string{"Management", "Public"} {
		pns := model.PhysicalNetworksWithTraffic(st, z.ID, traffic)
		switch len(pns) {
		case 0:
			return kernel.ParamError("Cannot enable this Zone since: Unable to find the default physical network with traffic=%s in the specified zone id", traffic)
		case 1:
		default:
			return kernel.ParamError("Cannot enable this Zone since: More than one physical networks exist in zone id=%d with traffic type=%s", z.InternalID, traffic)
		}
		if traffic == "Management" {
			mgmt = pns[0]
		}
	}
	if len(model.PhysicalNetworksWithTraffic(st, z.ID, "Storage")) == 0 {
		model.AddTrafficTypeRow(st, mgmt, "Storage")
	}
	return nil
}

// PodSpec is createPod's input.
type PodSpec struct {
	ZoneID, Name, Gateway, Netmask, StartIP, EndIP, Allocation string
}

func createPod(c *kernel.Call) (any, error) {
	p := c.Params
	pod, err := MakePod(c.State, PodSpec{ZoneID: p.Get("zoneid"), Name: p.Get("name"), Gateway: p.Get("gateway"),
		Netmask: p.Get("netmask"), StartIP: p.Get("startip"), EndIP: p.Get("endip"),
		Allocation: p.Get("allocationstate")})
	if err != nil {
		return nil, err
	}
	c.Changed()
	return map[string]any{"pod": views.PodView(c, pod)}, nil
}

// MakePod follows ConfigurationManagerImpl.createPod (both overloads),
// checkPodRangeParametersBasicsForNonEdgeZone and checkPodAttributes
// (checkIpRange, checkOverlapPublicIpRange, checkPodCidrSubnets with
// check.pod.cidrs true, as advanced.cfg sets it). A pod is Enabled unless told otherwise; the end IP
// defaults to the end of the pod's CIDR.
func MakePod(st *model.State, s PodSpec) (*model.Pod, error) {
	z := st.Zone(s.ZoneID)
	if z == nil {
		return nil, kernel.ParamError("Please specify a valid zone.")
	}
	switch {
	case !netutils.ValidIPv4(s.StartIP):
		return nil, kernel.ParamError("The start IP is invalid")
	case s.EndIP != "" && !netutils.ValidIPv4(s.EndIP):
		return nil, kernel.ParamError("The end IP is invalid")
	case !netutils.ValidIPv4(s.Gateway):
		return nil, kernel.ParamError("The gateway is invalid")
	case !netutils.ValidNetmask(s.Netmask):
		return nil, kernel.ParamError("The netmask is invalid")
	}
	if s.Allocation == "" {
		s.Allocation = model.AllocationEnabled
	}
	if err := checkAllocationState(s.Allocation); err != nil {
		return nil, err
	}
	cidr, _ := netutils.CIDROf(s.Gateway, s.Netmask)
	if s.EndIP == "" {
		s.EndIP = model.LastAddr(cidr).String()
	}
	for _, other := range st.Pods {
		if other.ZoneID == z.ID && strings.EqualFold(other.Name, s.Name) {
			// checkPodAttributes
			return nil, kernel.ParamError("A pod with name: %s already exists in zone %d. Please specify a different pod name. ", s.Name, z.InternalID)
		}
	}
	switch {
	case !cidr.Contains(netutils.ParseAddr(s.StartIP)):
		return nil, kernel.ParamError("The start address of the IP range is not in the CIDR subnet.")
	case !cidr.Contains(netutils.ParseAddr(s.EndIP)):
		return nil, kernel.ParamError("The end address of the IP range is not in the CIDR subnet.")
	case netutils.IPLess(s.EndIP, s.StartIP):
		return nil, kernel.ParamError("The start IP address must have a lower value than the end IP address.")
	}
	if ip := publicIPIn(st, z.ID, s.StartIP, s.EndIP); ip != "" {
		// checkOverlapPublicIpRange
		return nil, kernel.ParamError("The Start IP and endIP address range overlap with Public IP :%s", ip)
	}
	if netutils.RangesOverlap(s.StartIP, s.EndIP, s.Gateway, s.Gateway) {
		return nil, kernel.ParamError("The gateway shouldn't overlap start/end ip addresses")
	}
	if err := checkPodCIDRSubnets(st, z, cidr.String()); err != nil {
		return nil, err
	}
	id, internal := st.NewID(model.KindPod)
	pod := &model.Pod{ID: id, InternalID: internal, Name: s.Name, ZoneID: z.ID, Gateway: s.Gateway, Netmask: s.Netmask,
		StartIP: s.StartIP, EndIP: s.EndIP, Allocation: s.Allocation}
	st.Pods = append(st.Pods, pod)
	return pod, nil
}

// publicIPIn is the lowest public address of the zone's ranges within
// start..end, or "".
func publicIPIn(st *model.State, zoneID, start, end string) string {
	for _, r := range st.VlanRanges {
		if r.ZoneID == zoneID && netutils.RangesOverlap(start, end, r.StartIP, r.EndIP) {
			if netutils.IPLess(r.StartIP, start) {
				return start
			}
			return r.StartIP
		}
	}
	return ""
}

// checkPodCIDRSubnets is ConfigurationManagerImpl.checkPodCidrSubnets: a new
// pod's subnet may not equal the zone's guest subnet or another pod's, each
// compared at the shorter prefix.
func checkPodCIDRSubnets(st *model.State, z *model.Zone, cidr string) *kernel.APIError {
	p, _ := netutils.ParseCIDR(cidr)
	same := func(other string) bool {
		o, ok := netutils.ParseCIDR(other)
		if !ok {
			return false
		}
		bits := min(p.Bits(), o.Bits())
		a, _ := p.Addr().Prefix(bits)
		b, _ := o.Addr().Prefix(bits)
		return a == b
	}
	if z.GuestCIDR != "" && same(z.GuestCIDR) {
		return kernel.ParamError("The subnet of the pod you are adding conflicts with the subnet of the Guest IP Network. Please specify a different CIDR.")
	}
	for _, other := range st.Pods {
		if other.ZoneID != z.ID {
			continue
		}
		if oc, ok := netutils.CIDROf(other.Gateway, other.Netmask); ok && same(oc.String()) {
			return kernel.ParamError("The subnet of the pod you are adding conflicts with the subnet of pod %s in zone %s. Please specify a different CIDR.", other.Name, z.Name)
		}
	}
	return nil
}

// ZoneNamed finds a zone by name, compared as MySQL compares them
// (case-insensitively); nil when none.
func ZoneNamed(st *model.State, name string) *model.Zone {
	for _, z := range st.Zones {
		if strings.EqualFold(z.Name, name) {
			return z
		}
	}
	return nil
}
