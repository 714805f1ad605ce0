package cloudstack

import (
	"encoding/json"
	"fmt"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// Snapshot is a volume snapshot.
type Snapshot struct {
	ID, Name, VolumeID, State string
	Tags                      map[string]string
	// Created is when CloudStack made it; Size its physical size in bytes.
	Created time.Time
	Size    int64
}

// Gone says CloudStack has deleted the snapshot or is deleting it
// (Snapshot.State Destroying, Destroyed).
func (s *Snapshot) Gone() bool { return s.State == "Destroying" || s.State == "Destroyed" }

// Busy says a job still works on the snapshot: Snapshot.State's states
// before BackedUp or Error (Allocated, Creating, CreatedOnPrimary,
// BackingUp) and Copying. deleteSnapshot refuses it then
// (DefaultSnapshotStrategy.deleteSnapshot).
func (s *Snapshot) Busy() bool {
	switch s.State {
	case "Allocated", "Creating", "CreatedOnPrimary", "BackingUp", "Copying":
		return true
	}
	return false
}

func toSnapshot(s *csgo.Snapshot) *Snapshot {
	tags := map[string]string{}
	for _, t := range s.Tags {
		tags[t.Key] = t.Value
	}
	return &Snapshot{ID: s.Id, Name: s.Name, VolumeID: s.Volumeid, State: s.State, Tags: tags, Created: csTime(s.Created),
		Size: s.Physicalsize}
}

// VolumeSnapshots lists a volume's snapshots.
func (c *Client) VolumeSnapshots(volumeID string) ([]*Snapshot, error) {
	p := c.cs.Snapshot.NewListSnapshotsParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetVolumeid(volumeID)
	return c.listSnapshots(p)
}

// CreateSnapshot snapshots a volume under a name the caller made unique, so
// that after a lost answer the snapshot can be found again; tagged in the
// same call (so no untagged snapshot is left if tagging would fail), and
// waits until it is backed up. Tags with empty values are left out, as
// SetTags does.
func (c *Client) CreateSnapshot(volumeID, name string, tags map[string]string) (*Snapshot, error) {
	p := c.cs.Snapshot.NewCreateSnapshotParams(volumeID)
	p.SetName(name)
	if clean := sendableTags(tags); len(clean) > 0 {
		p.SetTags(clean)
	}
	r, err := c.cs.Snapshot.CreateSnapshot(p)
	if err != nil {
		return nil, c.fail("createSnapshot", err)
	}
	result, err := c.waitJob("createSnapshot", r.JobID)
	if err != nil {
		return nil, err
	}
	var wrapped struct {
		Snapshot *csgo.Snapshot `json:"snapshot"`
	}
	if err := json.Unmarshal(result, &wrapped); err != nil || wrapped.Snapshot == nil {
		return nil, fmt.Errorf("CloudStack's createSnapshot job answered without a snapshot")
	}
	return toSnapshot(wrapped.Snapshot), nil
}

// FindSnapshot returns a snapshot by id, or nil.
func (c *Client) FindSnapshot(id string) (*Snapshot, error) {
	if !IsID(id) {
		return nil, nil
	}
	p := c.cs.Snapshot.NewListSnapshotsParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetId(id)
	return c.findSnapshot(p, func(s *Snapshot) bool { return s.ID == id })
}

// SnapshotNamed returns the volume's snapshot of that exact name, or nil.
// listSnapshots matches name as LIKE %name% (QueryManagerImpl.
// searchForSnapshots), so the exact comparison is ours.
func (c *Client) SnapshotNamed(volumeID, name string) (*Snapshot, error) {
	p := c.cs.Snapshot.NewListSnapshotsParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetVolumeid(volumeID)
	p.SetName(name)
	return c.findSnapshot(p, func(s *Snapshot) bool { return s.Name == name })
}

func (c *Client) findSnapshot(p *csgo.ListSnapshotsParams, match func(*Snapshot) bool) (*Snapshot, error) {
	snaps, err := c.listSnapshots(p)
	for _, s := range snaps {
		if match(s) {
			return s, nil
		}
	}
	return nil, err
}

// listSnapshots runs a listing in every account the keys may see; a
// volume that is gone has none.
func (c *Client) listSnapshots(p *csgo.ListSnapshotsParams) ([]*Snapshot, error) {
	p.SetListall(true)
	resp, err := c.cs.Snapshot.ListSnapshots(p)
	if err != nil {
		if err = c.fail("listSnapshots", err); IsNoSuchEntity(err) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]*Snapshot, 0, len(resp.Snapshots))
	for _, s := range resp.Snapshots {
		out = append(out, toSnapshot(s))
	}
	return out, nil
}

// DeleteSnapshot deletes a snapshot.
func (c *Client) DeleteSnapshot(id string) error {
	r, err := c.cs.Snapshot.DeleteSnapshot(c.cs.Snapshot.NewDeleteSnapshotParams(id))
	if err != nil {
		return c.fail("deleteSnapshot", err)
	}
	_, err = c.waitJob("deleteSnapshot", r.JobID)
	return err
}
