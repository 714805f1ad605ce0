package simulator

import (
	"fmt"
	"strings"
)

func init() {
	register(
		command{name: "startVirtualMachine", idKind: kindVM, async: startVirtualMachine},
		command{name: "stopVirtualMachine", idKind: kindVM, async: stopVirtualMachine},
		command{name: "rebootVirtualMachine", idKind: kindVM, async: rebootVirtualMachine},
		command{name: "destroyVirtualMachine", idKind: kindVM, async: destroyVirtualMachine},
		command{name: "expungeVirtualMachine", idKind: kindVM, async: expungeVirtualMachine},
		command{name: "recoverVirtualMachine", idKind: kindVM, sync: recoverVirtualMachine},
		command{name: "updateVirtualMachine", idKind: kindVM, sync: updateVirtualMachine},
	)
}

// allowUserExpungeRecoverVM is UserVmManager.AllowUserExpungeRecoverVm,
// false by default: only admins may expunge or recover VMs. The simulator
// has no global settings yet, so it is always false.
const allowUserExpungeRecoverVM = "allow.user.expunge.recover.vm"

// vmJob is an async VM command's job. CloudStack checks the VM inside the
// job, so a VM that is gone fails the job (431), not the request, with the
// command's own text: UserVmDao.findById skips expunged rows, and the texts
// name the internal id.
func (c *Call) vmJob(class, notFound string) (*asyncJob, *VirtualMachine) {
	id := c.Params.Get("id")
	job := &asyncJob{instanceType: "VirtualMachine", instanceID: strings.ToLower(id),
		cmdClass: "org.apache.cloudstack.api.command." + class}
	vm, ok := byID(c.st.VMs, id)
	if !ok || vm.Removed != nil {
		if ok {
			id = fmt.Sprint(vm.InternalID)
		}
		job.run = func() (any, error) { return nil, paramError("%s %s", notFound, id) }
		return job, nil
	}
	return job, vm
}

// vmResult is the job result of the VM commands.
func (c *Call) vmResult(vm *VirtualMachine) (any, error) {
	return map[string]any{"virtualmachine": c.vmView(vm)}, nil
}

