package cloudstack

import csgo "github.com/apache/cloudstack-go/v2/cloudstack"

// Volume is a CloudStack volume: ROOT or DATADISK.
type Volume struct {
	ID       string
	Name     string
	Type     string
	DeviceID int64
	VMID     string
	ZoneID   string
	SizeGB   int64
	State    string
	Tags     map[string]string
}

// VMVolumes lists the volumes attached to a VM.
func (c *Client) VMVolumes(vmID string) ([]Volume, error) {
	p := c.cs.Volume.NewListVolumesParams()
	p.SetVirtualmachineid(vmID)
	p.SetListall(true)
	resp, err := c.cs.Volume.ListVolumes(p)
	if err != nil {
		if err = c.fail("listVolumes", err); IsNoSuchEntity(err) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]Volume, 0, len(resp.Volumes))
	for _, v := range resp.Volumes {
		out = append(out, toVolume(v))
	}
	return out, nil
}

func toVolume(v *csgo.Volume) Volume {
	return Volume{ID: v.Id, Name: v.Name, Type: v.Type, DeviceID: v.Deviceid, VMID: v.Virtualmachineid,
		ZoneID: v.Zoneid, SizeGB: v.Size >> 30, State: v.State, Tags: tagMap(v.Tags)}
}

func tagMap(tags []csgo.Tags) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[t.Key] = t.Value
	}
	return m
}
