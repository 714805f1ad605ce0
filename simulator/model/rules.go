package model

import (
	"fmt"
	"strings"
	"time"
)

// FirewallRule.Purpose and FirewallRule.State values.
const (
	PurposeFirewall  = "Firewall"
	PurposeStaticNat = "StaticNat"
	PurposeLB        = "LoadBalancing"

	RuleAdd    = "Add"
	RuleActive = "Active"
	RuleRevoke = "Revoke"
)

// NetRule is a row of firewall_rules (FirewallRuleVO); a load balancer rule
// also has its load_balancing_rules part (LB). Removed rules stay, as
// CloudStack's rows do, so error texts can name their internal ids.
type NetRule struct {
	ID         string     `json:"id"`
	InternalID int64      `json:"internalid"`
	Purpose    string     `json:"purpose"`
	State      string     `json:"state"`
	IPID       string     `json:"ipaddressid"`
	NetworkID  string     `json:"networkid"`
	AccountID  string     `json:"accountid"`
	Protocol   string     `json:"protocol"`
	StartPort  *int       `json:"startport,omitempty"`
	EndPort    *int       `json:"endport,omitempty"`
	CIDRs      []string   `json:"cidrs,omitempty"` // source CIDRs (firewall_rules_cidrs)
	ICMPType   *int       `json:"icmptype,omitempty"`
	ICMPCode   *int       `json:"icmpcode,omitempty"`
	Related    string     `json:"related,omitempty"` // the rule an opened firewall rule belongs to
	System     bool       `json:"system,omitempty"`  // FirewallRuleType.System
	Display    bool       `json:"display"`
	LB         *LBRule    `json:"lb,omitempty"`
	Created    time.Time  `json:"created"`
	Removed    *time.Time `json:"removed,omitempty"`
}

// LBRule is LoadBalancerVO's own columns and its load_balancer_vm_map rows.
type LBRule struct {
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	Algorithm   string     `json:"algorithm"`
	PrivatePort int        `json:"privateport"`
	Protocol    string     `json:"protocol,omitempty"` // lb_protocol; empty when none was given
	CIDRList    string     `json:"cidrlist,omitempty"`
	Members     []LBMember `json:"members,omitempty"`
}

// LBMember is a LoadBalancerVMMapVO: one VM address behind the rule.
type LBMember struct {
	VMID string `json:"vmid"`
	VMIP string `json:"vmip"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (r *NetRule) UUID() string { return r.ID }

// ruleTables are the network rule family's state table.
type ruleTables struct {
	Rules []*NetRule `json:"netrules,omitempty"`
}

// Rule is a live (not removed) rule by UUID.
func (st *State) Rule(id string) *NetRule {
	r, ok := ByID(st.Rules, id)
	if !ok || r.Removed != nil {
		return nil
	}
	return r
}

// String is FirewallRuleVO.toString.
func (r *NetRule) String() string {
	return fmt.Sprintf("Rule[%d-%s-%s]", r.InternalID, r.Purpose, r.State)
}

// ViewState is ApiLoadBalancerFirewallResponseServiceImpl.getFirewallState:
// a revoked rule shows as Deleting.
func (r *NetRule) ViewState() string {
	if r.State == RuleRevoke {
		return "Deleting"
	}
	return r.State
}

// HasVM reports whether a VM is one of the rule's members.
func (lb *LBRule) HasVM(vmID string) bool {
	for _, m := range lb.Members {
		if strings.EqualFold(m.VMID, vmID) {
			return true
		}
	}
	return false
}

// DropVM removes every member entry of a VM.
func (lb *LBRule) DropVM(vmID string) {
	var keep []LBMember
	for _, m := range lb.Members {
		if !strings.EqualFold(m.VMID, vmID) {
			keep = append(keep, m)
		}
	}
	lb.Members = keep
}

// LBRule is a live load balancer rule by UUID.
func (st *State) LBRule(id string) *NetRule {
	if r := st.Rule(id); r != nil && r.Purpose == PurposeLB {
		return r
	}
	return nil
}

// RemoveMembers drops every mapping of the listed VMs and the named
// VM/address pairs.
func (lb *LBRule) RemoveMembers(ids []string, pairs []LBMember) {
	var keep []LBMember
	for _, m := range lb.Members {
		if !ContainsFold(ids, m.VMID) && !ContainsMember(pairs, m) {
			keep = append(keep, m)
		}
	}
	lb.Members = keep
}

// ContainsMember reports whether list has m (the same VM and IP).
func ContainsMember(list []LBMember, m LBMember) bool {
	for _, x := range list {
		if strings.EqualFold(x.VMID, m.VMID) && x.VMIP == m.VMIP {
			return true
		}
	}
	return false
}
