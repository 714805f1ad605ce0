package cpi

// create_vm's first execution step: the removal of this director's
// earlier attempts at the same VM that never finished.

import (
	"fmt"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// converge removes this director's VMs whose create_vm never finished and
// that stand in this one's way: the same agent_id (the director's retry),
// a requested static IP, or the requested vip (static NAT to it, or an
// intent to acquire it). The director's next attempt after a crash has a
// new agent_id but the same addresses, so they are what finds the
// leftover. A complete VM, another director's or the operator's is never
// touched: then explainAddress says who holds the address.
func (d *deployment) converge() error {
	c := d.vms
	vms, err := c.cloud.IncompleteVMs(c.ctx.DirectorUUID)
	if err != nil {
		return err
	}
	for _, vm := range vms {
		if !d.supersedes(vm) {
			continue
		}
		mark, _ := vm.IncompleteMark()
		c.logger.Warn("vm", "removing VM %s (%s, %s), left incomplete by an earlier create_vm for agent %s",
			vm.ID, vm.Name, vm.State, mark.Agent)
		if err := c.removeVM(vm); err != nil {
			return fmt.Errorf("removing VM %s (%s), left incomplete by an earlier create_vm for agent %s: %w",
				vm.ID, vm.Name, mark.Agent, err)
		}
	}
	return nil
}

// supersedes says an incomplete VM is an earlier attempt at this one.
func (d *deployment) supersedes(vm *cloudstack.VM) bool {
	mark, ok := vm.IncompleteMark()
	own := marks.NewVM(d.vms.ctx.DirectorUUID, "", d.plan.agentID)
	vip := d.plan.networks.vip
	switch {
	case !ok || mark.Director != own.Director:
		return false
	case mark.Agent == own.Agent:
		return true
	case vip != nil && (mark.VIP == vip.IP() || vm.PublicIP == vip.IP()):
		return true
	}
	for _, want := range d.spec.NICs {
		for _, nic := range vm.NICs {
			if want.IP != "" && nic.NetworkID == want.NetworkID && nic.IP == want.IP {
				return true
			}
		}
	}
	return false
}
