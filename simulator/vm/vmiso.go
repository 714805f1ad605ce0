package vm

import (
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// vmISOCommands are the commands of vmiso.go (registerCommands).
func vmISOCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "attachIso", IDKind: model.KindTemplate, Async: attachIso},
		{Name: "detachIso", Async: detachIso},
	}
}

// isoJob is attachIso's and detachIso's job: its instance is the VM
// (getApiResourceType VirtualMachine), and the VM named is resolved when
// the command is dispatched (getEntityOwnerId), so one that is unknown or
// expunged fails the request, with the command's own text.
func isoJob(c *kernel.Call, class, notFound string) (*kernel.AsyncJob, *model.VirtualMachine, error) {
	vm, err := liveVM(c, "virtualmachineid", notFound)
	if err != nil {
		return nil, nil, err
	}
	return &kernel.AsyncJob{InstanceType: "VirtualMachine", InstanceID: vm.ID,
		CmdClass: "org.apache.cloudstack.api.command.user.iso." + class}, vm, nil
}

// attachIso is TemplateManagerImpl.attachIso in the job, its checks in its
// order (the texts carry internal ids). There is no readiness, format or
// already-attached check: a second ISO replaces the first, and an ISO not
// yet ready fails the VM's start instead (startISOCheck). forced only
// matters on VMware and is ignored. Departure: a Running VM's attach is the
// same DB update, without the AttachCommand to its host (the simulator has
// no hypervisor to refuse it).
func attachIso(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, vm, err := isoJob(c, "AttachIsoCmd", "Unable to find  Instance by ID") // two spaces, as AttachIsoCmd.getEntityOwnerId
	if err != nil {
		return nil, err
	}
	iso, _ := model.ByID(c.State.Templates, c.Params.Get("id"))
	job.Run = func() (any, error) {
		switch {
		case iso == nil: // an unknown UUID fails the request first (the id's entity is TemplateResponse)
			return nil, kernel.ParamError("Unable to find an ISO with id %s", c.Params.Get("id"))
		case iso.Removed != nil:
			return nil, kernel.ParamError("Unable to find an ISO with id %d", iso.InternalID)
		case iso.CopyIn(vm.ZoneID) == nil: // the template_zone_ref (no PERHOST ISOs here)
			return nil, kernel.ParamError("ISO is not available in the zone the instance is in.")
		case vm.State != model.VMRunning && vm.State != model.VMStopped:
			return nil, kernel.ParamError("Please specify an instance that is either Stopped or Running.")
		}
		// attachISOToVM(attach=true): vm.setIsoId
		vm.ISOID = iso.ID
		c.Changed()
		return vmResult(c, vm)
	}
	return job, nil
}

// detachIso is TemplateManagerImpl.detachIso in the job (4.22: one ISO per
// VM, no id parameter). Departure as for attachIso on a Running VM.
func detachIso(c *kernel.Call) (*kernel.AsyncJob, error) {
	job, vm, err := isoJob(c, "DetachIsoCmd", "Unable to find Instance by ID") // one space, as DetachIsoCmd.getEntityOwnerId
	if err != nil {
		return nil, err
	}
	job.Run = func() (any, error) {
		switch {
		case vm.ISOID == "":
			return nil, kernel.ParamError("The specified instance has no ISO attached to it.")
		case vm.State != model.VMRunning && vm.State != model.VMStopped:
			return nil, kernel.ParamError("Please specify an instance that is either Stopped or Running.")
		}
		// attachISOToVM(attach=false): vm.setIsoId(null)
		vm.ISOID = ""
		c.Changed()
		return vmResult(c, vm)
	}
	return job, nil
}

// startISOCheck is TemplateManagerImpl.prepareIsoForVmProfile, which
// UserVmManagerImpl.finalizeVirtualMachineProfile calls on every start once
// a host is chosen: the attached ISO needs a ready copy on the zone's image
// store and format ISO (prepareIso → getReadyTemplateOnImageStore), else a
// CloudRuntimeException, which VirtualMachineManagerImpl.orchestrateStart
// does not catch: its finally blocks clean up and put the VM back to
// Stopped (OperationFailed), and the job fails with the text (530).
func startISOCheck(c *kernel.Call, vm *model.VirtualMachine) error {
	if vm.ISOID == "" {
		return nil
	}
	iso, ok := model.ByID(c.State.Templates, vm.ISOID)
	if ok && iso.Removed == nil && iso.Format == "ISO" {
		if cp := iso.CopyIn(vm.ZoneID); cp != nil && cp.Ready() {
			return nil
		}
	}
	return kernel.InternalError("%s", "Failed to prepare ISO on secondary or cache storage")
}
