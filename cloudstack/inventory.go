package cloudstack

import (
	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// Inventory lists, in every account the keys may see, the kinds of
// resource the CPI creates: what `cloudstack-cpi orphans` reads the CPI's
// marks from. Templates and ISOs are the account's own (OwnedTemplates,
// OwnedISOs). Each listing reads every page.
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

// page is one page to ask for; the zero page sends no paging parameters.
type page struct{ number, size int }

// set gives a listing's parameters the page.
func (p page) set(params pageParams) {
	if p.number > 0 {
		params.SetPage(p.number)
		params.SetPagesize(p.size)
	}
}

// allPages reads every page of a listing. Asked without paging parameters,
// CloudStack answers at most default.page.size rows, and count says how
// many match (BaseListCmd.getPageSizeVal); a larger pagesize is refused
// (BaseListCmd.getPageSize), so the next pages ask for as many rows as the
// first answer held, page n starting at row size × (n − 1)
// (BaseListCmd.getStartIndex). A page that comes back empty ends it: rows
// removed meanwhile shorten the listing.
func allPages[T any](list func(page) ([]T, int, error)) ([]T, error) {
	rows, count, err := list(page{})
	if err != nil {
		return nil, err
	}
	size := len(rows)
	for n := 2; size > 0 && len(rows) < count; n++ {
		more, _, err := list(page{number: n, size: size})
		if err != nil {
			return nil, err
		}
		if len(more) == 0 {
			break
		}
		rows = append(rows, more...)
	}
	return rows, nil
}

// pageParams are the paging parameters every listing takes.
type pageParams interface {
	SetPage(int)
	SetPagesize(int)
}

// everyRow reads every page of the listing list sends with p and converts
// each row.
func everyRow[P pageParams, T, R any](p P, list func(P) ([]T, int, error), row func(T) R) ([]R, error) {
	raw, err := allPages(func(pg page) ([]T, int, error) {
		pg.set(p)
		return list(p)
	})
	if err != nil {
		return nil, err
	}
	out := make([]R, 0, len(raw))
	for _, r := range raw {
		out = append(out, row(r))
	}
	return out, nil
}

// AllVMs implements Inventory.
func (c *Client) AllVMs() ([]*VM, error) {
	raw, err := allPages(func(pg page) ([]*csgo.VirtualMachine, int, error) {
		p := c.cs.VirtualMachine.NewListVirtualMachinesParams()
		p.SetListall(true)
		pg.set(p)
		if err := c.inProject(p); err != nil {
			return nil, 0, err
		}
		resp, err := c.cs.VirtualMachine.ListVirtualMachines(p)
		if err != nil {
			return nil, 0, c.fail("listVirtualMachines", err)
		}
		return resp.VirtualMachines, resp.Count, nil
	})
	out := make([]*VM, 0, len(raw))
	for _, v := range raw {
		out = append(out, toVM(v))
	}
	return out, err
}

// DataVolumes implements Inventory.
func (c *Client) DataVolumes() ([]Volume, error) {
	raw, err := allPages(func(pg page) ([]*csgo.Volume, int, error) {
		p := c.cs.Volume.NewListVolumesParams()
		p.SetType("DATADISK")
		p.SetListall(true)
		pg.set(p)
		if err := c.inProject(p); err != nil {
			return nil, 0, err
		}
		resp, err := c.cs.Volume.ListVolumes(p)
		if err != nil {
			return nil, 0, c.fail("listVolumes", err)
		}
		return resp.Volumes, resp.Count, nil
	})
	out := make([]Volume, 0, len(raw))
	for _, v := range raw {
		out = append(out, toVolume(v))
	}
	return out, err
}

// AllSnapshots implements Inventory.
func (c *Client) AllSnapshots() ([]*Snapshot, error) {
	raw, err := allPages(func(pg page) ([]*csgo.Snapshot, int, error) {
		p := c.cs.Snapshot.NewListSnapshotsParams()
		p.SetListall(true)
		pg.set(p)
		if err := c.inProject(p); err != nil {
			return nil, 0, err
		}
		resp, err := c.cs.Snapshot.ListSnapshots(p)
		if err != nil {
			return nil, 0, c.fail("listSnapshots", err)
		}
		return resp.Snapshots, resp.Count, nil
	})
	out := make([]*Snapshot, 0, len(raw))
	for _, s := range raw {
		out = append(out, toSnapshot(s))
	}
	return out, err
}

// AllocatedPublicIPs implements Inventory.
func (c *Client) AllocatedPublicIPs() ([]*PublicIP, error) {
	raw, err := allPages(func(pg page) ([]*csgo.PublicIpAddress, int, error) {
		p := c.cs.Address.NewListPublicIpAddressesParams()
		p.SetAllocatedonly(true)
		p.SetListall(true)
		pg.set(p)
		if err := c.inProject(p); err != nil {
			return nil, 0, err
		}
		resp, err := c.cs.Address.ListPublicIpAddresses(p)
		if err != nil {
			return nil, 0, c.fail("listPublicIpAddresses", err)
		}
		return resp.PublicIpAddresses, resp.Count, nil
	})
	out := make([]*PublicIP, 0, len(raw))
	for _, a := range raw {
		out = append(out, toPublicIP(a))
	}
	return out, err
}

// AllLBRules implements Inventory.
func (c *Client) AllLBRules() ([]LBRule, error) {
	raw, err := allPages(func(pg page) ([]*csgo.LoadBalancerRule, int, error) {
		p := c.cs.LoadBalancer.NewListLoadBalancerRulesParams()
		p.SetListall(true)
		pg.set(p)
		if err := c.inProject(p); err != nil {
			return nil, 0, err
		}
		resp, err := c.cs.LoadBalancer.ListLoadBalancerRules(p)
		if err != nil {
			return nil, 0, c.fail("listLoadBalancerRules", err)
		}
		return resp.LoadBalancerRules, resp.Count, nil
	})
	out := make([]LBRule, 0, len(raw))
	for _, r := range raw {
		out = append(out, toLBRule(r))
	}
	return out, err
}
