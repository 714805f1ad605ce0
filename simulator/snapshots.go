package simulator

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

const kindSnapshot = "snapshot"

// Snapshot states the simulator goes through: BackingUp while the job runs
// (CloudStack passes Allocated, Creating, CreatedOnPrimary and BackingUp),
// BackedUp when done, Error when the job failed, Destroyed once deleted.
const (
	snapshotBackingUp = "BackingUp"
	snapshotBackedUp  = "BackedUp"
	snapshotError     = "Error"
	snapshotDestroyed = "Destroyed"
)

func init() {
	register(
		command{name: "createSnapshot", async: createSnapshot},
		command{name: "deleteSnapshot", idKind: kindSnapshot, async: deleteSnapshot},
		command{name: "listSnapshots", idKind: kindSnapshot, sync: listSnapshots},
	)
	paramKinds["snapshotid"] = kindSnapshot
	registerTaggable("Snapshot", func(st *model.State, id string) (string, bool) {
		s, ok := model.ByID(st.Snapshots, id)
		if !ok || s.Removed != nil {
			return "", false
		}
		return s.AccountID, true
	})
}

// snapshotInProgress reports whether a volume has a snapshot being taken,
// which blocks deleting and resizing it.
func snapshotInProgress(st *model.State, volumeID string) bool {
	for _, s := range st.Snapshots {
		if s.Removed == nil && s.State == snapshotBackingUp && strings.EqualFold(s.VolumeID, volumeID) {
			return true
		}
	}
	return false
}

// createSnapshot is SnapshotManagerImpl.allocSnapshot (checked at once: the volume must be Ready,
// i.e. have been created on primary storage by a VM) and the job that
// backs the snapshot up. Without a name CloudStack names it
// <VM host name or "detached">_<volume name>_<yyyyMMddHHmmss UTC>. tags are
// put on the snapshot when it is done.
func createSnapshot(c *Call) (*asyncJob, error) {
	p := c.Params
	v, ok := c.st.LiveVolume(p.Get("volumeid"))
	if !ok {
		return nil, paramError("Creating snapshot failed due to volume:%s doesn't exist", volumeInternalID(c.st, p.Get("volumeid")))
	}
	if v.State != model.VolumeReady {
		return nil, paramError("Volume: %s is not in %s state but %s. Cannot take snapshot.", volumeString(c.st, v), model.VolumeReady, v.State)
	}
	now := c.eng.now()
	name := p.Get("name")
	if name == "" {
		owner := "detached"
		if vm, found := model.ByID(c.st.VMs, v.VMID); found && v.VMID != "" {
			owner = vm.Name
		}
		name = owner + "_" + v.Name + "_" + now.Format("20060102150405")
	}
	id, internal := c.st.NewID(kindSnapshot)
	s := &model.Snapshot{ID: id, InternalID: internal, Name: name, VolumeID: v.ID, ZoneID: v.ZoneID, AccountID: v.AccountID,
		DiskOfferingID: v.DiskOfferingID, SizeBytes: v.SizeBytes, Hypervisor: v.Hypervisor, State: snapshotBackingUp,
		Created: now}
	c.st.Snapshots = append(c.st.Snapshots, s)
	c.changed()
	keys, values := tagPairs(p)
	return &asyncJob{instanceType: "Snapshot", instanceID: s.ID, created: true,
		cmdClass: "org.apache.cloudstack.api.command.user.snapshot.CreateSnapshotCmd",
		run: func() (any, error) {
			s.State = snapshotBackedUp
			for _, k := range keys {
				if values[k] == "" {
					continue
				}
				tagID, _ := c.st.NewID(model.KindResourceTag)
				c.st.ResourceTags = append(c.st.ResourceTags, &model.ResourceTag{ID: tagID, Key: k, Value: values[k],
					ResourceType: "Snapshot", ResourceID: s.ID, AccountID: s.AccountID})
			}
			c.changed()
			return map[string]any{"snapshot": c.snapshotView(s)}, nil
		},
		fail: func(*APIError) {
			s.State = snapshotError
			c.changed()
		},
	}, nil
}

// deleteSnapshot checks in the job: a deleted snapshot is not found, one
// still being backed up cannot go (DefaultSnapshotStrategy.deleteSnapshot,
// which names the snapshot by SnapshotVO.toString; Error and BackedUp go).
func deleteSnapshot(c *Call) (*asyncJob, error) {
	id := c.Params.Get("id")
	return &asyncJob{instanceType: "Snapshot", instanceID: strings.ToLower(id),
		cmdClass: "org.apache.cloudstack.api.command.user.snapshot.DeleteSnapshotCmd",
		run: func() (any, error) {
			s, ok := model.ByID(c.st.Snapshots, id)
			if !ok || s.Removed != nil {
				return nil, paramError("unable to find a snapshot with id %s", snapshotInternalID(s, id))
			}
			if s.State != snapshotBackedUp && s.State != snapshotError {
				return nil, paramError("Can't delete snapshot %s due to it is in %s Status", snapshotString(c.st, s), s.State)
			}
			now := c.eng.now()
			s.State, s.Removed = snapshotDestroyed, &now
			removeTagsOf(c.st, "Snapshot", s.ID)
			c.changed()
			return success(), nil
		}}, nil
}

// listSnapshots never shows deleted snapshots; name and keyword are LIKE
// %x% matches on the name, as SnapshotManagerImpl.listSnapshots does
// (QueryManagerImpl.searchForSnapshots in newer code). Every
// snapshot is MANUAL.
func listSnapshots(c *Call) (any, error) {
	l := lister[*model.Snapshot]{key: "snapshot", id: (*model.Snapshot).UUID, name: func(s *model.Snapshot) string { return s.Name },
		nameLike: true, zone: func(s *model.Snapshot) string { return s.ZoneID }, view: (*Call).snapshotView}
	p := c.Params
	return l.run(c, c.st.Snapshots, func(s *model.Snapshot) bool {
		return s.Removed == nil && optEq(p.Get("volumeid"), s.VolumeID) && optEq(p.Get("snapshottype"), "MANUAL") &&
			optEq(p.Get("intervaltype"), "MANUAL") && taggedWith(c.st, "Snapshot", s.ID, p.Map("tags"))
	})
}

// snapshotString is SnapshotVO.toString: its ToStringBuilder JSON style.
func snapshotString(st *model.State, s *model.Snapshot) string {
	volumeID := int64(0)
	if v, ok := model.ByID(st.Volumes, s.VolumeID); ok {
		volumeID = v.InternalID
	}
	return fmt.Sprintf(`Snapshot {"uuid":"%s","name":"%s","volumeId":%d}`, s.ID, s.Name, volumeID)
}

// snapshotView is SnapshotJoinDaoImpl.newSnapshotResponse.
func (c *Call) snapshotView(s *model.Snapshot) map[string]any {
	out := map[string]any{"id": s.ID, "name": s.Name, "snapshottype": "MANUAL", "intervaltype": "MANUAL",
		"volumeid": s.VolumeID, "created": csTime(s.Created), "state": s.State, "physicalsize": s.SizeBytes,
		"virtualsize": s.SizeBytes, "revertable": false, "hasannotations": false, "chainsize": 0,
		"tags": c.resourceTagViews("Snapshot", s.ID)}
	c.addOwner(out, s.AccountID)
	if z := c.st.Zone(s.ZoneID); z != nil {
		out["zoneid"], out["zonename"] = z.ID, z.Name
	}
	if v, ok := model.ByID(c.st.Volumes, s.VolumeID); ok {
		out["volumename"], out["volumetype"], out["volumestate"] = v.Name, v.Type, v.State
	}
	return out
}
