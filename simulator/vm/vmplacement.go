package vm

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/infrastructure"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/network"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/storage"
)

// csInsufficientServerCap is InsufficientServerCapacityException's
// cserrorcode.
const csInsufficientServerCap = 4335

// hostFits is what FirstFitAllocator.allocateTo asks of a host: Up and
// Enabled in the plan's zone with the VM's hypervisor
// (ResourceManagerImpl.listAllUpAndEnabledNonHAHosts over the planner's
// clusters), a pool for its volumes (the storage pool allocators), then
// CapacityManagerImpl.checkIfHostHasCpuCapabilityAndCapacity: cores and
// speed per core (checkIfHostHasCpuCapability), free CPU (cores × MHz) and
// memory (checkIfHostHasCapacity; overcommit ratios 1.0, the cluster
// defaults). Not modelled: host tags, GPUs, checkIfHostReachMaxGuestLimit.
func hostFits(st *model.State, h *model.Host, vm *model.VirtualMachine) bool {
	if h.State != model.HostUp || h.ResourceState != model.ResourceEnabled || h.ZoneID != vm.ZoneID || !strings.EqualFold(h.Hypervisor, vm.Hypervisor) ||
		!infrastructure.HasPrimaryStorage(st, h) {
		return false
	}
	if vm.CPUNumber > h.CPUNumber || int64(vm.CPUSpeed) > h.CPUSpeed {
		return false
	}
	cpu, mem := model.Allocation(st, h.ID)
	return cpu+int64(vm.CPUNumber)*int64(vm.CPUSpeed) <= int64(h.CPUNumber)*h.CPUSpeed &&
		mem+int64(vm.Memory)<<20 <= h.MemoryTotal
}

// affinityRules are the host constraints of a VM's affinity groups (the
// HostAntiAffinityProcessor and HostAffinityProcessor, not re-read): anti-
// affinity avoids the hosts running other members; affinity restricts the
// VM to the hosts running other members, if any run. "applied" is
// VirtualMachineManagerImpl's areAffinityGroupsAssociated, which adds the
// hint to the 533 text.
func affinityRules(st *model.State, vm *model.VirtualMachine) (avoid, only map[string]bool, applied bool) {
	avoid = map[string]bool{}
	for _, gid := range vm.AffinityGroupIDs {
		g, ok := model.ByID(st.AffinityGroups, gid)
		if !ok {
			continue
		}
		applied = true
		running := map[string]bool{}
		for _, m := range model.Members(st, g) {
			if m.ID != vm.ID && m.HostID != "" && m.UsesHost() {
				running[m.HostID] = true
			}
		}
		switch g.Type {
		case hostAntiAffinity:
			for h := range running {
				avoid[h] = true
			}
		case hostAffinity:
			if len(running) == 0 {
				continue
			}
			if only == nil {
				only = running
				continue
			}
			for h := range only {
				if !running[h] {
					delete(only, h)
				}
			}
		}
	}
	return avoid, only, applied
}

// placeVM picks a host for a VM being started, in
// DeploymentPlanningManagerImpl.planDeployment's order: a requested host
// (deployVirtualMachine/startVirtualMachine hostid) must fit, affinity
// groups aside, or nothing does; else, with the affinity processors' avoid
// set, the VM's last host if it still fits (considerLastHost); else the
// first host that fits. Departure: the last host must also be Enabled
// (the Java checks its status only; a disabled host reaches the avoid set
// only through avoidDisabledResources). Departure: FirstFitAllocator.allocateTo shuffles the
// hosts under vm.allocation.algorithm's default, random; the simulator
// takes them in creation order (its firstfit) so tests are stable.
// It returns nil when nothing fits.
func placeVM(st *model.State, vm *model.VirtualMachine, requestedHost string) (*model.Host, bool) {
	avoid, only, applied := affinityRules(st, vm)
	ok := func(h *model.Host) bool {
		return !avoid[h.ID] && (only == nil || only[h.ID]) && hostFits(st, h, vm)
	}
	if requestedHost != "" {
		// DeploymentPlanningManagerImpl.planDeployment returns from the
		// specified-host branch before it runs the affinity processors.
		h, found := model.ByID(st.Hosts, requestedHost)
		if found && hostFits(st, h, vm) {
			return h, applied
		}
		return nil, applied
	}
	if h, found := model.ByID(st.Hosts, vm.LastHostID); found && vm.LastHostID != "" && ok(h) {
		return h, applied
	}
	for _, h := range st.Hosts {
		if ok(h) {
			return h, applied
		}
	}
	return nil, applied
}

// capacityError is VirtualMachineManagerImpl.orchestrateStart's
// InsufficientServerCapacityException "Unable to create a deployment for "
// + vmProfile (VirtualMachineProfileImpl.toString is VMInstanceVO.toString,
// vmString's form), as DeployVMCmd.execute/StartVMCmd.execute report it:
// INSUFFICIENT_CAPACITY_ERROR (533), with the affinity hint appended when
// isAffinityApplied.
func capacityError(vm *model.VirtualMachine, affinityApplied bool) *kernel.APIError {
	text := "Unable to create a deployment for " + storage.VMString(vm)
	if affinityApplied {
		text += ", Please check the affinity groups provided, there may not be sufficient capacity to follow them"
	}
	return &kernel.APIError{Code: kernel.CodeCapacity, CSCode: csInsufficientServerCap, Text: text}
}

// startOn runs a VM (VirtualMachineManagerImpl.orchestrateStart): places it,
// creates its volumes on primary storage (VolumeOrchestrator.prepare) and
// moves it to Running.
func startOn(c *kernel.Call, vm *model.VirtualMachine, requestedHost string) error {
	// NetworkOrchestrator.prepare implements the VM's networks first.
	for _, nic := range vm.NICs {
		if n := c.State.Network(nic.NetworkID); n != nil {
			if err := network.ImplementNetwork(c.State, n); err != nil {
				return err
			}
			if err := network.StartTierVPC(c, n); err != nil {
				return err
			}
		}
	}
	h, affinity := placeVM(c.State, vm, requestedHost)
	if h == nil {
		return capacityError(vm, affinity)
	}
	if err := startISOCheck(c, vm); err != nil {
		return err
	}
	vm.HostID, vm.LastHostID, vm.State = h.ID, h.ID, model.VMRunning
	for _, v := range c.State.VolumesOf(vm.ID) {
		v.CreateOnStorage()
	}
	if h.Hypervisor == "VMware" {
		c.State.AssignVMwareBuses(vm)
	}
	c.Changed()
	return nil
}
