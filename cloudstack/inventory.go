package cloudstack

// Inventory lists, in every account the keys may see, the kinds of
// resource the CPI creates: what `cloudstack-cpi orphans` reads the CPI's
// marks from. Templates and ISOs are the account's own (OwnedTemplates,
// OwnedISOs). The listings ask for no page: CloudStack answers up to
// default.page.size (500) rows.
type Inventory interface {
	// AllVMs lists VMs in every state CloudStack shows.
	AllVMs() ([]*VM, error)
	// DataVolumes lists data volumes (DATADISK) in every state.
	DataVolumes() ([]Volume, error)
	// AllSnapshots lists volume snapshots with their tags.
	AllSnapshots() ([]*Snapshot, error)
	// AllocatedPublicIPs lists the allocated public addresses.
	AllocatedPublicIPs() ([]*PublicIP, error)
	// AllLBRules lists the public load-balancer rules.
	AllLBRules() ([]LBRule, error)
}

var _ Inventory = (*Client)(nil)

// AllVMs implements Inventory.
func (c *Client) AllVMs() ([]*VM, error) {
	p := c.cs.VirtualMachine.NewListVirtualMachinesParams()
	p.SetListall(true)
	resp, err := c.cs.VirtualMachine.ListVirtualMachines(p)
	if err != nil {
		return nil, c.fail("listVirtualMachines", err)
	}
	out := make([]*VM, 0, len(resp.VirtualMachines))
	for _, v := range resp.VirtualMachines {
		out = append(out, toVM(v))
	}
	return out, nil
}

// DataVolumes implements Inventory.
func (c *Client) DataVolumes() ([]Volume, error) {
	p := c.cs.Volume.NewListVolumesParams()
	p.SetType("DATADISK")
	p.SetListall(true)
	resp, err := c.cs.Volume.ListVolumes(p)
	if err != nil {
		return nil, c.fail("listVolumes", err)
	}
	out := make([]Volume, 0, len(resp.Volumes))
	for _, v := range resp.Volumes {
		out = append(out, toVolume(v))
	}
	return out, nil
}

// AllSnapshots implements Inventory.
func (c *Client) AllSnapshots() ([]*Snapshot, error) {
	return c.listSnapshots(c.cs.Snapshot.NewListSnapshotsParams())
}

// AllocatedPublicIPs implements Inventory.
func (c *Client) AllocatedPublicIPs() ([]*PublicIP, error) {
	p := c.cs.Address.NewListPublicIpAddressesParams()
	p.SetAllocatedonly(true)
	p.SetListall(true)
	resp, err := c.cs.Address.ListPublicIpAddresses(p)
	if err != nil {
		return nil, c.fail("listPublicIpAddresses", err)
	}
	out := make([]*PublicIP, 0, len(resp.PublicIpAddresses))
	for _, a := range resp.PublicIpAddresses {
		out = append(out, toPublicIP(a))
	}
	return out, nil
}

// AllLBRules implements Inventory.
func (c *Client) AllLBRules() ([]LBRule, error) {
	return c.listLBRules(c.cs.LoadBalancer.NewListLoadBalancerRulesParams())
}
