package cpi

// create_vm's load-balancer rules (the Go CPI's lbs): every entry checked
// before anything is made (after the convergence, which may take an
// earlier attempt's rules away), the VM put behind each once it is
// deployed.

import (
	"fmt"
	"slices"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// lbPlan is an entry resolved before the deploy: the address, the rule if
// it exists, and the network createLoadBalancerRule needs to be told.
type lbPlan struct {
	prop      vmtype.LB
	addr      *cloudstack.PublicIP
	rule      *cloudstack.LBRule
	networkID string
}

// lbNetwork decides, for an allocated address, the network its rule is
// for, and refuses what CloudStack would refuse once the VM exists:
// load balancing an address with static NAT (createPublicLoadBalancer:
// "Can't do load balance on ip address"; the vip gets static NAT), port 53
// on a source NAT address (createPublicLoadBalancerRule, on networks with
// the virtual router's DNS), openfirewall on a VPC address
// (CreateLoadBalancerRuleCmd.getOpenFirewall), and a VM with no NIC on the
// rule's network (assignToLoadBalancer: "doesn't belong in the same
// network"). The network is sent only for a VPC address no tier has yet.
func lbNetwork(l vmtype.LB, addr *cloudstack.PublicIP, vip string, nics []nicPlan) (string, error) {
	on := func(pick func(cloudstack.Network) bool) (string, bool) {
		i := slices.IndexFunc(nics, func(n nicPlan) bool { return pick(n.network) })
		if i < 0 {
			return "", false
		}
		return nics[i].network.ID, true
	}
	switch {
	case l.PublicIP == vip:
		return "", fmt.Errorf("%s: %s is this VM's vip, which gets static NAT, and CloudStack does not load-balance "+
			"an address with static NAT", l, l.PublicIP)
	case addr == nil:
		return "", fmt.Errorf("%s: %s is not an allocated public IP address of this account in the VM's zone: "+
			"allocate it (associateIpAddress) first", l, l.PublicIP)
	case addr.StaticNAT:
		return "", fmt.Errorf("%s: %s is static NAT to VM %s, and CloudStack does not load-balance an address with "+
			"static NAT", l, l.PublicIP, addr.VMID)
	case addr.SourceNAT && l.PublicPort == 53:
		return "", fmt.Errorf("%s: port 53 on %s, the source NAT address of its network: CloudStack keeps it for the "+
			"virtual router's DNS", l, l.PublicIP)
	case addr.VPCID != "" && bool(l.OpenFirewall):
		return "", fmt.Errorf("%s: %s is an address of a VPC, whose traffic network ACLs allow: CloudStack refuses "+
			"open_firewall there; set it to false", l, l.PublicIP)
	case addr.NetworkID != "":
		if _, ok := on(func(n cloudstack.Network) bool { return n.ID == addr.NetworkID }); !ok {
			return "", fmt.Errorf("%s: %s is an address of CloudStack network %s, on which this VM has no NIC: "+
				"CloudStack puts only VMs of the address's network behind its rules", l, l.PublicIP, addr.NetworkID)
		}
		return "", nil
	case addr.VPCID != "":
		id, ok := on(func(n cloudstack.Network) bool { return n.VPCID == addr.VPCID })
		if !ok {
			return "", fmt.Errorf("%s: %s is an address of VPC %s, and this VM has no NIC on a tier of it", l,
				l.PublicIP, addr.VPCID)
		}
		return id, nil
	}
	return "", fmt.Errorf("%s: %s is not associated with a network yet: CloudStack cannot put a rule on it", l,
		l.PublicIP)
}

// existingRule picks the entry's rule among the address's rules: the one
// of its name, which must have its ports (else the VM would be behind the
// wrong port), or none, when no other rule has its public port
// (createPublicLoadBalancer's detectRulesConflict would refuse it).
func existingRule(l vmtype.LB, rules []cloudstack.LBRule) (*cloudstack.LBRule, error) {
	if r := cloudstack.NamedLBRule(rules, l.Name); r != nil {
		if r.PublicPort != l.PublicPort || r.PrivatePort != l.PrivatePort {
			return nil, fmt.Errorf("%s: rule %s of that name exists on %s with public port %d and private port %d, "+
				"not %d and %d: rename the entry or change the rule", l, r.ID, l.PublicIP, r.PublicPort, r.PrivatePort,
				l.PublicPort, l.PrivatePort)
		}
		return r, nil
	}
	for _, r := range rules {
		if r.PublicPort == l.PublicPort {
			return nil, fmt.Errorf("%s: rule %s (%q) on %s already has public port %d: CloudStack allows one rule per "+
				"address and port", l, r.ID, r.Name, l.PublicIP, l.PublicPort)
		}
	}
	return nil, nil
}

// planLBs resolves every entry before anything is created.
func (d *deployment) planLBs() error {
	vip := ""
	if d.plan.networks.vip != nil {
		vip = d.plan.networks.vip.IP()
	}
	plans, err := d.vms.lbs.plan(d.plan.props.LBs, d.spec.ZoneID, vip, d.plan.networks.nics)
	d.lbs = plans
	return err
}

// joinLBs puts the VM behind each entry's rule, creating the rule when it
// is missing; a rule it creates carries the VM's mark (lbMark).
func (d *deployment) joinLBs() error {
	for _, p := range d.lbs {
		if err := d.vms.lbs.join(p, d.vm.ID, d.lbMark()); err != nil {
			return err
		}
	}
	return nil
}

// lbMark is what a rule this create_vm creates says of it: the same
// director and agent as the VM's incomplete mark, which is how the VM's
// removal finds a rule created before the VM was behind it.
func (d *deployment) lbMark() marks.LB {
	return marks.LB{Director: d.mark.Director, Agent: d.mark.Agent}
}

// plan resolves the entries in a zone for a VM with the vip and NICs: each
// entry's address, its rule if it exists, and the network the rule needs.
func (c lbs) plan(entries []vmtype.LB, zoneID, vip string, nics []nicPlan) ([]lbPlan, error) {
	var plans []lbPlan
	for _, l := range entries {
		addr, err := c.cloud.FindPublicIP(zoneID, l.PublicIP)
		if err != nil {
			return plans, fmt.Errorf("%s: looking up the address: %w", l, err)
		}
		network, err := lbNetwork(l, addr, vip, nics)
		if err != nil {
			return plans, vmCreationRefused(err)
		}
		rules, err := c.cloud.LBRulesOn(addr.ID)
		if err != nil {
			return plans, fmt.Errorf("%s: listing the address's load-balancer rules: %w", l, err)
		}
		rule, err := existingRule(l, rules)
		if err != nil {
			return plans, vmCreationRefused(err)
		}
		plans = append(plans, lbPlan{prop: l, addr: addr, rule: rule, networkID: network})
	}
	return plans, nil
}

// join assigns the VM to the entry's rule. When the assign fails and the
// rule is gone (the delete_vm of its last VM, running beside this call,
// deleted it after plan found it), the rule is made again once.
func (c lbs) join(p lbPlan, vmID string, mark marks.LB) error {
	rule := p.rule
	for again := false; ; again = true {
		if rule == nil {
			var err error
			if rule, err = c.create(p, mark); err != nil {
				return err
			}
		}
		err := c.cloud.AssignToLBRule(rule.ID, vmID)
		if err == nil {
			return nil
		}
		if !again && p.rule != nil && c.gone(p, rule.ID) {
			c.logger.Warn("vm", "%s: load-balancer rule %s went while VM %s was joining it; making it again",
				p.prop, rule.ID, vmID)
			rule = nil
			continue
		}
		return fmt.Errorf("%s: assigning VM %s to load-balancer rule %s: %w", p.prop, vmID, rule.ID, err)
	}
}

// gone says the address no longer has the rule (a failed listing says
// nothing).
func (c lbs) gone(p lbPlan, ruleID string) bool {
	rules, err := c.cloud.LBRulesOn(p.addr.ID)
	return err == nil && !slices.ContainsFunc(rules, func(r cloudstack.LBRule) bool { return r.ID == ruleID })
}

// create creates the entry's rule, carrying mark. After a lost answer, or
// when another create_vm made the rule meanwhile (the same lbs in
// parallel), the rule of that name on the address is the one.
func (c lbs) create(p lbPlan, mark marks.LB) (*cloudstack.LBRule, error) {
	spec := cloudstack.LBSpec{Name: p.prop.Name, Algorithm: p.prop.Algorithm, PublicPort: p.prop.PublicPort,
		PrivatePort: p.prop.PrivatePort, OpenFirewall: bool(p.prop.OpenFirewall), PublicIPID: p.addr.ID,
		NetworkID: p.networkID, Mark: mark}
	created, err := c.cloud.CreateLBRule(spec)
	if err != nil && created == nil {
		if rules, listErr := c.cloud.LBRulesOn(p.addr.ID); listErr == nil {
			if found := cloudstack.NamedLBRule(rules, p.prop.Name); found != nil {
				return found, nil
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: creating the load-balancer rule: %w", p.prop, err)
	}
	return created, nil
}
