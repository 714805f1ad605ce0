package simulator

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

func init() {
	register(
		command{name: "startVirtualMachine", idKind: model.KindVM, async: startVirtualMachine},
		command{name: "stopVirtualMachine", idKind: model.KindVM, async: stopVirtualMachine},
		command{name: "rebootVirtualMachine", idKind: model.KindVM, async: rebootVirtualMachine},
	)
}

// vmJob is an async VM command's job. CloudStack checks the VM inside the
// job, so a VM that is gone fails the job (431), not the request, with the
// command's own text: UserVmDao.findById skips expunged rows, and the texts
// name the internal id.
func (c *Call) vmJob(class, notFound string) (*asyncJob, *model.VirtualMachine) {
	id := c.Params.Get("id")
	job := &asyncJob{instanceType: "VirtualMachine", instanceID: strings.ToLower(id),
		cmdClass: "org.apache.cloudstack.api.command." + class}
	vm, err := c.liveVM("id", notFound)
	if err != nil {
		return job.failing(err), nil
	}
	return job, vm
}

// liveVM is the VM the parameter names. One unknown or expunged
// (UserVmDao.findById skips removed rows) is the command's own notFound
// text with the VM's internal id, or the parameter where no VM has it.
func (c *Call) liveVM(param, notFound string) (*model.VirtualMachine, error) {
	id := c.Params.Get(param)
	vm, ok := model.ByID(c.st.VMs, id)
	if ok && vm.Removed == nil {
		return vm, nil
	}
	if ok {
		id = fmt.Sprint(vm.InternalID)
	}
	return nil, paramError("%s %s", notFound, id)
}

// vmResult is the job result of the VM commands.
func (c *Call) vmResult(vm *model.VirtualMachine) (any, error) {
	return map[string]any{"virtualmachine": c.vmView(vm)}, nil
}

// transition sets a transitional state for the job's duration; a failed
// job puts the previous state back.
func (c *Call) transition(job *asyncJob, vm *model.VirtualMachine, during string) {
	previous := vm.State
	vm.State = during
	c.changed()
	job.fail = func(*APIError) { vm.State = previous }
}

// startVirtualMachine is UserVmManagerImpl.startVirtualMachine(StartVMCmd)
// inside the job: a Running VM is refused with InvalidParameterValueException
// (431), then VirtualMachineManagerImpl.changeToStartState takes a Stopped VM
// to Starting and Running (or back to Stopped with a 533 when no host
// fits); a VM in a transitional state fails with "There are concurrent
// operations on ..." and any other state (Destroyed, Error, ...) with
// "Cannot start <vm> in <state> state", both 530.
func startVirtualMachine(c *Call) (*asyncJob, error) {
	job, vm := c.vmJob("admin.vm.StartVMCmdByAdmin", "unable to find a virtual machine with id")
	if vm == nil {
		return job, nil
	}
	switch vm.State {
	case model.VMRunning:
		text := fmt.Sprintf("The virtual machine %s (%s) is already running", vm.ID, vm.DisplayNameOrHostName())
		job.run = func() (any, error) { return nil, paramError("%s", text) }
	case model.VMStopped:
		c.transition(job, vm, model.VMStarting)
		hostID := c.Params.Get("hostid")
		job.run = func() (any, error) {
			if err := checkDestinationHost(c.st, vm, hostID); err != nil {
				return nil, err
			}
			if err := c.startOn(vm, hostID); err != nil {
				return nil, err
			}
			return c.vmResult(vm)
		}
	default:
		text := fmt.Sprintf("Cannot start %s in %s state", vmString(vm), vm.State)
		if isTransitional(vm.State) {
			text = "There are concurrent operations on " + vmString(vm)
		}
		job.run = func() (any, error) { return nil, internalError("%s", text) }
	}
	return job, nil
}

