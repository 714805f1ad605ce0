package cloudstack

import (
	"fmt"
	"strings"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// Zone is a CloudStack availability zone.
type Zone struct {
	ID   string
	Name string
}

// FindZones resolves zone names or ids exactly, in one listZones call, and
// names every one that does not exist.
func (c *Client) FindZones(refs []string) ([]Zone, error) {
	p := c.cs.Zone.NewListZonesParams()
	resp, err := c.cs.Zone.ListZones(p)
	if err != nil {
		return nil, c.fail("listZones", err)
	}
	var found []Zone
	var missing []string
	for _, ref := range refs {
		z := matchZone(resp.Zones, ref)
		if z == nil {
			missing = append(missing, ref)
			continue
		}
		found = append(found, *z)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("CloudStack at %s has no zone %s", c.endpoint, strings.Join(quoteAll(missing), ", "))
	}
	return found, nil
}

func matchZone(zones []*csgo.Zone, ref string) *Zone {
	for _, z := range zones {
		if z.Id == ref || z.Name == ref {
			return &Zone{ID: z.Id, Name: z.Name}
		}
	}
	return nil
}

// ZoneHypervisors lists the hypervisors of a zone's clusters
// (listHypervisors zoneid=).
func (c *Client) ZoneHypervisors(zoneID string) ([]Hypervisor, error) {
	p := c.cs.Hypervisor.NewListHypervisorsParams()
	p.SetZoneid(zoneID)
	resp, err := c.cs.Hypervisor.ListHypervisors(p)
	if err != nil {
		return nil, c.fail("listHypervisors", err)
	}
	out := make([]Hypervisor, 0, len(resp.Hypervisors))
	for _, h := range resp.Hypervisors {
		out = append(out, Hypervisor(h.Name))
	}
	return out, nil
}

// FindOSType resolves an OS type by its exact description ("Other Linux
// (64-bit)") or id.
func (c *Client) FindOSType(ref string) (string, error) {
	p := c.cs.GuestOS.NewListOsTypesParams()
	if IsID(ref) {
		p.SetId(ref)
	} else {
		p.SetDescription(ref)
	}
	resp, err := c.cs.GuestOS.ListOsTypes(p)
	if err != nil {
		return "", c.fail("listOsTypes", err)
	}
	for _, t := range resp.OsTypes {
		if t.Id == ref || t.Description == ref {
			return t.Id, nil
		}
	}
	return "", fmt.Errorf("CloudStack has no OS type %q (see listOsTypes)", ref)
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
