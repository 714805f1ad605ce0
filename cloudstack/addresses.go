package cloudstack

import (
	"fmt"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// PublicIP is an allocated public address.
type PublicIP struct {
	ID        string
	IP        string
	StaticNAT bool
	SourceNAT bool // the network's source NAT address: never static NAT
	VMID      string
	NetworkID string
	VPCID     string // the VPC whose address it is; its tiers share it
	Tags      map[string]string
	Allocated time.Time // when it was acquired
}

// FindPublicIP returns the allocated address ip in a zone, or nil.
func (c *Client) FindPublicIP(zoneID, ip string) (*PublicIP, error) {
	p := c.cs.Address.NewListPublicIpAddressesParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetZoneid(zoneID)
	p.SetIpaddress(ip)
	return c.onePublicIP(p)
}

// PublicIPByID returns the allocated address with this id, or nil.
func (c *Client) PublicIPByID(id string) (*PublicIP, error) {
	p := c.cs.Address.NewListPublicIpAddressesParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetId(id)
	return c.onePublicIP(p)
}

func (c *Client) onePublicIP(p *csgo.ListPublicIpAddressesParams) (*PublicIP, error) {
	p.SetAllocatedonly(true)
	p.SetListall(true)
	resp, err := c.cs.Address.ListPublicIpAddresses(p)
	if err != nil {
		if err = c.fail("listPublicIpAddresses", err); IsNoSuchEntity(err) {
			return nil, nil
		}
		return nil, err
	}
	for _, a := range resp.PublicIpAddresses {
		return toPublicIP(a), nil
	}
	return nil, nil
}

func toPublicIP(a *csgo.PublicIpAddress) *PublicIP {
	return &PublicIP{ID: a.Id, IP: a.Ipaddress, StaticNAT: a.Isstaticnat, SourceNAT: a.Issourcenat, VMID: a.Virtualmachineid,
		NetworkID: a.Associatednetworkid, VPCID: a.Vpcid, Tags: tagMap(a.Tags), Allocated: csTime(a.Allocated)}
}

// AcquirePublicIP associates a specific free public address with a
// network and tags it as the CPI's.
func (c *Client) AcquirePublicIP(network Network, ip string) (*PublicIP, error) {
	p := c.cs.Address.NewAssociateIpAddressParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	addr := &PublicIP{IP: ip, NetworkID: network.ID}
	if network.VPCID != "" {
		// A tier's address is its VPC's, no tier's until a rule or static
		// NAT uses it: CloudStack refuses a tier's networkid here
		// (NetworkServiceImpl.associateIPToNetwork).
		p.SetVpcid(network.VPCID)
		addr.NetworkID, addr.VPCID = "", network.VPCID
	} else {
		p.SetNetworkid(network.ID)
	}
	p.SetIpaddress(ip)
	r, err := c.cs.Address.AssociateIpAddress(p)
	if err != nil {
		return nil, c.fail("associateIpAddress", err)
	}
	addr.ID = r.Id
	if _, err := c.waitJob("associateIpAddress", r.JobID); err != nil {
		return addr, err // the job may still finish: the caller releases it
	}
	if err := c.SetTags(ResourceIP, r.Id, nil, map[string]string{marks.AcquiredTag: "true"}); err != nil {
		return addr, err
	}
	return addr, nil
}

// EnableStaticNAT points a public address at a VM's NIC on a network.
func (c *Client) EnableStaticNAT(ipID, vmID, networkID string) error {
	p := c.cs.NAT.NewEnableStaticNatParams(ipID, vmID)
	p.SetNetworkid(networkID)
	_, err := c.cs.NAT.EnableStaticNat(p)
	return c.fail("enableStaticNat", err)
}

// DisableStaticNAT releases a public address's static NAT.
func (c *Client) DisableStaticNAT(ipID string) error {
	r, err := c.cs.NAT.DisableStaticNat(c.cs.NAT.NewDisableStaticNatParams(ipID))
	if err != nil {
		return c.fail("disableStaticNat", err)
	}
	_, err = c.waitJob("disableStaticNat", r.JobID)
	return err
}

// ReleasePublicIP gives a public address back to the zone.
func (c *Client) ReleasePublicIP(ipID string) error {
	r, err := c.cs.Address.DisassociateIpAddress(c.cs.Address.NewDisassociateIpAddressParams(ipID))
	if err != nil {
		return c.fail("disassociateIpAddress", err)
	}
	_, err = c.waitJob("disassociateIpAddress", r.JobID)
	return err
}

// FindOrCreateAffinityGroup returns the id of the named affinity group,
// creating it with type kind when it does not exist.
func (c *Client) FindOrCreateAffinityGroup(name, kind string) (string, error) {
	id, found, err := c.findAffinityGroup(name)
	switch {
	case err != nil:
		return "", err
	case id != "" && found != kind:
		return "", fmt.Errorf("affinity group %q exists with type %q, not %q", name, found, kind)
	case id != "":
		return id, nil
	}
	id, err = c.createAffinityGroup(name, kind)
	if err != nil {
		// Parallel create_vm calls of one instance group race to create
		// its group; the loser uses the winner's.
		if again, _, _ := c.findAffinityGroup(name); again != "" {
			return again, nil
		}
	}
	return id, err
}

func (c *Client) createAffinityGroup(name, kind string) (string, error) {
	p := c.cs.AffinityGroup.NewCreateAffinityGroupParams(name, kind)
	if err := c.inProject(p); err != nil {
		return "", err
	}
	r, err := c.cs.AffinityGroup.CreateAffinityGroup(p)
	if err != nil {
		return "", c.fail("createAffinityGroup", err)
	}
	if _, err := c.waitJob("createAffinityGroup", r.JobID); err != nil {
		return "", err
	}
	return r.Id, nil
}

// findAffinityGroup returns the id and type of the group named exactly
// name, or "" when there is none.
func (c *Client) findAffinityGroup(name string) (id, kind string, err error) {
	p := c.cs.AffinityGroup.NewListAffinityGroupsParams()
	if err := c.inProject(p); err != nil {
		return "", "", err
	}
	p.SetName(name)
	resp, err := c.cs.AffinityGroup.ListAffinityGroups(p)
	if err != nil {
		return "", "", c.fail("listAffinityGroups", err)
	}
	for _, g := range resp.AffinityGroups {
		if g.Name == name {
			return g.Id, g.Type, nil
		}
	}
	return "", "", nil
}

// AcquiredFor says the CPI acquired this address for the VM, by the
// marks the two carry (marks.Address.AcquiredFor).
func (a *PublicIP) AcquiredFor(vm *VM) bool {
	networks := make([]string, len(vm.NICs))
	for i, n := range vm.NICs {
		networks[i] = n.NetworkID
	}
	addr := marks.Address{IP: a.IP, VMID: a.VMID, NetworkID: a.NetworkID, SourceNAT: a.SourceNAT, Tags: a.Tags}
	return addr.AcquiredFor(vm.ID, vm.DisplayName, networks)
}
