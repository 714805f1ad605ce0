package cpi

// What a failed create_vm undoes, and how its failure is typed for the
// director: the VM and what hangs on it, the vip, registry settings, the
// config drive; a VM another create_vm for the same agent took over.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// cleanup removes what this create_vm made and returns the cause typed for
// the director; what could not be removed is added to its text, and then
// the director must not retry blindly. The VM is looked up afresh: the
// deploy's answer may have been lost, and static NAT came after it.
func (d *deployment) cleanup(cause error) error {
	// The ISO's upload may not be settled yet: its deletion waits.
	d.vms.drives.settle = uploadSettlePatience
	c := d.vms
	var problems []string
	note := func(what string, err error) {
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", what, err))
		}
	}
	var removed []string
	vm, err := d.madeVM()
	note(fmt.Sprintf("looking up VM %s", firstOf(d.vmID, d.spec.Name)), err)
	if err == nil && d.vmID != "" && (vm == nil || vm.Gone()) {
		cause = d.takenOver(cause)
	}
	switch {
	case vm != nil:
		// Its vip (acquired, or intended and untagged), settings,
		// ephemeral disk and config drive go with it.
		// Once a job of this call has had job_timeout, waiting as long
		// again for the job that holds the VM would only double the wait:
		// CloudStack runs the destroy after that job anyway.
		err := d.removeMadeVM(vm, !cloudstack.IsJobTimeout(cause))
		note("removing VM "+vm.ID, err)
		if err == nil {
			removed = append(removed, fmt.Sprintf("VM %s (%s), with its ephemeral disk, any config drive ISO and any "+
				"public IP acquired for it", vm.ID, vm.Name))
		}
	case d.ipID != "":
		note("releasing public IP "+d.plan.networks.vip.IP(), c.cloud.ReleasePublicIP(d.ipID))
	}
	if d.registry && vm == nil {
		if reg, err := c.registryClient(); err == nil {
			note("deleting registry settings", reg.Delete(d.spec.Name))
		}
	}
	if vm == nil || !hasConfigDrive(vm) {
		// Else the VM's removal took its ISO.
		removed = d.cleanupDrive(c.drives, note, removed)
	}
	if len(problems) == 0 {
		c.logger.Warn("vm", "create_vm failed and was cleaned up: %s", cause)
		return d.cleanedUp(cause, removed)
	}
	c.logger.Error("vm", "create_vm failed and its cleanup failed too: %s", strings.Join(problems, "; "))
	err = vmCreationFailed(fmt.Errorf("%w; cleanup left things behind: %s", cause, strings.Join(problems, "; ")))
	var typed *Error
	if errors.As(err, &typed) {
		typed.retry = false // a retry would meet what is left
	}
	return err
}

// removeMadeVM removes the VM this call deployed, with its registry
// settings only when they may be there: a registry that refused them or
// was never reached holds none, and may well refuse their deletion too.
// It waits for a job that holds the VM to end only when settle is set;
// else the VM is removed as it is.
func (d *deployment) removeMadeVM(vm *cloudstack.VM, settle bool) error {
	c := d.vms
	if settle {
		var err error
		if vm, err = c.settledVM(vm); err != nil || vm == nil {
			return err
		}
	}
	if d.registry {
		if err := c.forgetSettings(vm.Name); err != nil {
			return err
		}
	}
	return c.removeSettledVM(vm)
}

// cleanedUp types a failure whose cleanup left nothing. An answer lost on
// the way back (CloudStack unreachable in the middle of the call), or a
// job a management server restart cut short, is worth the director's
// retry once what CloudStack did anyway is removed.
func (d *deployment) cleanedUp(cause error, removed []string) error {
	err := cause
	if len(removed) > 0 {
		err = fmt.Errorf("%w; removed what this create_vm had made: %s", cause, strings.Join(removed, ", "))
	}
	err = vmCreationFailed(err)
	var typed *Error
	if errors.As(err, &typed) && (cloudstack.IsUnreachable(cause) || cloudstack.IsJobInterrupted(cause) ||
		driveTransferFailed(cause)) {
		typed.retry = true
	}
	return err
}

// madeVM is the VM this call deployed as CloudStack has it now, or nil.
// When the deploy's answer was lost, CloudStack may have the VM anyway:
// its host name, unique to this call, finds it.
func (d *deployment) madeVM() (*cloudstack.VM, error) {
	switch {
	case d.vmID != "":
		return d.vms.cloud.FindVM(d.vmID)
	case d.deployed:
		return d.vms.cloud.FindVM(d.spec.Name)
	}
	return nil, nil
}

// takenOverError is the failure of a create_vm whose VM another create_vm
// removed while it ran. converge removes a VM that an unfinished create_vm
// for the same agent_id (or with the same static IP or vip) left, so of two
// create_vm for one agent at once the later takes over, and the earlier's
// next step meets a VM that is gone. Its cleanup then leaves nothing, but a
// retry would in turn remove the other's VM, so it is never ok_to_retry.
// The cause is kept as text, not wrapped: its type (a CloudError, a lost
// answer, a job timeout) is no longer what the director should act on,
// and none of it may make the failure ok_to_retry.
type takenOverError struct {
	agent, vmID, vmName string
	others              []string // the other create_vm's VMs, as "id (name)"
	lookup              error    // why the others are not known
	cause               error    // the step that met the missing VM
}

func (e *takenOverError) Error() string {
	vm := fmt.Sprintf("VM %s (%s), which this create_vm had deployed", e.vmID, e.vmName)
	switch {
	case len(e.others) > 0:
		return fmt.Sprintf("another create_vm for agent %s took over: it removed %s, and VM %s is the other's; "+
			"this create_vm then failed: %v", e.agent, vm, strings.Join(e.others, ", VM "), e.cause)
	case e.lookup != nil:
		return fmt.Sprintf("%s, was removed while it ran, most likely by another create_vm for agent %s, which "+
			"takes over (looking for its VM failed: %v); this create_vm then failed: %v", vm, e.agent, e.lookup, e.cause)
	}
	return fmt.Sprintf("%s, was removed while it ran: another create_vm for agent %s (or for the same static IP "+
		"or vip) took over, or it was deleted outside BOSH; this create_vm then failed: %v", vm, e.agent, e.cause)
}

// takenOver explains cause once the VM this call deployed is gone (or
// Destroyed) while no step of this call removed it, naming the VMs
// CloudStack has for the same agent.
func (d *deployment) takenOver(cause error) error {
	e := &takenOverError{agent: d.plan.agentID, vmID: d.vmID, vmName: d.spec.Name, cause: cause}
	vms, err := d.vms.cloud.AgentVMs(d.vms.ctx.DirectorUUID, d.plan.agentID)
	e.lookup = err
	for _, vm := range vms {
		if vm.ID != d.vmID && !vm.Gone() {
			e.others = append(e.others, fmt.Sprintf("%s (%s)", vm.ID, vm.Name))
		}
	}
	return e
}
