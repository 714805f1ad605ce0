package simulator

import (
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

// vmJob is an async VM command's job. CloudStack checks the VM inside the
// job, so a VM that is gone fails the job (431), not the request.
func (c *Call) vmJob(class string) (*asyncJob, *VirtualMachine) {
	id := c.Params.Get("id")
	job := &asyncJob{instanceType: "VirtualMachine", instanceID: strings.ToLower(id),
		cmdClass: "org.apache.cloudstack.api.command." + class}
	vm, ok := byID(c.st.VMs, id)
	if !ok || vm.Removed != nil {
		job.run = func() (any, error) { return nil, paramError("Unable to find a virtual machine with specified vmId") }
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

// startVirtualMachine starts a Stopped VM: Starting during the job, then
// Running, or back to Stopped with a 533 when no host fits. Starting a
// running VM changes nothing.
func startVirtualMachine(c *Call) (*asyncJob, error) {
	job, vm := c.vmJob("admin.vm.StartVMCmdByAdmin")
	if vm == nil {
		return job, nil
	}
	switch vm.State {
	case "Running":
		job.run = func() (any, error) { return c.vmResult(vm) }
	case "Stopped":
		c.transition(job, vm, "Starting")
		hostID := c.Params.Get("hostid")
		job.run = func() (any, error) {
			if err := c.startOn(vm, hostID); err != nil {
				return nil, err
			}
			return c.vmResult(vm)
		}
	default:
		state := vm.State
		job.run = func() (any, error) {
			return nil, internalError("Unable to start VM instance %s in state %s", vm.ID, state)
		}
	}
	return job, nil
}

// stopVM moves a VM off its host.
func (c *Call) stopVM(vm *VirtualMachine) {
	if vm.HostID != "" {
		vm.LastHostID = vm.HostID
	}
	vm.HostID, vm.State = "", "Stopped"
	c.changed()
}

// stopVirtualMachine stops a VM (forced or not, the simulator's guests stop
// at once): Stopping during the job, then Stopped. Stopping a stopped VM
// changes nothing.
func stopVirtualMachine(c *Call) (*asyncJob, error) {
	job, vm := c.vmJob("admin.vm.StopVMCmdByAdmin")
	if vm == nil {
		return job, nil
	}
	switch vm.State {
	case "Stopped":
		job.run = func() (any, error) { return c.vmResult(vm) }
	case "Running", "Starting", "Stopping":
		c.transition(job, vm, "Stopping")
		job.run = func() (any, error) {
			c.stopVM(vm)
			return c.vmResult(vm)
		}
	default:
		state := vm.State
		job.run = func() (any, error) {
			return nil, internalError("Unable to stop VM instance %s in state %s", vm.ID, state)
		}
	}
	return job, nil
}

// rebootVirtualMachine reboots a running VM; any other state fails the job
// as RebootVMCmd does.
func rebootVirtualMachine(c *Call) (*asyncJob, error) {
	job, vm := c.vmJob("admin.vm.RebootVMCmdByAdmin")
	if vm == nil {
		return job, nil
	}
	job.run = func() (any, error) {
		if vm.State != "Running" || vm.HostID == "" {
			return nil, internalError("Failed to reboot vm instance")
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
	job, vm := c.vmJob("admin.vm.DestroyVMCmdByAdmin")
	if vm == nil {
		return job, nil
	}
	expunge := c.Params.Bool("expunge", false)
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
	case vm.State == "Destroyed" && !expunge:
		job.run = func() (any, error) { return c.vmResult(vm) }
		return job, nil
	case expunge || vm.State == "Error":
		c.transition(job, vm, "Expunging")
	case vm.State == "Running" || vm.State == "Starting":
		c.transition(job, vm, "Stopping")
	}
	job.run = func() (any, error) {
		now := c.srv.now()
		for _, v := range volumes {
			if expunge {
				v.expunge(now)
			} else {
				v.detach()
				v.State = "Destroy"
			}
		}
		if vm.State == "Expunging" {
			c.expungeVM(vm)
		} else {
			c.stopVM(vm)
			vm.State = "Destroyed"
			for _, v := range c.st.volumesOf(vm.ID) {
				if v.Type == volumeRoot {
					v.State = "Destroy"
				}
			}
		}
		c.changed()
		return c.vmResult(vm)
	}
	return job, nil
}

// expungeVM removes a VM for good: its NICs (and so its addresses and host
// name) are released, its static NAT disabled, its ROOT volume expunged,
// its data volumes detached and its tags deleted.
func (c *Call) expungeVM(vm *VirtualMachine) {
	now := c.srv.now()
	c.stopVM(vm)
	vm.State, vm.Removed, vm.NICs = "Expunging", &now, nil
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
	for _, ip := range c.st.PublicIPs {
		if ip.StaticNAT && strings.EqualFold(ip.VMID, vm.ID) {
			ip.StaticNAT, ip.VMID, ip.VMIP = false, "", ""
		}
	}
	c.st.removeTagsOf("UserVm", vm.ID)
	c.changed()
}

// expungeVirtualMachine expunges a Destroyed (or Error) VM; an expunged VM
// succeeds again, any other state fails the job as UserVmManagerImpl does.
func expungeVirtualMachine(c *Call) (*asyncJob, error) {
	id := c.Params.Get("id")
	job := &asyncJob{instanceType: "VirtualMachine", instanceID: strings.ToLower(id),
		cmdClass: "org.apache.cloudstack.api.command.admin.vm.ExpungeVMCmd"}
	vm, found := byID(c.st.VMs, id)
	switch {
	case !found: // a legacy numeric id
		job.run = func() (any, error) { return nil, paramError("Unable to find a virtual machine with specified vmId") }
	case vm.Removed != nil:
		job.run = func() (any, error) { return success(), nil }
	case vm.State == "Destroyed" || vm.State == "Error" || vm.State == "Expunging":
		c.transition(job, vm, "Expunging")
		job.run = func() (any, error) {
			c.expungeVM(vm)
			return success(), nil
		}
	default:
		job.run = func() (any, error) {
			return nil, internalError("Please destroy vm with specified vmId before expunge")
		}
	}
	return job, nil
}

// recoverVirtualMachine (synchronous in 4.22) brings a Destroyed VM back as
// Stopped with its ROOT volume; a VM in another state is returned as is.
func recoverVirtualMachine(c *Call) (any, error) {
	vm, found := byID(c.st.VMs, c.Params.Get("id"))
	if !found || vm.Removed != nil {
		return nil, paramError("Unable to find a virtual machine with id %s", c.Params.Get("id"))
	}
	if vm.State == "Destroyed" {
		vm.State = "Stopped"
		for _, v := range c.st.volumesOf(vm.ID) {
			if v.State == "Destroy" {
				v.State = "Ready"
				if v.Path == "" {
					v.State = "Allocated"
				}
			}
		}
		c.changed()
	}
	return map[string]any{"virtualmachine": c.vmView(vm)}, nil
}

// updateVirtualMachine changes a VM's display name, group, HA flag, host
// name (checked like deployVirtualMachine's) or user data.
func updateVirtualMachine(c *Call) (any, error) {
	p := c.Params
	vm, found := byID(c.st.VMs, p.Get("id"))
	if !found || vm.Removed != nil {
		return nil, paramError("unable to find virtual machine %s", p.Get("id"))
	}
	userData := vm.UserData
	if p.Has("userdata") {
		ud, err := c.st.validateUserData(p.Get("userdata"))
		if err != nil {
			return nil, err
		}
		userData = ud
	}
	if name := p.Get("name"); name != "" && name != vm.Name {
		if !verifyHostName(name) {
			return nil, hostNameError()
		}
		var plans []*nicPlan
		for _, n := range vm.NICs {
			if net := c.st.network(n.NetworkID); net != nil {
				plans = append(plans, &nicPlan{net: net})
			}
		}
		if n := c.st.hostNameTaken(name, plans, vm.ID); n != nil {
			return nil, duplicateHostName(name, n)
		}
		vm.Name = name
	}
	if d := p.Get("displayname"); d != "" {
		vm.DisplayName = d
	}
	if p.Has("group") {
		vm.Group = p.Get("group")
	}
	if p.Has("haenable") {
		vm.HAEnable = p.Bool("haenable", false)
	}
	vm.UserData = userData
	c.changed()
	return map[string]any{"virtualmachine": c.vmView(vm)}, nil
}
