package simulator

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

func init() {
	register(
		command{name: "destroyVirtualMachine", idKind: model.KindVM, async: destroyVirtualMachine},
		command{name: "expungeVirtualMachine", idKind: model.KindVM, async: expungeVirtualMachine},
		command{name: "recoverVirtualMachine", idKind: model.KindVM, sync: recoverVirtualMachine},
	)
}

// destroyVirtualMachine destroys a VM. Without expunge it becomes Destroyed:
// it keeps its NICs (addresses and host name stay taken) and its ROOT volume
// goes to Destroy until the VM is expunged or recovered. With expunge it is
// Expunging during the job and then gone. volumeids names DATADISK volumes
// attached to the VM to delete with it; other data volumes stay attached
// until the VM is expunged, which detaches them.
func destroyVirtualMachine(c *Call) (*asyncJob, error) {
	job, vm := c.vmJob("admin.vm.DestroyVMCmdByAdmin", "unable to find a virtual machine with id")
	expunge := c.Params.Bool("expunge", false)
	if expunge && !c.Account.IsAdmin() {
		// UserVmManagerImpl.destroyVm checks this first. The
		// PermissionDeniedException is not a ServerApiException, so
		// ApiAsyncJobDispatcher.runJob fails the job with 530.
		job.run = func() (any, error) {
			return nil, internalError("Parameter expunge can be passed by Admin only. Or when the %s key is set.", allowUserExpungeRecoverVM)
		}
		return job, nil
	}
	if vm == nil {
		return job, nil
	}
	volumes, bad := c.volumesToDestroy(vm)
	switch {
	case len(bad) > 0:
		job.run = func() (any, error) {
			return nil, paramError("The following supplied volumes are not DATADISK attached to the VM: %s", strings.Join(bad, ""))
		}
		return job, nil
	case vm.State == model.VMDestroyed && !expunge:
		job.run = func() (any, error) { return c.vmResult(vm) }
		return job, nil
	case expunge || vm.State == model.VMError:
		c.transition(job, vm, model.VMExpunging)
	case vm.State == model.VMRunning || vm.State == model.VMStarting:
		c.transition(job, vm, model.VMStopping)
	}
	job.run = func() (any, error) { return c.destroyVM(vm, volumes, expunge) }
	return job, nil
}

// volumesToDestroy is the live volumes volumeids names, and the texts of
// those that are not DATADISK volumes attached to vm.
func (c *Call) volumesToDestroy(vm *model.VirtualMachine) (volumes []*model.Volume, bad []string) {
	for _, id := range c.Params.List("volumeids") {
		if v, ok := model.ByID(c.st.Volumes, id); ok && v.Removed == nil {
			volumes = append(volumes, v)
		}
	}
	for _, v := range volumes {
		if v.Type != model.VolumeDataDisk || !strings.EqualFold(v.VMID, vm.ID) {
			bad = append(bad, volumeString(c.st, v)+"; ")
		}
	}
	return volumes, bad
}

// destroyVM is destroyVirtualMachine's job: the named volumes go (expunged,
// or detached and Destroy), then the VM is expunged or stopped and
// Destroyed with its ROOT volume.
func (c *Call) destroyVM(vm *model.VirtualMachine, volumes []*model.Volume, expunge bool) (any, error) {
	now := c.eng.now()
	for _, v := range volumes {
		if expunge {
			v.Expunge(now)
		} else {
			v.Detach()
			v.State = model.VolumeDestroy
		}
	}
	if vm.State == model.VMExpunging {
		c.expungeVM(vm)
	} else {
		c.stopVM(vm)
		vm.State, vm.UpdateTime = model.VMDestroyed, now
		for _, v := range c.st.VolumesOf(vm.ID) {
			if v.Type == model.VolumeRoot {
				v.State = model.VolumeDestroy
			}
		}
	}
	c.changed()
	return c.vmResult(vm)
}

