package cloudstack

import (
	"encoding/json"
	"fmt"
	"strconv"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// DeploySpec is one deployVirtualMachine.
type DeploySpec struct {
	Name              string
	DisplayName       string
	ZoneID            string
	ServiceOfferingID string
	TemplateID        string
	// What a customized offering leaves open: CPUs, CPUSpeed (MHz),
	// MemoryMB; each is sent only when not 0, since CloudStack refuses a
	// value the offering sets.
	CPUs, CPUSpeed, MemoryMB int
	RootDiskGB               int
	// The ephemeral disk, created inside the deploy with the VM.
	DataDiskOfferingID string
	DataDiskGB         int
	NICs               []NICRequest
	KeyPair            string
	AffinityGroupIDs   []string
	SecurityGroups     []string // names
	UserData           string   // base64
	// Stopped deploys without starting (startvm=false): the job ends with
	// the VM Stopped and on no host (DeployVMCmd.execute), for an ISO to be
	// attached before StartVM.
	Stopped bool
	// VMware, when set, deploys the VM as bosh.io's vSphere stemcell needs
	// it (VMwareGuest).
	VMware *VMwareGuest
	// Tags go on the VM as soon as it exists, their job beside the
	// deploy's (tagbeside.go).
	Tags map[string]string
	// Accepted, if set, runs once CloudStack has accepted the deploy (the
	// VM exists, its job runs) and before the job is awaited; its error
	// ends the deploy, leaving the VM for the caller to remove.
	Accepted func(vmID string) error
}

// NICRequest asks for a NIC on a network, with a static IP or not.
type NICRequest struct {
	NetworkID string
	IP        string
	MAC       string
}

// DeployVM deploys and waits, tagging the VM beside the deploy's job. The
// VM's id comes back even when the job or its tags failed, so the caller can
// clean up what CloudStack left.
func (c *Client) DeployVM(s DeploySpec) (string, *VM, error) {
	p := c.deployParams(s)
	if err := c.inProject(p); err != nil {
		return "", nil, err
	}
	r, err := c.cs.VirtualMachine.DeployVirtualMachine(p)
	if err != nil {
		return "", nil, c.fail("deployVirtualMachine", err)
	}
	if s.Accepted != nil {
		if err := s.Accepted(r.Id); err != nil {
			return r.Id, nil, err
		}
	}
	tagJob, tagErr := c.tagBeside(ResourceVM, r.Id, s.Tags)
	result, err := c.waitJob("deployVirtualMachine", r.JobID)
	if err != nil {
		return r.Id, nil, err
	}
	vm, err := vmFromJob(result)
	if err != nil {
		return r.Id, nil, err
	}
	if vm.Tags, err = c.awaitTags(ResourceVM, vm.ID, tagJob, tagErr, vm.Tags, s.Tags); err != nil {
		return r.Id, nil, err
	}
	return vm.ID, vm, nil
}

// deployParams is the spec as deployVirtualMachine's parameters; what the
// spec leaves at its zero value is not sent.
func (c *Client) deployParams(s DeploySpec) *csgo.DeployVirtualMachineParams {
	p := c.cs.VirtualMachine.NewDeployVirtualMachineParams(s.ServiceOfferingID, s.TemplateID, s.ZoneID)
	p.SetName(s.Name)
	p.SetDisplayname(s.DisplayName)
	p.SetIptonetworklist(s.nicList())
	if details := s.details(); len(details) > 0 {
		p.SetDetails(details)
	}
	if s.RootDiskGB > 0 {
		p.SetRootdisksize(int64(s.RootDiskGB))
	}
	if s.DataDiskOfferingID != "" {
		p.SetDiskofferingid(s.DataDiskOfferingID)
		if s.DataDiskGB > 0 {
			p.SetSize(int64(s.DataDiskGB))
		}
	}
	if s.KeyPair != "" {
		p.SetKeypair(s.KeyPair)
	}
	if len(s.AffinityGroupIDs) > 0 {
		p.SetAffinitygroupids(s.AffinityGroupIDs)
	}
	if len(s.SecurityGroups) > 0 {
		p.SetSecuritygroupnames(s.SecurityGroups)
	}
	if s.UserData != "" {
		p.SetUserdata(s.UserData)
	}
	if s.Stopped {
		p.SetStartvm(false)
	}
	if s.VMware != nil {
		p.SetBoottype(bootTypeUEFI)
		p.SetBootmode(bootModeLegacy)
	}
	return p
}

// nicList is iptonetworklist: a NIC on each network, with its address
// and MAC when the spec names them.
func (s DeploySpec) nicList() []map[string]string {
	var nics []map[string]string
	for _, n := range s.NICs {
		m := map[string]string{"networkid": n.NetworkID}
		if n.IP != "" {
			m["ip"] = n.IP
		}
		if n.MAC != "" {
			m["mac"] = n.MAC
		}
		nics = append(nics, m)
	}
	return nics
}

// details is what a customized offering leaves open, as the deploy's
// details (cpuNumber, cpuSpeed, memory).
func (s DeploySpec) details() map[string]string {
	details := map[string]string{}
	for key, n := range map[string]int{"cpuNumber": s.CPUs, "cpuSpeed": s.CPUSpeed, "memory": s.MemoryMB} {
		if n > 0 {
			details[key] = strconv.Itoa(n)
		}
	}
	if s.VMware != nil {
		for k, v := range vmwareDetails() {
			details[k] = v
		}
	}
	return details
}

func vmFromJob(result json.RawMessage) (*VM, error) {
	var wrapped struct {
		VM json.RawMessage `json:"virtualmachine"`
	}
	if err := json.Unmarshal(result, &wrapped); err != nil || wrapped.VM == nil {
		return nil, fmt.Errorf("CloudStack's deploy job answered without a virtualmachine: %s", truncateText(string(result), 200))
	}
	return parseVM(wrapped.VM)
}

// DestroyVM destroys a VM, expunging it when asked, and deletes the listed
// data volumes with it.
func (c *Client) DestroyVM(id string, expunge bool, volumeIDs []string) error {
	p := c.cs.VirtualMachine.NewDestroyVirtualMachineParams(id)
	if expunge {
		p.SetExpunge(true)
	}
	if len(volumeIDs) > 0 {
		p.SetVolumeids(volumeIDs)
	}
	r, err := c.cs.VirtualMachine.DestroyVirtualMachine(p)
	if err != nil {
		return c.fail("destroyVirtualMachine", err)
	}
	_, err = c.waitJob("destroyVirtualMachine", r.JobID)
	return err
}

// ExpungeVM expunges a Destroyed VM, freeing its host name and addresses.
func (c *Client) ExpungeVM(id string) error {
	r, err := c.cs.VirtualMachine.ExpungeVirtualMachine(c.cs.VirtualMachine.NewExpungeVirtualMachineParams(id))
	if err != nil {
		return c.fail("expungeVirtualMachine", err)
	}
	_, err = c.waitJob("expungeVirtualMachine", r.JobID)
	return err
}

// StartVM starts a Stopped VM and waits.
func (c *Client) StartVM(id string) error {
	r, err := c.cs.VirtualMachine.StartVirtualMachine(c.cs.VirtualMachine.NewStartVirtualMachineParams(id))
	if err != nil {
		return c.fail("startVirtualMachine", err)
	}
	_, err = c.waitJob("startVirtualMachine", r.JobID)
	return err
}

// RebootVM reboots a running VM, or starts a stopped one.
func (c *Client) RebootVM(vm *VM) error {
	if vm.Stopped() {
		return c.StartVM(vm.ID)
	}
	r, err := c.cs.VirtualMachine.RebootVirtualMachine(c.cs.VirtualMachine.NewRebootVirtualMachineParams(vm.ID))
	if err != nil {
		return c.fail("rebootVirtualMachine", err)
	}
	_, err = c.waitJob("rebootVirtualMachine", r.JobID)
	return err
}

// SetDisplayName renames a VM in CloudStack's UI; its host name stays.
func (c *Client) SetDisplayName(id, name string) error {
	p := c.cs.VirtualMachine.NewUpdateVirtualMachineParams(id)
	p.SetDisplayname(name)
	_, err := c.cs.VirtualMachine.UpdateVirtualMachine(p)
	return c.fail("updateVirtualMachine", err)
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
