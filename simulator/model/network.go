package model

import (
	"strconv"
	"strings"
	"time"
)

// Network is a guest network.
type Network struct {
	ID                string    `json:"id"`
	InternalID        int64     `json:"internalid"`
	Name              string    `json:"name"`
	DisplayText       string    `json:"displaytext"`
	ZoneID            string    `json:"zoneid"`
	PhysicalNetworkID string    `json:"physicalnetworkid"`
	OfferingID        string    `json:"networkofferingid"`
	Type              string    `json:"type"`  // Isolated, Shared, L2
	State             string    `json:"state"` // Allocated, Implemented, ...
	Gateway           string    `json:"gateway"`
	Netmask           string    `json:"netmask"`
	CIDR              string    `json:"cidr"`
	VLAN              string    `json:"vlan"`
	NetworkDomain     string    `json:"networkdomain"`
	AccountID         string    `json:"accountid"`
	ACLType           string    `json:"acltype,omitempty"` // Account, Domain
	StartIP           string    `json:"startip,omitempty"` // a Shared network's range
	EndIP             string    `json:"endip,omitempty"`
	VPCID             string    `json:"vpcid,omitempty"`       // a VPC tier's VPC
	ACLID             string    `json:"aclid,omitempty"`       // a VPC tier's network ACL list
	TrafficType       string    `json:"traffictype,omitempty"` // Networks.TrafficType: empty is Guest; Public for a zone's public network (sysnetworks.go)
	Created           time.Time `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (n *Network) UUID() string { return n.ID }

// Network finds a network by UUID, removed or not; nil when none.
func (st *State) Network(id string) *Network { n, _ := ByID(st.Networks, id); return n }

// CanUseForDeploy is NetworkModelImpl.canUseForDeploy as the simulator's
// networks can be: Allocated, Setup or Implemented (not re-read).
func (n *Network) CanUseForDeploy() bool {
	return n.State == NetworkImplemented || n.State == NetworkAllocated || n.State == NetworkSetup
}

// NetworkOffering is a guest network offering.
type NetworkOffering struct {
	ID              string              `json:"id"`
	InternalID      int64               `json:"internalid"`
	Name            string              `json:"name"`
	DisplayText     string              `json:"displaytext"`
	GuestType       string              `json:"guestiptype"` // Isolated, Shared, L2
	Availability    string              `json:"availability"`
	State           string              `json:"state"` // Enabled, Disabled
	ConserveMode    bool                `json:"conservemode"`
	SpecifyVLAN     bool                `json:"specifyvlan"`
	SpecifyIPRanges bool                `json:"specifyipranges"`
	Persistent      bool                `json:"ispersistent"`
	EgressDefault   bool                `json:"egressdefaultpolicy"`
	ForVPC          bool                `json:"forvpc"`
	Tags            string              `json:"tags,omitempty"`
	Services        map[string][]string `json:"services"` // service -> providers
	Created         time.Time           `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (o *NetworkOffering) UUID() string { return o.ID }

// NetworkOffering finds a network offering by UUID; nil when none.
func (st *State) NetworkOffering(id string) *NetworkOffering {
	o, _ := ByID(st.NetworkOfferings, id)
	return o
}

// Has reports whether the offering provides service svc.
func (o *NetworkOffering) Has(svc string) bool { _, ok := o.Services[svc]; return ok }

// TrafficType is a traffic type carried by a physical network
// (PhysicalNetworkTrafficTypeVO).
type TrafficType struct {
	ID                string `json:"id"`
	InternalID        int64  `json:"internalid"`
	PhysicalNetworkID string `json:"physicalnetworkid"`
	Type              string `json:"traffictype"` // Guest, Management, Public, Storage
}

// UUID is the row's UUID, the key ByID finds it by.
func (t *TrafficType) UUID() string { return t.ID }

// NetworkServiceProvider is a provider on a physical network
// (PhysicalNetworkServiceProviderVO).
type NetworkServiceProvider struct {
	ID                string `json:"id"`
	InternalID        int64  `json:"internalid"`
	PhysicalNetworkID string `json:"physicalnetworkid"`
	Name              string `json:"name"`
	State             string `json:"state"` // Enabled, Disabled
}

// UUID is the row's UUID, the key ByID finds it by.
func (n *NetworkServiceProvider) UUID() string { return n.ID }

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

// UUID is the row's UUID, the key ByID finds it by.
func (e *VirtualRouterElement) UUID() string { return e.ID }

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

// UUID is the row's UUID, the key ByID finds it by.
func (p *PhysicalNetwork) UUID() string { return p.ID }

// VnetInRange reports whether a VLAN id lies in a physical network's guest
// VLAN ranges (DataCenterDao.findVnet).
func (p *PhysicalNetwork) VnetInRange(vlan string) bool {
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

// Update sets a checked state (empty keeps it) and guest VLAN ranges.
func (p *PhysicalNetwork) Update(state, vlan string) {
	if state != "" {
		p.State = state
	}
	p.VLAN = vlan
}

// PublicIP is a row of CloudStack's user_ip_address table: every address of
// a zone's public VLAN ranges has one, Free until associateIpAddress (or an
// isolated network's source NAT) takes it. The row and its UUID survive
// release, as in CloudStack.
type PublicIP struct {
	ID          string     `json:"id"`
	InternalID  int64      `json:"internalid"`
	Address     string     `json:"address"`
	ZoneID      string     `json:"zoneid"`
	VlanRangeID string     `json:"vlanrangeid"`
	State       string     `json:"state"` // Free, Allocating, Allocated
	AccountID   string     `json:"accountid,omitempty"`
	NetworkID   string     `json:"networkid,omitempty"` // the guest network it is associated with
	VPCID       string     `json:"vpcid,omitempty"`     // the VPC it belongs to; its tier comes on first use
	SourceNAT   bool       `json:"sourcenat,omitempty"`
	StaticNAT   bool       `json:"staticnat,omitempty"`
	VMID        string     `json:"vmid,omitempty"` // static NAT target
	VMIP        string     `json:"vmip,omitempty"`
	Allocated   *time.Time `json:"allocated,omitempty"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (ip *PublicIP) UUID() string { return ip.ID }

// Release returns the address to its range: Free, with nothing of its
// last owner kept.
func (ip *PublicIP) Release() {
	*ip = PublicIP{ID: ip.ID, InternalID: ip.InternalID, Address: ip.Address, ZoneID: ip.ZoneID,
		VlanRangeID: ip.VlanRangeID, State: IPFree}
}

// VlanRange is a public IP range of a zone.
type VlanRange struct {
	ID                string `json:"id"`
	InternalID        int64  `json:"internalid"`
	ZoneID            string `json:"zoneid"`
	PhysicalNetworkID string `json:"physicalnetworkid"`
	VLAN              string `json:"vlan"`
	Gateway           string `json:"gateway"`
	Netmask           string `json:"netmask"`
	CIDR              string `json:"cidr"`
	StartIP           string `json:"startip"`
	EndIP             string `json:"endip"`
	NetworkID         string `json:"networkid,omitempty"` // vlan.network_id: the zone's public network (empty in older states)
}

// UUID is the row's UUID, the key ByID finds it by.
func (v *VlanRange) UUID() string { return v.ID }

// SecurityGroup is an account's security group. The seeded advanced zone
// has security groups disabled, so deployVirtualMachine refuses them; the
// groups exist all the same, as in CloudStack.
type SecurityGroup struct {
	ID          string    `json:"id"`
	InternalID  int64     `json:"internalid"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	AccountID   string    `json:"accountid"`
	Created     time.Time `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (g *SecurityGroup) UUID() string { return g.ID }

// AddTrafficTypeRow adds a traffic type to a physical network, unchecked
// (PhysicalNetworkTrafficTypeDaoImpl.persist of a new row).
func AddTrafficTypeRow(st *State, pn *PhysicalNetwork, typ string) *TrafficType {
	id, internal := st.NewID(KindTrafficType)
	tt := &TrafficType{ID: id, InternalID: internal, PhysicalNetworkID: pn.ID, Type: typ}
	st.TrafficTypes = append(st.TrafficTypes, tt)
	return tt
}

// TrafficTypeOf is a physical network's traffic type of one kind; nil when
// it carries none (PhysicalNetworkTrafficTypeDaoImpl.findBy).
func TrafficTypeOf(st *State, physnetID, typ string) *TrafficType {
	for _, t := range st.TrafficTypes {
		if t.PhysicalNetworkID == physnetID && t.Type == typ {
			return t
		}
	}
	return nil
}

// PhysicalNetworksWithTraffic is PhysicalNetworkDao.listByZoneAndTrafficType.
func PhysicalNetworksWithTraffic(st *State, zoneID, typ string) []*PhysicalNetwork {
	var out []*PhysicalNetwork
	for _, pn := range st.PhysicalNetworks {
		if pn.ZoneID == zoneID && TrafficTypeOf(st, pn.ID, typ) != nil {
			out = append(out, pn)
		}
	}
	return out
}

// StaticNATOf is the public address static-NATed to a VM, if any.
func StaticNATOf(st *State, vmID string) *PublicIP {
	for _, ip := range st.PublicIPs {
		if ip.StaticNAT && strings.EqualFold(ip.VMID, vmID) {
			return ip
		}
	}
	return nil
}
