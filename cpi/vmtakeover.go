package cpi

import (
	"fmt"
	"strings"
)

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
func (v *vmCreation) takenOver(cause error) error {
	e := &takenOverError{agent: v.agentID, vmID: v.vmID, vmName: v.spec.Name, cause: cause}
	vms, err := v.vms.cloud.AgentVMs(v.vms.ctx.DirectorUUID, v.agentID)
	e.lookup = err
	for _, vm := range vms {
		if vm.ID != v.vmID && !vm.Gone() {
			e.others = append(e.others, fmt.Sprintf("%s (%s)", vm.ID, vm.Name))
		}
	}
	return e
}