// expungeVM removes a VM for good (UserVmManagerImpl.expunge): its NICs,
// and so its addresses and host name, are released
// (releaseNetworkResourcesOnExpunge, then VirtualMachineManagerImpl.
// advanceExpunge's cleanupNics), its static NAT disabled and its network
// rules cleaned up (cleanupVmResources, cleanupVMRules), its ROOT volume
// expunged, its data volumes detached and its tags deleted.
func (c *Call) expungeVM(vm *model.VirtualMachine) {
	now := c.eng.now()
	vm.Stop()
	vm.State, vm.Removed, vm.NICs, vm.UpdateTime = model.VMExpunging, &now, nil, now
	for _, v := range c.st.Volumes {
		if v.Removed != nil || !strings.EqualFold(v.VMID, vm.ID) {
			continue
		}
		if v.Type == model.VolumeRoot {
			v.Expunge(now)
			removeTagsOf(c.st, "Volume", v.ID)
		} else {
			v.Detach()
		}
	}
	c.cleanupVMRules(vm)
	removeTagsOf(c.st, "UserVm", vm.ID)
	c.changed()
}

// expungeVirtualMachine is UserVmManagerImpl.expungeVm: it expunges a
// Destroyed (or Error) VM; an expunged one is not found (UserVmDao.findById
// skips removed rows, GenericDaoBase.findById, so expungeVm's "already
// expunged" branch is never reached), any other state fails the job.
func expungeVirtualMachine(c *Call) (*asyncJob, error) {
	id := c.Params.Get("id")
	job := &asyncJob{instanceType: "VirtualMachine", instanceID: strings.ToLower(id),
		cmdClass: "org.apache.cloudstack.api.command.admin.vm.ExpungeVMCmd"}
	vm, found := model.ByID(c.st.VMs, id)
	switch {
	case !found || vm.Removed != nil:
		job.run = func() (any, error) { return nil, paramError("Unable to find a virtual machine with specified vmId") }
	case vm.State != model.VMDestroyed && vm.State != model.VMError && vm.State != model.VMExpunging:
		job.run = func() (any, error) {
			return nil, internalError("Please destroy vm with specified vmId before expunge")
		}
	case !c.Account.IsAdmin(): // after the state check; a 530 from the job, as for destroy
		job.run = func() (any, error) {
			return nil, internalError("Expunging a vm can only be done by an Admin. Or when the %s key is set.", allowUserExpungeRecoverVM)
		}
	default:
		c.transition(job, vm, model.VMExpunging)
		job.run = func() (any, error) {
			c.expungeVM(vm)
			return success(), nil
		}
	}
	return job, nil
}

// recoverVirtualMachine (synchronous in 4.22) is UserVmManagerImpl.
// recoverVirtualMachine: a Destroyed VM comes back Stopped with its ROOT
// volume (recoverRootVolume); an expunged VM is not found and a VM in any
// other state is refused (the caller is root admin, so
// allow.user.expunge.recover.vm does not apply).
func recoverVirtualMachine(c *Call) (any, error) {
	vm, err := c.liveVM("id", "unable to find a virtual machine with id")
	if err != nil {
		return nil, err
	}
	if !c.Account.IsAdmin() { // a synchronous PermissionDeniedException: 531
		return nil, &APIError{Code: codeAccountError, CSCode: csPermissionDenied,
			Text: "Recovering a vm can only be done by an Admin. Or when the " + allowUserExpungeRecoverVM + " key is set."}
	}
	if vm.State != model.VMDestroyed {
		return nil, paramError("Vm with id %d is not in the right state", vm.InternalID)
	}
	vm.State = model.VMStopped
	for _, v := range c.st.VolumesOf(vm.ID) {
		if v.State == model.VolumeDestroy {
			v.State = model.VolumeReady
			if v.Path == "" {
				v.State = model.VolumeAllocated
			}
		}
	}
	c.changed()
	return map[string]any{"virtualmachine": c.vmView(vm)}, nil
}

// allowUserExpungeRecoverVM is UserVmManager.AllowUserExpungeRecoverVm,
// false by default: only admins may expunge or recover VMs. The simulator
// has no global settings yet, so it is always false.
const allowUserExpungeRecoverVM = "allow.user.expunge.recover.vm"
