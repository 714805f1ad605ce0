package simulator

import (
	"fmt"
	"strings"
)

// zoneHypervisor is the hypervisor of a zone's hosts: CloudStack takes a
// zone's hypervisors from its clusters.
func (st *state) zoneHypervisor(zoneID string) string {
	for _, cl := range st.Clusters {
		if cl.ZoneID == zoneID {
			return cl.Hypervisor
		}
	}
	return defaultHypervisor
}

func (st *state) osTypeByDescription(desc string) string {
	for _, o := range st.OSTypes {
		if o.Description == desc {
			return o.ID
		}
	}
	return ""
}

// hostFits is the capacity check of CloudStack's host allocators: enough
// cores of enough speed, and free CPU (cores × MHz) and memory for the VM
// (overprovisioning factors are 1.0).
func (st *state) hostFits(h *Host, vm *VirtualMachine) bool {
	if h.State != "Up" || h.ResourceState != "Enabled" || h.ZoneID != vm.ZoneID || !strings.EqualFold(h.Hypervisor, vm.Hypervisor) ||
		!st.hasPrimaryStorage(h) {
		return false
	}
	if vm.CPUNumber > h.CPUNumber || int64(vm.CPUSpeed) > h.CPUSpeed {
		return false
	}
	cpu, mem := st.allocation(h.ID)
	return cpu+int64(vm.CPUNumber)*int64(vm.CPUSpeed) <= int64(h.CPUNumber)*h.CPUSpeed &&
		mem+int64(vm.Memory)<<20 <= h.MemoryTotal
}

// affinityRules are the host constraints of a VM's affinity groups: host
// anti-affinity avoids the hosts running other members; host affinity
// restricts the VM to the hosts running other members, if any run (strict,
// like CloudStack's HostAffinityProcessor).
func (st *state) affinityRules(vm *VirtualMachine) (avoid, only map[string]bool, applied bool) {
	avoid = map[string]bool{}
	for _, gid := range vm.AffinityGroupIDs {
		g, ok := byID(st.AffinityGroups, gid)
		if !ok {
			continue
		}
		applied = true
		running := map[string]bool{}
		for _, m := range st.members(g) {
			if m.ID != vm.ID && m.HostID != "" && m.usesHost() {
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

// placeVM picks a host for a VM being started: the requested host, else its
// last host, else the first host that fits in the zone's host order
// (CloudStack's firstfit allocator; its default, random, would shuffle).
// It returns nil when nothing fits.
func (st *state) placeVM(vm *VirtualMachine, requestedHost string) (*Host, bool) {
	avoid, only, applied := st.affinityRules(vm)
	ok := func(h *Host) bool {
		return !avoid[h.ID] && (only == nil || only[h.ID]) && st.hostFits(h, vm)
	}
	if requestedHost != "" {
		h, found := byID(st.Hosts, requestedHost)
		if found && ok(h) {
			return h, applied
		}
		return nil, applied
	}
	if h, found := byID(st.Hosts, vm.LastHostID); found && vm.LastHostID != "" && ok(h) {
		return h, applied
	}
	for _, h := range st.Hosts {
		if ok(h) {
			return h, applied
		}
	}
	return nil, applied
}

// capacityError is the InsufficientServerCapacityException a failed
// deployment ends with, as DeployVMCmd/StartVMCmd report it: errorcode 533.
func capacityError(vm *VirtualMachine, affinityApplied bool) *APIError {
	text := fmt.Sprintf(`Unable to create a deployment for VM instance {"id": "%d", "name": "%s", "uuid": "%s", "type"="User"}`,
		vm.InternalID, vm.InstanceName, vm.ID)
	if affinityApplied {
		text += ", Please check the affinity groups provided, there may not be sufficient capacity to follow them"
	}
	return &APIError{Code: codeCapacity, CSCode: csInsufficientServerCap, Text: text}
}

// startOn runs a VM: places it, creates its volumes on primary storage and
// moves it to Running.
func (c *Call) startOn(vm *VirtualMachine, requestedHost string) error {
	// NetworkOrchestrator.prepare implements the VM's networks first.
	for _, nic := range vm.NICs {
		if n := c.st.network(nic.NetworkID); n != nil {
			if err := c.st.implementNetwork(n); err != nil {
				return err
			}
		}
	}
	h, affinity := c.st.placeVM(vm, requestedHost)
	if h == nil {
		return capacityError(vm, affinity)
	}
	vm.HostID, vm.LastHostID, vm.State = h.ID, h.ID, "Running"
	for _, v := range c.st.volumesOf(vm.ID) {
		v.createOnStorage()
	}
	c.changed()
	return nil
}
