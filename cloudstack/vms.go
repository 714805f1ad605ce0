package cloudstack

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// VM is what the CPI needs to know of a CloudStack virtual machine.
type VM struct {
	ID          string
	Name        string
	DisplayName string
	State       VMState
	ZoneID      string
	Hypervisor  Hypervisor
	NICs        []NIC
	PublicIPID  string // the static NAT address, if any
	PublicIP    string
	// ISOID is the ISO attached to the VM, if any.
	ISOID string
	Tags  map[string]string
	// Created is when CloudStack made it; zero when unreadable.
	Created time.Time
}

// NIC is one of a VM's network interfaces.
type NIC struct {
	ID        string
	NetworkID string
	IP        string
	Netmask   string
	Gateway   string
	MAC       string
}

// earlierVMPrefix names the VMs both earlier CPIs deploy: cpivm-<uuid>,
// which is also their CID.
const earlierVMPrefix = "cpivm-"

// ResizesAttachedDisks says CloudStack may change the size of a disk while
// it is attached to this VM: XenServer resizes only offline, so a VM there
// must be Stopped (VolumeApiServiceImpl.orchestrateResizeVolume: "The VM
// must be stopped or the disk detached in order to resize with the
// XenServer Hypervisor."); KVM and VMware resize data disks online.
func (vm *VM) ResizesAttachedDisks() bool {
	return vm.Hypervisor != hypervisor.XenServer || vm.Stopped()
}

// MadeByEarlierCPI says the Java CPI or Orange's Go CPI deployed the VM.
func (vm *VM) MadeByEarlierCPI() bool { return strings.HasPrefix(vm.Name, earlierVMPrefix) }

// HadLBs says whether the VM's create_vm had load-balancer rules
// (marks.HadLBs).
func (vm *VM) HadLBs() bool { return marks.HadLBs(vm.Tags) }

// HadConfigDrive says whether the VM's create_vm made it an ISO of its
// agent's settings (marks.HadConfigDrive).
func (vm *VM) HadConfigDrive() bool { return marks.HadConfigDrive(vm.Tags) }

// VMWithIP implements API.
func (c *Client) VMWithIP(networkID, ip string) (*VM, error) {
	p := c.cs.VirtualMachine.NewListVirtualMachinesParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
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
	found, err := findByIDOrName(c, c.cs.VirtualMachine.NewListVirtualMachinesParams(), ref,
		func(p *csgo.ListVirtualMachinesParams) ([]*csgo.VirtualMachine, error) {
			resp, err := c.cs.VirtualMachine.ListVirtualMachines(p)
			if err != nil {
				return nil, c.fail("listVirtualMachines", err)
			}
			return resp.VirtualMachines, nil
		}, func(v *csgo.VirtualMachine) (string, string) { return v.Id, v.Name }, "VMs")
	if found == nil {
		return nil, err
	}
	return toVM(*found), nil
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
	vm := &VM{ID: v.Id, Name: v.Name, DisplayName: v.Displayname, State: VMState(v.State), ZoneID: v.Zoneid,
		Hypervisor: Hypervisor(v.Hypervisor), PublicIPID: v.Publicipid, PublicIP: v.Publicip, ISOID: v.Isoid, Tags: tagMap(v.Tags),
		Created: csTime(v.Created)}
	for _, n := range v.Nic {
		vm.NICs = append(vm.NICs, NIC{
			ID: n.Id, NetworkID: n.Networkid, IP: n.Ipaddress, Netmask: n.Netmask,
			Gateway: n.Gateway, MAC: n.Macaddress,
		})
	}
	return vm
}

// IncompleteMark reads the mark of a VM whose create_vm never finished;
// false for a complete VM, the operator's, or one renamed since.
func (vm *VM) IncompleteMark() (marks.VM, bool) { return marks.ReadVM(vm.DisplayName) }

// IncompleteVMs lists the VMs (Destroyed ones included, where the account
// may see them) that carry an incomplete mark of this director.
func (c *Client) IncompleteVMs(director string) ([]*VM, error) {
	p := c.cs.VirtualMachine.NewListVirtualMachinesParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetListall(true)
	p.SetKeyword(marks.DirectorKeyword(director))
	resp, err := c.cs.VirtualMachine.ListVirtualMachines(p)
	if err != nil {
		return nil, c.fail("listVirtualMachines", err)
	}
	var out []*VM
	for _, v := range resp.VirtualMachines {
		// keyword is a substring match (and _ a wildcard): compare exactly.
		vm := toVM(v)
		if m, ok := vm.IncompleteMark(); ok && m.Director == director {
			out = append(out, vm)
		}
	}
	return out, nil
}

// AgentVMs lists this director's VMs for the agent: those tagged with its
// agent_id, and those still carrying the incomplete mark of a create_vm for
// it, whose tags may not be there yet.
func (c *Client) AgentVMs(director, agent string) ([]*VM, error) {
	p := c.cs.VirtualMachine.NewListVirtualMachinesParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetListall(true)
	p.SetTags(map[string]string{marks.AgentTag: agent})
	resp, err := c.cs.VirtualMachine.ListVirtualMachines(p)
	if err != nil {
		return nil, c.fail("listVirtualMachines", err)
	}
	var out []*VM
	for _, v := range resp.VirtualMachines {
		if vm := toVM(v); vm.Tags[marks.DirectorTag] == director && vm.Tags[marks.AgentTag] == agent {
			out = append(out, vm)
		}
	}
	incomplete, err := c.IncompleteVMs(director)
	if err != nil {
		return nil, err
	}
	want := marks.NewVM(director, "", agent).Agent
	for _, vm := range incomplete {
		m, _ := vm.IncompleteMark()
		if m.Agent == want && !slices.ContainsFunc(out, func(o *VM) bool { return o.ID == vm.ID }) {
			out = append(out, vm)
		}
	}
	return out, nil
}
