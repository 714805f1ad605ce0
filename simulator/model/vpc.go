package model

import "time"

// Entity kinds of the VPC family.
const (
	KindVPC            = "vpc"
	KindVPCOffering    = "vpcoffering"
	KindNetworkACLList = "networkacllist"
	KindNetworkACLItem = "networkaclitem"
)

// VPC states (Vpc.State) and the rule states an ACL item goes through
// (NetworkACLItem.State).
const (
	VPCEnabled  = "Enabled"
	VPCInactive = "Inactive"
)

// vpcTables are the VPC family's state tables. The state embeds them.
type vpcTables struct {
	VPCOfferings    []*VPCOffering    `json:"vpcofferings,omitempty"`
	VPCs            []*VPC            `json:"vpcs,omitempty"`
	NetworkACLLists []*NetworkACLList `json:"networkacllists,omitempty"`
	NetworkACLItems []*NetworkACLItem `json:"networkaclitems,omitempty"`
}

// VPCOffering is a row of vpc_offerings with its vpc_offering_service_map.
type VPCOffering struct {
	ID          string              `json:"id"`
	InternalID  int64               `json:"internalid"`
	Name        string              `json:"name"`
	DisplayText string              `json:"displaytext"`
	State       string              `json:"state"` // Enabled, Disabled
	IsDefault   bool                `json:"isdefault"`
	Redundant   bool                `json:"redundant,omitempty"`
	Services    map[string][]string `json:"services"` // service -> providers
	Created     time.Time           `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (o *VPCOffering) UUID() string { return o.ID }

// Has reports whether the offering provides service svc.
func (o *VPCOffering) Has(svc string) bool { _, ok := o.Services[svc]; return ok }

// VPC is a row of vpc.
type VPC struct {
	ID              string     `json:"id"`
	InternalID      int64      `json:"internalid"`
	Name            string     `json:"name"`
	DisplayText     string     `json:"displaytext"`
	ZoneID          string     `json:"zoneid"`
	OfferingID      string     `json:"vpcofferingid"`
	CIDR            string     `json:"cidr"`
	NetworkDomain   string     `json:"networkdomain"`
	AccountID       string     `json:"accountid"`
	State           string     `json:"state"` // Enabled, Inactive
	Display         bool       `json:"display"`
	RestartRequired bool       `json:"restartrequired,omitempty"`
	Created         time.Time  `json:"created"`
	Removed         *time.Time `json:"removed,omitempty"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (v *VPC) UUID() string { return v.ID }

// VPC is a VPC that is not removed, by UUID; nil when none.
func (st *State) VPC(id string) *VPC {
	v, ok := ByID(st.VPCs, id)
	if !ok || v.Removed != nil {
		return nil
	}
	return v
}

// ActiveVPC is VpcDao.getActiveVpcById: a VPC not removed and Enabled.
func (st *State) ActiveVPC(id string) *VPC {
	if v := st.VPC(id); v != nil && v.State == VPCEnabled {
		return v
	}
	return nil
}

// VPCTiers are the networks of a VPC (NetworkDao.listByVpc; the simulator
// removes no network).
func (st *State) VPCTiers(vpcID string) []*Network {
	var out []*Network
	for _, n := range st.Networks {
		if vpcID != "" && n.VPCID == vpcID {
			out = append(out, n)
		}
	}
	return out
}

// NetworkACLList is a row of network_acl. VPCID is empty for the global
// lists (vpc_id 0): default_allow and default_deny.
type NetworkACLList struct {
	ID          string `json:"id"`
	InternalID  int64  `json:"internalid"`
	Name        string `json:"name"`
	Description string `json:"description"`
	VPCID       string `json:"vpcid,omitempty"`
	Display     bool   `json:"display"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (l *NetworkACLList) UUID() string { return l.ID }

// NetworkACLItem is a row of network_acl_item.
type NetworkACLItem struct {
	ID          string    `json:"id"`
	InternalID  int64     `json:"internalid"`
	ACLID       string    `json:"aclid"`
	Number      int       `json:"number"`
	Protocol    string    `json:"protocol"`
	StartPort   *int      `json:"startport,omitempty"`
	EndPort     *int      `json:"endport,omitempty"`
	ICMPType    *int      `json:"icmptype,omitempty"`
	ICMPCode    *int      `json:"icmpcode,omitempty"`
	CIDRs       []string  `json:"cidrs"`
	TrafficType string    `json:"traffictype"` // Ingress, Egress
	Action      string    `json:"action"`      // Allow, Deny
	State       string    `json:"state"`       // Add, Active, Revoke
	Reason      string    `json:"reason,omitempty"`
	Display     bool      `json:"display"`
	Created     time.Time `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (i *NetworkACLItem) UUID() string { return i.ID }
