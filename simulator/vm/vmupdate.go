package vm

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// vmUpdateCommands are the commands of vmupdate.go (registerCommands).
func vmUpdateCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "updateVirtualMachine", IDKind: model.KindVM, Sync: updateVirtualMachine},
	}
}

// updateVirtualMachine is UserVmManagerImpl.updateVirtualMachine(UpdateVMCmd)
// and updateVirtualMachine(long id, ...). It works on a VM in any state but
// Error and Expunging, Running ones included. UpdateVMCmd.execute turns
// every CloudRuntimeException, InvalidParameterValueException included,
// into "Failed to update VM, due to <text>: " (530).
func updateVirtualMachine(c *kernel.Call) (any, error) {
	vm, err := updateVM(c)
	if err != nil {
		if e := kernel.AsAPIError(err); e.Code == kernel.CodeParamError || e.Code == kernel.CodeInternalError {
			return nil, kernel.InternalError("Failed to update VM, due to %s: ", e.Text)
		}
		return nil, err
	}
	return map[string]any{"virtualmachine": views.VMView(c, vm)}, nil
}

func updateVM(c *kernel.Call) (*model.VirtualMachine, error) {
	p := c.Params
	vm, err := liveVM(c, "id", "unable to find virtual machine with id:") // validateInputsAndPermissionForUpdateVirtualMachineCommand
	if err != nil {
		return nil, err
	}
	if p.Has("userdata") && p.Has("userdataid") { // finalizeUserData
		return nil, kernel.ParamError("Both userdata and userdata ID inputs are not allowed, please provide only one")
	}
	details, err := updatedDetails(c, vm)
	if err != nil {
		return nil, err
	}
	if err := checkInstanceName(c, vm); err != nil {
		return nil, err
	}
	if vm.State == model.VMError || vm.State == model.VMExpunging {
		return nil, kernel.ParamError("Vm with id %d is not in the right state", vm.InternalID)
	}
	// updateVirtualMachine: ha is the parameter, else the VM's own setting.
	if so, ok := model.ByID(c.State.ServiceOfferings, vm.ServiceOfferingID); ok && !so.OfferHA && p.Bool("haenable", vm.HAEnable) {
		return nil, kernel.ParamError("Can't enable ha for the vm as it's created from the Service offering having HA disabled")
	}
	userData, updateUserData := vm.UserData, p.Has("userdata")
	if updateUserData {
		// "check and replace newlines": the two characters \ and n.
		ud, err := ValidateUserData(c.State, strings.ReplaceAll(p.Get("userdata"), `\n`, ""))
		if err != nil {
			return nil, err
		}
		userData = ud
	}
	if p.Bool("isdynamicallyscalable", false) {
		return nil, dynamicScalingRefusal(c, vm)
	}
	if err := checkSecurityGroupUpdate(c, vm); err != nil {
		return nil, err
	}
	name := p.Get("name")
	if p.Has("name") && name != vm.Name {
		if err := checkNewHostName(c, vm, name); err != nil {
			return nil, err
		}
	}
	applyUpdate(c, vm, details, userData)
	if updateUserData && !UserDataApplied(c.State, vm) {
		// updateUserData runs after the row is saved: the VM keeps the new
		// user data although the call fails.
		return nil, kernel.InternalError("Failed to reset userdata for the virtual machine ")
	}
	return vm, nil
}

// updatedDetails is the details handling of updateVirtualMachine(UpdateVMCmd):
// cleanupdetails removes them all (the caller is root admin), details
// replaces them and may not hold extraconfig; extraconfig itself needs
// enable.additional.vm.configuration, false by default. The nil map means
// no change.
func updatedDetails(c *kernel.Call, vm *model.VirtualMachine) (map[string]string, error) {
	p := c.Params
	if p.Bool("cleanupdetails", false) {
		return map[string]string{}, nil
	}
	var details map[string]string
	if m := p.Map("details"); len(m) > 0 {
		details = m[0] // UpdateVMCmd.getDetails: the first details[i] entry
		if _, ok := details["extraconfig"]; ok {
			return nil, kernel.ParamError("'extraconfig' should not be included in details as key")
		}
	}
	if strings.TrimSpace(p.Get("extraconfig")) != "" {
		return nil, kernel.ParamError("attempted setting extraconfig but enable.additional.vm.configuration is disabled")
	}
	return details, nil
}

// checkInstanceName: another VM (not expunged) may not have the instance
// name asked for.
func checkInstanceName(c *kernel.Call, vm *model.VirtualMachine) error {
	name := c.Params.Get("instancename")
	if name == "" {
		return nil
	}
	for _, other := range c.State.VMs {
		if other.Removed == nil && other.InstanceName == name && other.ID != vm.ID {
			return kernel.InternalError("Instance name : %s is not unique", name)
		}
	}
	return nil
}

// dynamicScalingRefusal: isdynamicallyscalable=true needs the template, the
// offering (CloudStack's default: enabled) and the global setting
// enable.dynamic.scale.vm, which is false by default.
func dynamicScalingRefusal(c *kernel.Call, vm *model.VirtualMachine) error {
	if t, ok := model.ByID(c.State.Templates, vm.TemplateID); !ok || !t.DynamicallyScalable {
		return kernel.ParamError("Dynamic Scaling cannot be enabled for the VM since its template does not have dynamic scaling enabled")
	}
	return kernel.ParamError("Dynamic Scaling cannot be enabled for the VM since corresponding global setting is set to false")
}

// checkSecurityGroupUpdate: security groups cannot be set on VMware, and in
// a zone with security groups only on a Stopped VM.
func checkSecurityGroupUpdate(c *kernel.Call, vm *model.VirtualMachine) error {
	if !c.Params.Has("securitygroupids") && !c.Params.Has("securitygroupnames") {
		return nil
	}
	if strings.EqualFold(c.State.VMHypervisor(vm), "VMware") {
		return kernel.ParamError("Security group feature is not supported for vmWare hypervisor")
	}
	if z := c.State.Zone(vm.ZoneID); z != nil && z.NetworkType == "Basic" && vm.State != model.VMStopped {
		return kernel.ParamError("Virtual machine must be stopped prior to update security groups ")
	}
	return nil
}

// checkNewHostName is checkNameForRFCCompliance and
// checkIfHostNameUniqueInNtwkDomain over the VM's networks.
func checkNewHostName(c *kernel.Call, vm *model.VirtualMachine, name string) error {
	if !verifyHostName(name) {
		return hostNameError()
	}
	var plans []*nicPlan
	for _, n := range vm.NICs {
		if net := c.State.Network(n.NetworkID); net != nil {
			plans = append(plans, &nicPlan{net: net})
		}
	}
	if n := hostNameTaken(c.State, name, plans, vm.ID); n != nil {
		return duplicateHostName(name, n)
	}
	return nil
}

// applyUpdate is UserVmDao.updateVM with the group and details changes.
func applyUpdate(c *kernel.Call, vm *model.VirtualMachine, details map[string]string, userData string) {
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
	c.Changed()
}
