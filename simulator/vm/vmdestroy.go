package vm

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/network"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/storage"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// vmDestroyCommands are the commands of vmdestroy.go (registerCommands).
func vmDestroyCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "destroyVirtualMachine", IDKind: model.KindVM, Async: destroyVirtualMachine},
		{Name: "expungeVirtualMachine", IDKind: model.KindVM, Async: expungeVirtualMachine},
		{Name: "recoverVirtualMachine", IDKind: model.KindVM, Sync: recoverVirtualMachine},
	}
}

// destroyVirtualMachine destroys a VM. Without expunge it becomes Destroyed:
// it keeps its NICs (addresses and host name stay taken) and its ROOT volume
// goes to Destroy until the VM is expunged or recovered. With expunge it is
// Expunging during the job and then gone. volumeids names DATADISK volumes
// attached to the VM to delete with it; other data volumes stay attached
// until the VM is expunged, which detaches them.
func destroyVirtualMachine(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, vm := vmJob(c, "admin.vm.DestroyVMCmdByAdmin", "unable to find a virtual machine with id")
	expunge := c.Params.Bool("expunge", false)
	if expunge && !c.Account.IsAdmin() {
		// UserVmManagerImpl.destroyVm checks this first. The
		// PermissionDeniedException is not a ServerApiException, so
		// ApiAsyncJobDispatcher.runJob fails the job with 530.
		job.Run = func() (any, error) {
			return nil, kernel.InternalError("Parameter expunge can be passed by Admin only. Or when the %s key is set.", allowUserExpungeRecoverVM)
		}
		return job, nil
	}
	if vm == nil {
		return job, nil
	}
	volumes, bad := volumesToDestroy(c, vm)
	switch {
	case len(bad) > 0:
		job.Run = func() (any, error) {
			return nil, kernel.ParamError("The following supplied volumes are not DATADISK attached to the VM: %s", strings.Join(bad, ""))
		}
		return job, nil
	case vm.State == model.VMDestroyed && !expunge:
		job.Run = func() (any, error) { return vmResult(c, vm) }
		return job, nil
	case expunge || vm.State == model.VMError:
		transition(c, job, vm, model.VMExpunging)
	case vm.State == model.VMRunning || vm.State == model.VMStarting:
		transition(c, job, vm, model.VMStopping)
	}
	job.Run = func() (any, error) { return destroyVM(c, vm, volumes, expunge) }
	return job, nil
}

// volumesToDestroy is the live volumes volumeids names, and the texts of
// those that are not DATADISK volumes attached to vm.
func volumesToDestroy(c *kernel.Call, vm *model.VirtualMachine) (volumes []*model.Volume, bad []string) {
	for _, id := range c.Params.List("volumeids") {
		if v, ok := model.ByID(c.State.Volumes, id); ok && v.Removed == nil {
			volumes = append(volumes, v)
		}
	}
	for _, v := range volumes {
		if v.Type != model.VolumeDataDisk || !strings.EqualFold(v.VMID, vm.ID) {
			bad = append(bad, storage.VolumeString(c.State, v)+"; ")
		}
	}
	return volumes, bad
}

// destroyVM is destroyVirtualMachine's job: the named volumes go (expunged,
// or detached and Destroy), then the VM is expunged or stopped and
// Destroyed with its ROOT volume.
func destroyVM(c *kernel.Call, vm *model.VirtualMachine, volumes []*model.Volume, expunge bool) (any, error) {
	now := c.Engine.Now()
	for _, v := range volumes {
		if expunge {
			v.Expunge(now)
		} else {
			v.Detach()
			v.State = model.VolumeDestroy
		}
	}
	if vm.State == model.VMExpunging {
		ExpungeVM(c, vm)
	} else {
		stopVM(c, vm)
		vm.State, vm.UpdateTime = model.VMDestroyed, now
		for _, v := range c.State.VolumesOf(vm.ID) {
			if v.Type == model.VolumeRoot {
				v.State = model.VolumeDestroy
			}
		}
	}
	c.Changed()
	return vmResult(c, vm)
}