// transition sets a transitional state for the job's duration; a failed
// job puts the previous state back.
func (c *Call) transition(job *asyncJob, vm *VirtualMachine, during string) {
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
	case vmRunning:
		text := fmt.Sprintf("The virtual machine %s (%s) is already running", vm.ID, vm.displayNameOrHostName())
		job.run = func() (any, error) { return nil, paramError("%s", text) }
	case vmStopped:
		c.transition(job, vm, vmStarting)
		hostID := c.Params.Get("hostid")
		job.run = func() (any, error) {
			if err := c.st.checkDestinationHost(vm, hostID); err != nil {
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
func (st *state) checkDestinationHost(vm *VirtualMachine, hostID string) error {
	h, ok := byID(st.Hosts, hostID)
	if hostID == "" || !ok {
		return nil
	}
	if h.ResourceState != resourceEnabled || h.State != hostUp {
		return paramError("Unable to deploy the VM as the host: %s is not in the right state", h.Name)
	}
	capable := vm.CPUNumber <= h.CPUNumber && int64(vm.CPUSpeed) <= h.CPUSpeed
	cpu, mem := st.allocation(h.ID)
	room := cpu+int64(vm.CPUNumber)*int64(vm.CPUSpeed) <= int64(h.CPUNumber)*h.CPUSpeed && mem+int64(vm.Memory)<<20 <= h.MemoryTotal
	if !capable || !room {
		return paramError("Cannot deploy the VM to specified host %d; host has cpu capability? %v, host has capacity? %v",
			h.InternalID, capable, room)
	}
	return nil
}

// displayNameOrHostName is VMInstanceVO.getDisplayNameOrHostName.
func (vm *VirtualMachine) displayNameOrHostName() string {
	if strings.TrimSpace(vm.DisplayName) != "" {
		return vm.DisplayName
	}
	return vm.Name
}

// isTransitional is VirtualMachine.State.isTransitional (the states built
// with transitional=true).
func isTransitional(state string) bool {
	switch state {
	case vmStarting, vmStopping, vmMigrating, vmExpunging, "Restoring":
		return true
	}
	return false
}

// stopVM moves a VM off its host.
func (c *Call) stopVM(vm *VirtualMachine) {
	vm.stop()
	c.changed()
}

func (vm *VirtualMachine) stop() {
	if vm.HostID != "" {
		vm.LastHostID = vm.HostID
	}
	vm.HostID, vm.State = "", vmStopped
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
	case vm.State == vmStopped || vm.State == vmDestroyed || vm.State == vmExpunging || vm.State == vmError:
		job.run = func() (any, error) { return c.vmResult(vm) }
	case vm.HostID == "" && !forced:
		text := "Unable to stop " + vmString(vm)
		job.run = func() (any, error) { return nil, internalError("%s", text) }
	default:
		c.transition(job, vm, vmStopping)
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
		if vm.State != vmRunning {
			return nil, paramError("The VM %s (%s) is not running, unable to reboot it", vm.ID, vm.displayNameOrHostName())
		}
		if vm.HostID == "" { // a ServerApiException: cserrorcode 9999
			return nil, &APIError{Code: codeInternalError, CSCode: csServerAPIException, Text: "Failed to reboot vm instance"}
		}
		return c.vmResult(vm)
	}
	return job, nil
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
	if expunge && !c.Account.isAdmin() {
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
	var volumes []*Volume
	for _, id := range c.Params.List("volumeids") {
		if v, ok := byID(c.st.Volumes, id); ok && v.Removed == nil {
			volumes = append(volumes, v)
		}
	}
	var bad []string
	for _, v := range volumes {
		if v.Type != volumeDataDisk || !strings.EqualFold(v.VMID, vm.ID) {
			bad = append(bad, c.st.volumeString(v)+"; ")
		}
	}
	switch {
	case len(bad) > 0:
		job.run = func() (any, error) {
			return nil, paramError("The following supplied volumes are not DATADISK attached to the VM: %s", strings.Join(bad, ""))
		}
		return job, nil
	case vm.State == vmDestroyed && !expunge:
		job.run = func() (any, error) { return c.vmResult(vm) }
		return job, nil
	case expunge || vm.State == vmError:
		c.transition(job, vm, vmExpunging)
	case vm.State == vmRunning || vm.State == vmStarting:
		c.transition(job, vm, vmStopping)
	}
	job.run = func() (any, error) {
		now := c.srv.now()
		for _, v := range volumes {
			if expunge {
				v.expunge(now)
			} else {
				v.detach()
				v.State = volumeDestroy
			}
		}
		if vm.State == vmExpunging {
			c.expungeVM(vm)
		} else {
			c.stopVM(vm)
			vm.State, vm.UpdateTime = vmDestroyed, now
			for _, v := range c.st.volumesOf(vm.ID) {
				if v.Type == volumeRoot {
					v.State = volumeDestroy
				}
			}
		}
		c.changed()
		return c.vmResult(vm)
	}
	return job, nil
}

// expungeVM removes a VM for good (UserVmManagerImpl.expunge): its NICs,
// and so its addresses and host name, are released
// (releaseNetworkResourcesOnExpunge, then VirtualMachineManagerImpl.
// advanceExpunge's cleanupNics), its static NAT disabled and its network
// rules cleaned up (cleanupVmResources, cleanupVMRules), its ROOT volume
// expunged, its data volumes detached and its tags deleted.
func (c *Call) expungeVM(vm *VirtualMachine) {
	now := c.srv.now()
	vm.stop()
	vm.State, vm.Removed, vm.NICs, vm.UpdateTime = vmExpunging, &now, nil, now
	for _, v := range c.st.Volumes {
		if v.Removed != nil || !strings.EqualFold(v.VMID, vm.ID) {
			continue
		}
		if v.Type == volumeRoot {
			v.expunge(now)
			c.st.removeTagsOf("Volume", v.ID)
		} else {
			v.detach()
		}
	}
	c.cleanupVMRules(vm)
	c.st.removeTagsOf("UserVm", vm.ID)
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
	vm, found := byID(c.st.VMs, id)
	switch {
	case !found || vm.Removed != nil:
		job.run = func() (any, error) { return nil, paramError("Unable to find a virtual machine with specified vmId") }
	case vm.State != vmDestroyed && vm.State != vmError && vm.State != vmExpunging:
		job.run = func() (any, error) {
			return nil, internalError("Please destroy vm with specified vmId before expunge")
		}
	case !c.Account.isAdmin(): // after the state check; a 530 from the job, as for destroy
		job.run = func() (any, error) {
			return nil, internalError("Expunging a vm can only be done by an Admin. Or when the %s key is set.", allowUserExpungeRecoverVM)
		}
	default:
		c.transition(job, vm, vmExpunging)
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
	vm, found := byID(c.st.VMs, c.Params.Get("id"))
	if !found || vm.Removed != nil {
		id := c.Params.Get("id")
		if found {
			id = fmt.Sprint(vm.InternalID)
		}
		return nil, paramError("unable to find a virtual machine with id %s", id)
	}
	if !c.Account.isAdmin() { // a synchronous PermissionDeniedException: 531
		return nil, &APIError{Code: codeAccountError, CSCode: csPermissionDenied,
			Text: "Recovering a vm can only be done by an Admin. Or when the " + allowUserExpungeRecoverVM + " key is set."}
	}
	if vm.State != vmDestroyed {
		return nil, paramError("Vm with id %d is not in the right state", vm.InternalID)
	}
	vm.State = vmStopped
	for _, v := range c.st.volumesOf(vm.ID) {
		if v.State == volumeDestroy {
			v.State = volumeReady
			if v.Path == "" {
				v.State = volumeAllocated
			}
		}
	}
	c.changed()
	return map[string]any{"virtualmachine": c.vmView(vm)}, nil
}

// updateVirtualMachine is UserVmManagerImpl.updateVirtualMachine(UpdateVMCmd)
// and updateVirtualMachine(long id, ...). It works on a VM in any state but
// Error and Expunging, Running ones included. UpdateVMCmd.execute turns
// every CloudRuntimeException, InvalidParameterValueException included,
// into "Failed to update VM, due to <text>: " (530).
func updateVirtualMachine(c *Call) (any, error) {
	vm, err := c.updateVM()
	if err != nil {
		if e := asAPIError(err); e.Code == codeParamError || e.Code == codeInternalError {
			return nil, internalError("Failed to update VM, due to %s: ", e.Text)
		}
		return nil, err
	}
	return map[string]any{"virtualmachine": c.vmView(vm)}, nil
}

func (c *Call) updateVM() (*VirtualMachine, error) {
	p := c.Params
	vm, found := byID(c.st.VMs, p.Get("id"))
	if !found || vm.Removed != nil { // validateInputsAndPermissionForUpdateVirtualMachineCommand
		id := p.Get("id")
		if found {
			id = fmt.Sprint(vm.InternalID)
		}
		return nil, paramError("unable to find virtual machine with id: %s", id)
	}
	if p.Has("userdata") && p.Has("userdataid") { // finalizeUserData
		return nil, paramError("Both userdata and userdata ID inputs are not allowed, please provide only one")
	}
	details, err := c.updatedDetails(vm)
	if err != nil {
		return nil, err
	}
	if err := c.checkInstanceName(vm); err != nil {
		return nil, err
	}
	if vm.State == vmError || vm.State == vmExpunging {
		return nil, paramError("Vm with id %d is not in the right state", vm.InternalID)
	}
	// updateVirtualMachine: ha is the parameter, else the VM's own setting.
	if so, ok := byID(c.st.ServiceOfferings, vm.ServiceOfferingID); ok && !so.OfferHA && p.Bool("haenable", vm.HAEnable) {
		return nil, paramError("Can't enable ha for the vm as it's created from the Service offering having HA disabled")
	}
	userData, updateUserData := vm.UserData, p.Has("userdata")
	if updateUserData {
		// "check and replace newlines": the two characters \ and n.
		ud, err := c.st.validateUserData(strings.ReplaceAll(p.Get("userdata"), `\n`, ""))
		if err != nil {
			return nil, err
		}
		userData = ud
	}
	if p.Bool("isdynamicallyscalable", false) {
		return nil, c.dynamicScalingRefusal(vm)
	}
	if err := c.checkSecurityGroupUpdate(vm); err != nil {
		return nil, err
	}
	name := p.Get("name")
	if p.Has("name") && name != vm.Name {
		if err := c.checkNewHostName(vm, name); err != nil {
			return nil, err
		}
	}
	c.applyUpdate(vm, details, userData)
	if updateUserData && !c.st.userDataApplied(vm) {
		// updateUserData runs after the row is saved: the VM keeps the new
		// user data although the call fails.
		return nil, internalError("Failed to reset userdata for the virtual machine ")
	}
	return vm, nil
}

// updatedDetails is the details handling of updateVirtualMachine(UpdateVMCmd):
// cleanupdetails removes them all (the caller is root admin), details
// replaces them and may not hold extraconfig; extraconfig itself needs
// enable.additional.vm.configuration, false by default. The nil map means
// no change.
func (c *Call) updatedDetails(vm *VirtualMachine) (map[string]string, error) {
	p := c.Params
	if p.Bool("cleanupdetails", false) {
		return map[string]string{}, nil
	}
	var details map[string]string
	if m := p.Map("details"); len(m) > 0 {
		details = m[0] // UpdateVMCmd.getDetails: the first details[i] entry
		if _, ok := details["extraconfig"]; ok {
			return nil, paramError("'extraconfig' should not be included in details as key")
		}
	}
	if strings.TrimSpace(p.Get("extraconfig")) != "" {
		return nil, paramError("attempted setting extraconfig but enable.additional.vm.configuration is disabled")
	}
	return details, nil
}

// checkInstanceName: another VM (not expunged) may not have the instance
// name asked for.
func (c *Call) checkInstanceName(vm *VirtualMachine) error {
	name := c.Params.Get("instancename")
	if name == "" {
		return nil
	}
	for _, other := range c.st.VMs {
		if other.Removed == nil && other.InstanceName == name && other.ID != vm.ID {
			return internalError("Instance name : %s is not unique", name)
		}
	}
	return nil
}

// dynamicScalingRefusal: isdynamicallyscalable=true needs the template, the
// offering (CloudStack's default: enabled) and the global setting
// enable.dynamic.scale.vm, which is false by default.
func (c *Call) dynamicScalingRefusal(vm *VirtualMachine) error {
	if t, ok := byID(c.st.Templates, vm.TemplateID); !ok || !t.DynamicallyScalable {
		return paramError("Dynamic Scaling cannot be enabled for the VM since its template does not have dynamic scaling enabled")
	}
	return paramError("Dynamic Scaling cannot be enabled for the VM since corresponding global setting is set to false")
}

// checkSecurityGroupUpdate: security groups cannot be set on VMware, and in
// a zone with security groups only on a Stopped VM.
func (c *Call) checkSecurityGroupUpdate(vm *VirtualMachine) error {
	if !c.Params.Has("securitygroupids") && !c.Params.Has("securitygroupnames") {
		return nil
	}
	if strings.EqualFold(c.st.vmHypervisor(vm), "VMware") {
		return paramError("Security group feature is not supported for vmWare hypervisor")
	}
	if z := c.st.zone(vm.ZoneID); z != nil && z.NetworkType == "Basic" && vm.State != vmStopped {
		return paramError("Virtual machine must be stopped prior to update security groups ")
	}
	return nil
}

// checkNewHostName is checkNameForRFCCompliance and
// checkIfHostNameUniqueInNtwkDomain over the VM's networks.
func (c *Call) checkNewHostName(vm *VirtualMachine, name string) error {
	if !verifyHostName(name) {
		return hostNameError()
	}
	var plans []*nicPlan
	for _, n := range vm.NICs {
		if net := c.st.network(n.NetworkID); net != nil {
			plans = append(plans, &nicPlan{net: net})
		}
	}
	if n := c.st.hostNameTaken(name, plans, vm.ID); n != nil {
		return duplicateHostName(name, n)
	}
	return nil
}

// applyUpdate is UserVmDao.updateVM with the group and details changes.
func (c *Call) applyUpdate(vm *VirtualMachine, details map[string]string, userData string) {
	p := c.Params
	if p.Has("displayname") {
		vm.DisplayName = p.Get("displayname")
	}
	if p.Has("name") {
		vm.Name = p.Get("name")
	}
	if name := p.Get("instancename"); name != "" {
		vm.InstanceName = name
	}
	if p.Has("group") {
		vm.Group = p.Get("group")
	}
	if p.Has("haenable") {
		vm.HAEnable = p.Bool("haenable", false)
	}
	if id := p.Get("ostypeid"); id != "" {
		vm.OSTypeID = strings.ToLower(id)
	}
	if details != nil {
		vm.Details = details
	}
	vm.UserData = userData
	c.changed()
}
