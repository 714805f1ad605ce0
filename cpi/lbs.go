package cpi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// lbs is the part that puts VMs behind the Go CPI's lbs and takes them
// away: public load-balancer rules on addresses it only looks up.
type lbs struct {
	callDeps
	cloud lbCloud
}

// lbCloud is what the load-balancer part asks of CloudStack.
type lbCloud interface {
	cloudstack.LoadBalancers
	cloudstack.PublicIPFinder
}

// leaveLBs takes a VM from behind its rules before it goes, and deletes
// the rules this director's CPI created that would have no VM left. Each
// rule is one step, deleted or left, so a retry after a crash finds the
// rest where they were. Removing an incomplete VM also deletes the rules
// its create_vm created that no VM is behind yet (killed or failed between
// createLoadBalancerRule and assignToLoadBalancerRule). A rule another
// create_vm is about to join may go meanwhile: that call's assign then
// fails and it makes the rule again (lbs.join).
func (c lbs) leaveLBs(vm *cloudstack.VM) error {
	mark, incomplete := vm.IncompleteMark()
	if !incomplete && !vm.HadLBs() {
		// Made without lbs, it is behind no rule of the CPI's; CloudStack
		// takes it from an operator's rule when it expunges it.
		return nil
	}
	rules, err := c.cloud.VMLBRules(vm.ID)
	if err != nil {
		return fmt.Errorf("listing the load-balancer rules of VM %s: %w", vm.ID, err)
	}
	behind := map[string]bool{}
	for _, r := range rules {
		behind[r.ID] = true
	}
	if incomplete {
		created, err := c.cloud.LBRulesCreatedFor(marks.LB{Director: mark.Director, Agent: mark.Agent})
		if err != nil {
			return fmt.Errorf("listing the load-balancer rules created for VM %s: %w", vm.ID, err)
		}
		for _, r := range created {
			if !behind[r.ID] {
				rules = append(rules, r)
			}
		}
	}
	for _, r := range rules {
		if err := c.leaveLB(vm, r, behind[r.ID]); err != nil {
			return err
		}
	}
	return nil
}

func (c lbs) leaveLB(vm *cloudstack.VM, r cloudstack.LBRule, behind bool) error {
	others, err := c.otherLBVMs(r.ID, vm.ID)
	if err != nil {
		return err
	}
	switch {
	case r.CreatedBy(c.ctx.DirectorUUID) && len(others) == 0:
		c.logger.Info("vm", "deleting load-balancer rule %s (%s on %s), which the CPI created and VM %s was the last "+
			"VM behind", r.ID, r.Name, r.PublicIP, vm.ID)
		return wrap(c.cloud.DeleteLBRule(r.ID), "deleting load-balancer rule %s (%s)", r.ID, r.Name)
	case behind:
		return wrap(c.cloud.RemoveFromLBRule(r.ID, vm.ID), "removing VM %s from load-balancer rule %s (%s)",
			vm.ID, r.ID, r.Name)
	}
	return nil
}

// otherLBVMs are the VMs behind a rule other than vmID.
func (c lbs) otherLBVMs(ruleID, vmID string) ([]string, error) {
	ids, err := c.cloud.LBRuleVMs(ruleID)
	if err != nil {
		return nil, fmt.Errorf("listing the VMs behind load-balancer rule %s: %w", ruleID, err)
	}
	return slices.DeleteFunc(ids, func(id string) bool { return strings.EqualFold(id, vmID) }), nil
}