// ExpungeVM removes a VM for good (UserVmManagerImpl.expunge): its NICs,
// and so its addresses and host name, are released
// (releaseNetworkResourcesOnExpunge, then VirtualMachineManagerImpl.
// advanceExpunge's cleanupNics), its static NAT disabled and its network
// rules cleaned up (cleanupVmResources, cleanupVMRules), its ROOT volume
// expunged, its data volumes detached and its tags deleted.
func ExpungeVM(c *kernel.Call, vm *model.VirtualMachine) {
	now := c.Engine.Now()
	vm.Stop()
	vm.State, vm.Removed, vm.NICs, vm.UpdateTime = model.VMExpunging, &now, nil, now
	for _, v := range c.State.Volumes {
		if v.Removed != nil || !strings.EqualFold(v.VMID, vm.ID) {
			continue
		}
		if v.Type == model.VolumeRoot {
			v.Expunge(now)
			tag.RemoveTagsOf(c.State, "Volume", v.ID)
		} else {
			v.Detach()
		}
	}
	network.CleanupVMRules(c, vm)
	tag.RemoveTagsOf(c.State, "UserVm", vm.ID)
	c.Changed()
}

// expungeVirtualMachine is UserVmManagerImpl.expungeVm: it expunges a
// Destroyed (or Error) VM; an expunged one is not found (UserVmDao.findById
// skips removed rows, GenericDaoBase.findById, so expungeVm's "already
// expunged" branch is never reached), any other state fails the job.
func expungeVirtualMachine(c *kernel.Call) (*kernel.AsyncJob, error) {
	id := c.Params.Get("id")
	job := &kernel.AsyncJob{InstanceType: "VirtualMachine", InstanceID: strings.ToLower(id),
		CmdClass: "org.apache.cloudstack.api.command.admin.vm.ExpungeVMCmd"}
	vm, found := model.ByID(c.State.VMs, id)
	switch {
	case !found || vm.Removed != nil:
		job.Run = func() (any, error) {
			return nil, kernel.ParamError("Unable to find a virtual machine with specified vmId")
		}
	case vm.State != model.VMDestroyed && vm.State != model.VMError && vm.State != model.VMExpunging:
		job.Run = func() (any, error) {
			return nil, kernel.InternalError("Please destroy vm with specified vmId before expunge")
		}
	case !c.Account.IsAdmin(): // after the state check; a 530 from the job, as for destroy
		job.Run = func() (any, error) {
			return nil, kernel.InternalError("Expunging a vm can only be done by an Admin. Or when the %s key is set.", allowUserExpungeRecoverVM)
		}
	default:
		transition(c, job, vm, model.VMExpunging)
		job.Run = func() (any, error) {
			ExpungeVM(c, vm)
			return kernel.Success(), nil
		}
	}
	return job, nil
}

// recoverVirtualMachine (synchronous in 4.22) is UserVmManagerImpl.
// recoverVirtualMachine: a Destroyed VM comes back Stopped with its ROOT
// volume (recoverRootVolume); an expunged VM is not found and a VM in any
// other state is refused (the caller is root admin, so
// allow.user.expunge.recover.vm does not apply).
func recoverVirtualMachine(c *kernel.Call) (any, error) {
	vm, err := liveVM(c, "id", "unable to find a virtual machine with id")
	if err != nil {
		return nil, err
	}
	if !c.Account.IsAdmin() { // a synchronous PermissionDeniedException: 531
		return nil, &kernel.APIError{Code: kernel.CodeAccountError, CSCode: kernel.CsPermissionDenied,
			Text: "Recovering a vm can only be done by an Admin. Or when the " + allowUserExpungeRecoverVM + " key is set."}
	}
	if vm.State != model.VMDestroyed {
		return nil, kernel.ParamError("Vm with id %d is not in the right state", vm.InternalID)
	}
	vm.State = model.VMStopped
	for _, v := range c.State.VolumesOf(vm.ID) {
		if v.State == model.VolumeDestroy {
			v.State = model.VolumeReady
			if v.Path == "" {
				v.State = model.VolumeAllocated
			}
		}
	}
	c.Changed()
	return map[string]any{"virtualmachine": views.VMView(c, vm)}, nil
}

// allowUserExpungeRecoverVM is UserVmManager.AllowUserExpungeRecoverVm,
// false by default: only admins may expunge or recover VMs. The simulator
// has no global settings yet, so it is always false.
const allowUserExpungeRecoverVM = "allow.user.expunge.recover.vm"