// checkDestinationHost is the hostid part of startVirtualMachine
// (getDestinationHost, then the capability and capacity check): the host
// must be Enabled and Up, and, allow.deploy.vm.if.deploy.on.given.host.fails
// being false by default, have the cores, speed and free capacity for the
// VM; both refusals are InvalidParameterValueExceptions (431).
func checkDestinationHost(st *model.State, vm *model.VirtualMachine, hostID string) error {
	h, ok := model.ByID(st.Hosts, hostID)
	if hostID == "" || !ok {
		return nil
	}
	if h.ResourceState != model.ResourceEnabled || h.State != model.HostUp {
		return paramError("Unable to deploy the VM as the host: %s is not in the right state", h.Name)
	}
	capable := vm.CPUNumber <= h.CPUNumber && int64(vm.CPUSpeed) <= h.CPUSpeed
	cpu, mem := allocation(st, h.ID)
	room := cpu+int64(vm.CPUNumber)*int64(vm.CPUSpeed) <= int64(h.CPUNumber)*h.CPUSpeed && mem+int64(vm.Memory)<<20 <= h.MemoryTotal
	if !capable || !room {
		return paramError("Cannot deploy the VM to specified host %d; host has cpu capability? %v, host has capacity? %v",
			h.InternalID, capable, room)
	}
	return nil
}

// isTransitional is VirtualMachine.State.isTransitional (the states built
// with transitional=true).
func isTransitional(state string) bool {
	switch state {
	case model.VMStarting, model.VMStopping, model.VMMigrating, model.VMExpunging, "Restoring":
		return true
	}
	return false
}

// stopVM moves a VM off its host.
func (c *Call) stopVM(vm *model.VirtualMachine) {
	vm.Stop()
	c.changed()
}

// stopVirtualMachine is UserVmManagerImpl.stopVirtualMachine(vmId, forced)
// and VirtualMachineManagerImpl.advanceStop: a VM that is Stopped,
// Destroyed, Expunging or in Error is returned as it is; a VM without a host
// (Starting before placement) is refused with "Unable to stop <vm>" (530)
// unless forced, which marks it Stopped; any other VM is Stopping during
// the job, then Stopped. The simulator's guests always answer the
// StopCommand, so forced changes nothing else.
func stopVirtualMachine(c *Call) (*asyncJob, error) {
	job, vm := c.vmJob("admin.vm.StopVMCmdByAdmin", "unable to find a virtual machine with id")
	if vm == nil {
		return job, nil
	}
	forced := c.Params.Bool("forced", false)
	switch {
	case vm.State == model.VMStopped || vm.State == model.VMDestroyed || vm.State == model.VMExpunging || vm.State == model.VMError:
		job.run = func() (any, error) { return c.vmResult(vm) }
	case vm.HostID == "" && !forced:
		text := "Unable to stop " + vmString(vm)
		job.run = func() (any, error) { return nil, internalError("%s", text) }
	default:
		c.transition(job, vm, model.VMStopping)
		job.run = func() (any, error) {
			c.stopVM(vm)
			return c.vmResult(vm)
		}
	}
	return job, nil
}

// rebootVirtualMachine is UserVmManagerImpl.rebootVirtualMachine(RebootVMCmd)
// in the job: a VM that is not Running is refused with
// InvalidParameterValueException (431); one the internal reboot does not
// find on a host makes RebootVMCmd answer "Failed to reboot vm instance"
// (530, RebootVMCmd.execute).
func rebootVirtualMachine(c *Call) (*asyncJob, error) {
	job, vm := c.vmJob("admin.vm.RebootVMCmdByAdmin", "Unable to find a virtual machine with id")
	if vm == nil {
		return job, nil
	}
	job.run = func() (any, error) {
		if vm.State != model.VMRunning {
			return nil, paramError("The VM %s (%s) is not running, unable to reboot it", vm.ID, vm.DisplayNameOrHostName())
		}
		if vm.HostID == "" { // a ServerApiException: cserrorcode 9999
			return nil, &APIError{Code: codeInternalError, CSCode: csServerAPIException, Text: "Failed to reboot vm instance"}
		}
		return c.vmResult(vm)
	}
	return job, nil
}
