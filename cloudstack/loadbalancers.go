package cloudstack

import (
	"strconv"
	"strings"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// LBAlgorithms are the algorithms createLoadBalancerRule accepts
// (NetUtils.isValidAlgorithm, case-insensitive).
var LBAlgorithms = []string{"roundrobin", "leastconn", "source"}

// ValidLBAlgorithm says createLoadBalancerRule accepts the algorithm.
func ValidLBAlgorithm(a string) bool {
	for _, known := range LBAlgorithms {
		if strings.EqualFold(a, known) {
			return true
		}
	}
	return false
}

// LBRule is a public load-balancer rule.
type LBRule struct {
	ID          string
	Name        string
	Description string
	PublicIPID  string
	PublicIP    string
	NetworkID   string
	Algorithm   string
	PublicPort  int
	PrivatePort int
	Tags        map[string]string
}

// LBSpec is a rule to create. NetworkID is sent only for a VPC address
// that no tier has yet (CreateLoadBalancerRuleCmd's networkid: "Required
// when public Ip address is not associated with any Guest network yet").
type LBSpec struct {
	Name         string
	Algorithm    string
	PublicPort   int
	PrivatePort  int
	OpenFirewall bool
	PublicIPID   string
	NetworkID    string
	Mark         marks.LB
}

// Mark reads the rule's description mark (createLoadBalancerRule writes
// the description in the row it inserts, LoadBalancingRulesManagerImpl.
// createPublicLoadBalancer, so a rule is never the CPI's and unmarked);
// false for an operator's rule.
func (r *LBRule) Mark() (marks.LB, bool) { return marks.ReadLB(r.Description) }

// CreatedBy says this director's CPI created the rule.
func (r *LBRule) CreatedBy(director string) bool {
	m, ok := r.Mark()
	return ok && m.Director == director
}

// LBRulesOn implements LoadBalancers.
func (c *Client) LBRulesOn(publicIPID string) ([]LBRule, error) {
	p := c.cs.LoadBalancer.NewListLoadBalancerRulesParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetPublicipid(publicIPID)
	return c.listLBRules(p)
}

// NamedLBRule is the rule named exactly name among rules, or nil
// (CloudStack's own name filter ignores case, under MySQL's collation).
func NamedLBRule(rules []LBRule, name string) *LBRule {
	for i := range rules {
		if rules[i].Name == name {
			return &rules[i]
		}
	}
	return nil
}

// VMLBRules implements LoadBalancers. A VM id CloudStack no longer
// resolves is behind no rule.
func (c *Client) VMLBRules(vmID string) ([]LBRule, error) {
	p := c.cs.LoadBalancer.NewListLoadBalancerRulesParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetVirtualmachineid(vmID)
	rules, err := c.listLBRules(p)
	if IsNoSuchEntity(err) {
		return nil, nil
	}
	return rules, err
}

// LBRulesCreatedFor implements LoadBalancers. keyword matches the name or
// the description (LoadBalancingRulesManagerImpl.searchForLoadBalancers),
// as a LIKE: the marks are compared exactly below.
func (c *Client) LBRulesCreatedFor(m marks.LB) ([]LBRule, error) {
	p := c.cs.LoadBalancer.NewListLoadBalancerRulesParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetKeyword(m.Description())
	all, err := c.listLBRules(p)
	var out []LBRule
	for _, r := range all {
		if got, ok := r.Mark(); ok && got == m {
			out = append(out, r)
		}
	}
	return out, err
}

func (c *Client) listLBRules(p *csgo.ListLoadBalancerRulesParams) ([]LBRule, error) {
	p.SetListall(true)
	resp, err := c.cs.LoadBalancer.ListLoadBalancerRules(p)
	if err != nil {
		return nil, c.fail("listLoadBalancerRules", err)
	}
	out := make([]LBRule, 0, len(resp.LoadBalancerRules))
	for _, r := range resp.LoadBalancerRules {
		out = append(out, toLBRule(r))
	}
	return out, nil
}

// toLBRule reads LoadBalancerResponse, whose ports are strings.
func toLBRule(r *csgo.LoadBalancerRule) LBRule {
	pub, _ := strconv.Atoi(r.Publicport)
	priv, _ := strconv.Atoi(r.Privateport)
	return LBRule{ID: r.Id, Name: r.Name, Description: r.Description, PublicIPID: r.Publicipid, PublicIP: r.Publicip,
		NetworkID: r.Networkid, Algorithm: r.Algorithm, PublicPort: pub, PrivatePort: priv, Tags: tagMap(r.Tags)}
}

// CreateLBRule implements LoadBalancers. openfirewall is always sent:
// CloudStack's default is true outside a VPC (CreateLoadBalancerRuleCmd.
// getOpenFirewall). With it, createPublicLoadBalancerRule opens the
// firewall for the public port in the same call, as a firewall rule
// related to this one, which deleteLoadBalancerRule revokes with it
// (FirewallManagerImpl.createRuleForAllCidrs, DeleteLoadBalancerRuleCmd.
// execute: revokeRelatedFirewallRule, then deleteLoadBalancerRule); a
// firewall rule already open for that port (the operator's) is reused
// and never related, so it stays.
// The rule comes back even when the job or its tags failed, for cleanup.
func (c *Client) CreateLBRule(s LBSpec) (*LBRule, error) {
	p := c.cs.LoadBalancer.NewCreateLoadBalancerRuleParams(s.Algorithm, s.Name, s.PrivatePort, s.PublicPort)
	p.SetPublicipid(s.PublicIPID)
	p.SetOpenfirewall(s.OpenFirewall)
	p.SetDescription(s.Mark.Description())
	if s.NetworkID != "" {
		p.SetNetworkid(s.NetworkID)
	}
	r, err := c.cs.LoadBalancer.CreateLoadBalancerRule(p)
	if err != nil {
		return nil, c.fail("createLoadBalancerRule", err)
	}
	rule := &LBRule{ID: r.Id, Name: s.Name, Description: s.Mark.Description(), PublicIPID: s.PublicIPID,
		Algorithm: s.Algorithm, PublicPort: s.PublicPort, PrivatePort: s.PrivatePort}
	if _, err := c.waitJob("createLoadBalancerRule", r.JobID); err != nil {
		return rule, err
	}
	tags := map[string]string{marks.DirectorTag: s.Mark.Director, marks.LBCreatedTag: "true"}
	return rule, c.SetTags(ResourceLB, r.Id, nil, tags)
}

// LBRuleVMs implements LoadBalancers.
func (c *Client) LBRuleVMs(ruleID string) ([]string, error) {
	resp, err := c.cs.LoadBalancer.ListLoadBalancerRuleInstances(c.cs.LoadBalancer.NewListLoadBalancerRuleInstancesParams(ruleID))
	if err != nil {
		return nil, c.fail("listLoadBalancerRuleInstances", err)
	}
	ids := make([]string, 0, len(resp.LoadBalancerRuleInstances))
	for _, vm := range resp.LoadBalancerRuleInstances {
		ids = append(ids, vm.Id)
	}
	return ids, nil
}

// AssignToLBRule implements LoadBalancers. virtualmachineids, not
// vmidipmap: cloudstack-go sends vmidipmap as key/value pairs, in which
// CloudStack finds no vmid.
func (c *Client) AssignToLBRule(ruleID, vmID string) error {
	p := c.cs.LoadBalancer.NewAssignToLoadBalancerRuleParams(ruleID)
	p.SetVirtualmachineids([]string{vmID})
	r, err := c.cs.LoadBalancer.AssignToLoadBalancerRule(p)
	if err != nil {
		return c.fail("assignToLoadBalancerRule", err)
	}
	_, err = c.waitJob("assignToLoadBalancerRule", r.JobID)
	return err
}

// RemoveFromLBRule implements LoadBalancers.
func (c *Client) RemoveFromLBRule(ruleID, vmID string) error {
	p := c.cs.LoadBalancer.NewRemoveFromLoadBalancerRuleParams(ruleID)
	p.SetVirtualmachineids([]string{vmID})
	r, err := c.cs.LoadBalancer.RemoveFromLoadBalancerRule(p)
	if err != nil {
		return c.fail("removeFromLoadBalancerRule", err)
	}
	_, err = c.waitJob("removeFromLoadBalancerRule", r.JobID)
	return err
}

// DeleteLBRule implements LoadBalancers.
func (c *Client) DeleteLBRule(ruleID string) error {
	r, err := c.cs.LoadBalancer.DeleteLoadBalancerRule(c.cs.LoadBalancer.NewDeleteLoadBalancerRuleParams(ruleID))
	if err != nil {
		return c.fail("deleteLoadBalancerRule", err)
	}
	_, err = c.waitJob("deleteLoadBalancerRule", r.JobID)
	return err
}
