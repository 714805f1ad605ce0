package cloudstack

import (
	"fmt"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// ServiceOffering is a compute offering.
type ServiceOffering struct {
	ID         string
	Name       string
	CPUs       int
	CPUSpeed   int // MHz
	MemoryMB   int
	Customized bool
}

// DiskOffering is a disk offering; Customized ones take a size.
type DiskOffering struct {
	ID         string
	Name       string
	SizeGB     int64
	Customized bool
}

// ServiceOfferings lists every compute offering the account can use.
func (c *Client) ServiceOfferings() ([]ServiceOffering, error) {
	p := c.cs.ServiceOffering.NewListServiceOfferingsParams()
	resp, err := c.cs.ServiceOffering.ListServiceOfferings(p)
	if err != nil {
		return nil, c.fail("listServiceOfferings", err)
	}
	out := make([]ServiceOffering, 0, len(resp.ServiceOfferings))
	for _, o := range resp.ServiceOfferings {
		out = append(out, toServiceOffering(o))
	}
	return out, nil
}

// FindServiceOffering resolves a compute offering by id or exact name.
func (c *Client) FindServiceOffering(ref string) (*ServiceOffering, error) {
	p := c.cs.ServiceOffering.NewListServiceOfferingsParams()
	if csgo.IsID(ref) {
		p.SetId(ref)
	} else {
		p.SetName(ref)
	}
	resp, err := c.cs.ServiceOffering.ListServiceOfferings(p)
	if err = c.fail("listServiceOfferings", err); err != nil && !IsNoSuchEntity(err) {
		return nil, err
	}
	if resp != nil {
		for _, o := range resp.ServiceOfferings {
			if o.Id == ref || o.Name == ref {
				so := toServiceOffering(o)
				return &so, nil
			}
		}
	}
	return nil, fmt.Errorf("CloudStack has no compute offering %q", ref)
}

func toServiceOffering(o *csgo.ServiceOffering) ServiceOffering {
	return ServiceOffering{ID: o.Id, Name: o.Name, CPUs: o.Cpunumber, CPUSpeed: o.Cpuspeed, MemoryMB: o.Memory,
		Customized: o.Iscustomized}
}

// CustomDiskOffering returns a customized disk offering (one that takes a
// size), preferring one named "Custom".
func (c *Client) CustomDiskOffering() (*DiskOffering, error) {
	resp, err := c.cs.DiskOffering.ListDiskOfferings(c.cs.DiskOffering.NewListDiskOfferingsParams())
	if err != nil {
		return nil, c.fail("listDiskOfferings", err)
	}
	var found *DiskOffering
	for _, o := range resp.DiskOfferings {
		if o.Iscustomized && (found == nil || o.Name == "Custom") {
			found = &DiskOffering{ID: o.Id, Name: o.Name, SizeGB: o.Disksize, Customized: true}
		}
	}
	if found == nil {
		return nil, fmt.Errorf("CloudStack offers no customized disk offering; name one with ephemeral_disk_offering")
	}
	return found, nil
}

// FindDiskOffering resolves a disk offering by id or exact name.
func (c *Client) FindDiskOffering(ref string) (*DiskOffering, error) {
	p := c.cs.DiskOffering.NewListDiskOfferingsParams()
	if csgo.IsID(ref) {
		p.SetId(ref)
	} else {
		p.SetName(ref)
	}
	resp, err := c.cs.DiskOffering.ListDiskOfferings(p)
	if err = c.fail("listDiskOfferings", err); err != nil && !IsNoSuchEntity(err) {
		return nil, err
	}
	if resp != nil {
		for _, o := range resp.DiskOfferings {
			if o.Id == ref || o.Name == ref {
				return &DiskOffering{ID: o.Id, Name: o.Name, SizeGB: o.Disksize, Customized: o.Iscustomized}, nil
			}
		}
	}
	return nil, fmt.Errorf("CloudStack has no disk offering %q", ref)
}
