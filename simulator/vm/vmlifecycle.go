package vm

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/storage"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// vmLifecycleCommands are the commands of vmlifecycle.go (registerCommands).
func vmLifecycleCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "startVirtualMachine", IDKind: model.KindVM, Async: startVirtualMachine},
		{Name: "stopVirtualMachine", IDKind: model.KindVM, Async: stopVirtualMachine},
		{Name: "rebootVirtualMachine", IDKind: model.KindVM, Async: rebootVirtualMachine},
	}
}

// vmJob is an async VM command's job. CloudStack checks the VM inside the
// job, so a VM that is gone fails the job (431), not the request, with the
// command's own text: UserVmDao.findById skips expunged rows, and the texts
// name the internal id.
func vmJob(c *kernel.Call, class, notFound string) (*kernel.AsyncJob, *model.VirtualMachine) {
	id := c.Params.Get("id")
	job := &kernel.AsyncJob{InstanceType: "VirtualMachine", InstanceID: strings.ToLower(id),
		CmdClass: "org.apache.cloudstack.api.command." + class}
	vm, err := liveVM(c, "id", notFound)
	if err != nil {
		return job.Failing(err), nil
	}
	return job, vm
}

// liveVM is the VM the parameter names. One unknown or expunged
// (UserVmDao.findById skips removed rows) is the command's own notFound
// text with the VM's internal id, or the parameter where no VM has it.
func liveVM(c *kernel.Call, param, notFound string) (*model.VirtualMachine, error) {
	id := c.Params.Get(param)
	vm, ok := model.ByID(c.State.VMs, id)
	if ok && vm.Removed == nil {
		return vm, nil
	}
	if ok {
		id = fmt.Sprint(vm.InternalID)
	}
	return nil, kernel.ParamError("%s %s", notFound, id)
}

// vmResult is the job result of the VM commands.
func vmResult(c *kernel.Call, vm *model.VirtualMachine) (any, error) {
	return map[string]any{"virtualmachine": views.VMView(c, vm)}, nil
}

// transition sets a transitional state for the job's duration; a failed
// job puts the previous state back.
func transition(c *kernel.Call, job *kernel.AsyncJob, vm *model.VirtualMachine, during string) {
	previous := vm.State
	vm.State = during
	c.Changed()
	job.Fail = func(*kernel.APIError) { vm.State = previous }
}

// startVirtualMachine is UserVmManagerImpl.startVirtualMachine(StartVMCmd)
// inside the job: a Running VM is refused with InvalidParameterValueException
// (431), then VirtualMachineManagerImpl.changeToStartState takes a Stopped VM
// to Starting and Running (or back to Stopped with a 533 when no host
// fits); a VM in a transitional state fails with "There are concurrent
// operations on ..." and any other state (Destroyed, Error, ...) with
// "Cannot start <vm> in <state> state", both 530.
func startVirtualMachine(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, vm := vmJob(c, "admin.vm.StartVMCmdByAdmin", "unable to find a virtual machine with id")
	if vm == nil {
		return job, nil
	}
	switch vm.State {
	case model.VMRunning:
		text := fmt.Sprintf("The virtual machine %s (%s) is already running", vm.ID, vm.DisplayNameOrHostName())
		job.Run = func() (any, error) { return nil, kernel.ParamError("%s", text) }
	case model.VMStopped:
		transition(c, job, vm, model.VMStarting)
		hostID := c.Params.Get("hostid")
		job.Run = func() (any, error) {
			if err := checkDestinationHost(c.State, vm, hostID); err != nil {
				return nil, err
			}
			if err := startOn(c, vm, hostID); err != nil {
				return nil, err
			}
			return vmResult(c, vm)
		}
	default:
		text := fmt.Sprintf("Cannot start %s in %s state", storage.VMString(vm), vm.State)
		if isTransitional(vm.State) {
			text = "There are concurrent operations on " + storage.VMString(vm)
		}
		job.Run = func() (any, error) { return nil, kernel.InternalError("%s", text) }
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
		return kernel.ParamError("Unable to deploy the VM as the host: %s is not in the right state", h.Name)
	}
	capable := vm.CPUNumber <= h.CPUNumber && int64(vm.CPUSpeed) <= h.CPUSpeed
	cpu, mem := model.Allocation(st, h.ID)
	room := cpu+int64(vm.CPUNumber)*int64(vm.CPUSpeed) <= int64(h.CPUNumber)*h.CPUSpeed && mem+int64(vm.Memory)<<20 <= h.MemoryTotal
	if !capable || !room {
		return kernel.ParamError("Cannot deploy the VM to specified host %d; host has cpu capability? %v, host has capacity? %v",
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
func stopVM(c *kernel.Call, vm *model.VirtualMachine) {
	vm.Stop()
	c.Changed()
}

// stopVirtualMachine is UserVmManagerImpl.stopVirtualMachine(vmId, forced)
// and VirtualMachineManagerImpl.advanceStop: a VM that is Stopped,
// Destroyed, Expunging or in Error is returned as it is; a VM without a host
// (Starting before placement) is refused with "Unable to stop <vm>" (530)
// unless forced, which marks it Stopped; any other VM is Stopping during
// the job, then Stopped. The simulator's guests always answer the
// StopCommand, so forced changes nothing else.
func stopVirtualMachine(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, vm := vmJob(c, "admin.vm.StopVMCmdByAdmin", "unable to find a virtual machine with id")
	if vm == nil {
		return job, nil
	}
	forced := c.Params.Bool("forced", false)
	switch {
	case vm.State == model.VMStopped || vm.State == model.VMDestroyed || vm.State == model.VMExpunging || vm.State == model.VMError:
		job.Run = func() (any, error) { return vmResult(c, vm) }
	case vm.HostID == "" && !forced:
		text := "Unable to stop " + storage.VMString(vm)
		job.Run = func() (any, error) { return nil, kernel.InternalError("%s", text) }
	default:
		transition(c, job, vm, model.VMStopping)
		job.Run = func() (any, error) {
			stopVM(c, vm)
			return vmResult(c, vm)
		}
	}
	return job, nil
}

// rebootVirtualMachine is UserVmManagerImpl.rebootVirtualMachine(RebootVMCmd)
// in the job: a VM that is not Running is refused with
// InvalidParameterValueException (431); one the internal reboot does not
// find on a host makes RebootVMCmd answer "Failed to reboot vm instance"
// (530, RebootVMCmd.execute).
func rebootVirtualMachine(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, vm := vmJob(c, "admin.vm.RebootVMCmdByAdmin", "Unable to find a virtual machine with id")
	if vm == nil {
		return job, nil
	}
	job.Run = func() (any, error) {
		if vm.State != model.VMRunning {
			return nil, kernel.ParamError("The VM %s (%s) is not running, unable to reboot it", vm.ID, vm.DisplayNameOrHostName())
		}
		if vm.HostID == "" { // a ServerApiException: cserrorcode 9999
			return nil, &kernel.APIError{Code: kernel.CodeInternalError, CSCode: kernel.CsServerAPIException, Text: "Failed to reboot vm instance"}
		}
		return vmResult(c, vm)
	}
	return job, nil
}
