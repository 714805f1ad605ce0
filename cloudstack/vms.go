package cloudstack

import (
	"encoding/json"
	"fmt"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// VM is what the CPI needs to know of a CloudStack virtual machine.
type VM struct {
	ID          string
	Name        string
	State       string
	ZoneID      string
	Hypervisor  Hypervisor
	NICs        []NIC
	PublicIPID  string // the static NAT address, if any
	PublicIP    string
	ServiceName string
	Tags        map[string]string
}

// NIC is one of a VM's network interfaces.
type NIC struct {
	ID        string
	NetworkID string
	IP        string
	Netmask   string
	Gateway   string
	MAC       string
	IsDefault bool
}

// Gone says CloudStack has let go of the VM, or is about to.
func (vm *VM) Gone() bool {
	return vm.State == "Destroyed" || vm.State == "Expunging" || vm.State == "Expunged"
}

// AwaitingExpunge says the VM is Destroyed but not expunged: it still holds
// its host name and guest addresses until CloudStack's expunge thread
// removes it, expunge.delay after the destroy (UserVmManagerImpl.expunge
// releases them; VirtualMachineManagerImpl.advanceExpunge cleans the NICs).
func (vm *VM) AwaitingExpunge() bool { return vm.State == "Destroyed" }

// VMWithIP implements API.
func (c *Client) VMWithIP(networkID, ip string) (*VM, error) {
	p := c.cs.VirtualMachine.NewListVirtualMachinesParams()
	p.SetListall(true)
	p.SetNetworkid(networkID)
	resp, err := c.cs.VirtualMachine.ListVirtualMachines(p)
	if err != nil {
		return nil, c.fail("listVirtualMachines", err)
	}
	for _, v := range resp.VirtualMachines {
		vm := toVM(v)
		for _, n := range vm.NICs {
			if n.NetworkID == networkID && n.IP == ip {
				return vm, nil
			}
		}
	}
	return nil, nil
}

// FindVM implements API.
func (c *Client) FindVM(ref string) (*VM, error) {
	p := c.cs.VirtualMachine.NewListVirtualMachinesParams()
	p.SetListall(true)
	if csgo.IsID(ref) {
		p.SetId(ref)
	} else {
		// name= is a substring filter in CloudStack: compare exactly below.
		p.SetName(ref)
	}
	resp, err := c.cs.VirtualMachine.ListVirtualMachines(p)
	if err != nil {
		if err = c.fail("listVirtualMachines", err); IsNoSuchEntity(err) {
			return nil, nil
		}
		return nil, err
	}
	var found []*csgo.VirtualMachine
	for _, vm := range resp.VirtualMachines {
		if vm.Id == ref || vm.Name == ref {
			found = append(found, vm)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return toVM(found[0]), nil
	}
	return nil, fmt.Errorf("%d CloudStack VMs are named %q; refusing to guess which one is meant", len(found), ref)
}

// parseVM reads a virtualmachine object from a job result.
func parseVM(raw json.RawMessage) (*VM, error) {
	var v csgo.VirtualMachine
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("reading CloudStack's virtualmachine: %w", err)
	}
	return toVM(&v), nil
}

func toVM(v *csgo.VirtualMachine) *VM {
	vm := &VM{ID: v.Id, Name: v.Name, State: v.State, ZoneID: v.Zoneid, Hypervisor: Hypervisor(v.Hypervisor),
		PublicIPID: v.Publicipid, PublicIP: v.Publicip, ServiceName: v.Serviceofferingname, Tags: tagMap(v.Tags)}
	for _, n := range v.Nic {
		vm.NICs = append(vm.NICs, NIC{
			ID: n.Id, NetworkID: n.Networkid, IP: n.Ipaddress, Netmask: n.Netmask,
			Gateway: n.Gateway, MAC: n.Macaddress, IsDefault: n.Isdefault,
		})
	}
	return vm
}
