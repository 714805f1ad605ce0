package simulator

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

func init() {
	register(
		command{name: "updateVirtualMachine", idKind: model.KindVM, sync: updateVirtualMachine},
	)
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

func (c *Call) updateVM() (*model.VirtualMachine, error) {
	p := c.Params
	vm, err := c.liveVM("id", "unable to find virtual machine with id:") // validateInputsAndPermissionForUpdateVirtualMachineCommand
	if err != nil {
		return nil, err
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
	if vm.State == model.VMError || vm.State == model.VMExpunging {
		return nil, paramError("Vm with id %d is not in the right state", vm.InternalID)
	}
	// updateVirtualMachine: ha is the parameter, else the VM's own setting.
	if so, ok := model.ByID(c.st.ServiceOfferings, vm.ServiceOfferingID); ok && !so.OfferHA && p.Bool("haenable", vm.HAEnable) {
		return nil, paramError("Can't enable ha for the vm as it's created from the Service offering having HA disabled")
	}
	userData, updateUserData := vm.UserData, p.Has("userdata")
	if updateUserData {
		// "check and replace newlines": the two characters \ and n.
		ud, err := validateUserData(c.st, strings.ReplaceAll(p.Get("userdata"), `\n`, ""))
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
	if updateUserData && !userDataApplied(c.st, vm) {
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
func (c *Call) updatedDetails(vm *model.VirtualMachine) (map[string]string, error) {
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
func (c *Call) checkInstanceName(vm *model.VirtualMachine) error {
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
func (c *Call) dynamicScalingRefusal(vm *model.VirtualMachine) error {
	if t, ok := model.ByID(c.st.Templates, vm.TemplateID); !ok || !t.DynamicallyScalable {
		return paramError("Dynamic Scaling cannot be enabled for the VM since its template does not have dynamic scaling enabled")
	}
	return paramError("Dynamic Scaling cannot be enabled for the VM since corresponding global setting is set to false")
}

// checkSecurityGroupUpdate: security groups cannot be set on VMware, and in
// a zone with security groups only on a Stopped VM.
func (c *Call) checkSecurityGroupUpdate(vm *model.VirtualMachine) error {
	if !c.Params.Has("securitygroupids") && !c.Params.Has("securitygroupnames") {
		return nil
	}
	if strings.EqualFold(c.st.VMHypervisor(vm), "VMware") {
		return paramError("Security group feature is not supported for vmWare hypervisor")
	}
	if z := c.st.Zone(vm.ZoneID); z != nil && z.NetworkType == "Basic" && vm.State != model.VMStopped {
		return paramError("Virtual machine must be stopped prior to update security groups ")
	}
	return nil
}

// checkNewHostName is checkNameForRFCCompliance and
// checkIfHostNameUniqueInNtwkDomain over the VM's networks.
func (c *Call) checkNewHostName(vm *model.VirtualMachine, name string) error {
	if !verifyHostName(name) {
		return hostNameError()
	}
	var plans []*nicPlan
	for _, n := range vm.NICs {
		if net := c.st.Network(n.NetworkID); net != nil {
			plans = append(plans, &nicPlan{net: net})
		}
	}
	if n := hostNameTaken(c.st, name, plans, vm.ID); n != nil {
		return duplicateHostName(name, n)
	}
	return nil
}

// applyUpdate is UserVmDao.updateVM with the group and details changes.
func (c *Call) applyUpdate(vm *model.VirtualMachine, details map[string]string, userData string) {
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
