package storage

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// Snapshot states the simulator goes through: BackingUp while the job runs
// (CloudStack passes Allocated, Creating, CreatedOnPrimary and BackingUp),
// BackedUp when done, Error when the job failed, Destroyed once deleted.
const (
	snapshotBackingUp = "BackingUp"
	snapshotBackedUp  = "BackedUp"
	snapshotError     = "Error"
	snapshotDestroyed = "Destroyed"
)

// snapshotCommands are the commands of snapshots.go (registerCommands).
func snapshotCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createSnapshot", Async: createSnapshot},
		{Name: "deleteSnapshot", IDKind: model.KindSnapshot, Async: deleteSnapshot},
		{Name: "listSnapshots", IDKind: model.KindSnapshot, Sync: listSnapshots},
	}
}

// SnapshotOwner is the taggable for Snapshot: the account owning the resource a tag names.
func SnapshotOwner(st *model.State, id string) (string, bool) {
	s, ok := model.ByID(st.Snapshots, id)
	if !ok || s.Removed != nil {
		return "", false
	}
	return s.AccountID, true
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
func createSnapshot(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	v, ok := c.State.LiveVolume(p.Get("volumeid"))
	if !ok {
		return nil, kernel.ParamError("Creating snapshot failed due to volume:%s doesn't exist", volumeInternalID(c.State, p.Get("volumeid")))
	}
	if v.State != model.VolumeReady {
		return nil, kernel.ParamError("Volume: %s is not in %s state but %s. Cannot take snapshot.", VolumeString(c.State, v), model.VolumeReady, v.State)
	}
	now := c.Engine.Now()
	name := p.Get("name")
	if name == "" {
		owner := "detached"
		if vm, found := model.ByID(c.State.VMs, v.VMID); found && v.VMID != "" {
			owner = vm.Name
		}
		name = owner + "_" + v.Name + "_" + now.Format("20060102150405")
	}
	id, internal := c.State.NewID(model.KindSnapshot)
	s := &model.Snapshot{ID: id, InternalID: internal, Name: name, VolumeID: v.ID, ZoneID: v.ZoneID, AccountID: v.AccountID,
		DiskOfferingID: v.DiskOfferingID, SizeBytes: v.SizeBytes, Hypervisor: v.Hypervisor, State: snapshotBackingUp,
		Created: now}
	c.State.Snapshots = append(c.State.Snapshots, s)
	c.Changed()
	keys, values := tag.Pairs(p)
	return &kernel.AsyncJob{InstanceType: "Snapshot", InstanceID: s.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.user.snapshot.CreateSnapshotCmd",
		Run: func() (any, error) {
			s.State = snapshotBackedUp
			for _, k := range keys {
				if values[k] == "" {
					continue
				}
				tagID, _ := c.State.NewID(model.KindResourceTag)
				c.State.ResourceTags = append(c.State.ResourceTags, &model.ResourceTag{ID: tagID, Key: k, Value: values[k],
					ResourceType: "Snapshot", ResourceID: s.ID, AccountID: s.AccountID})
			}
			c.Changed()
			return map[string]any{"snapshot": views.SnapshotView(c, s)}, nil
		},
		Fail: func(*kernel.APIError) {
			s.State = snapshotError
			c.Changed()
		},
	}, nil
}

// deleteSnapshot checks in the job: a deleted snapshot is not found, one
// still being backed up cannot go (DefaultSnapshotStrategy.deleteSnapshot,
// which names the snapshot by SnapshotVO.toString; Error and BackedUp go).
func deleteSnapshot(c *kernel.Call) (*kernel.AsyncJob, error) {
	id := c.Params.Get("id")
	return &kernel.AsyncJob{InstanceType: "Snapshot", InstanceID: strings.ToLower(id),
		CmdClass: "org.apache.cloudstack.api.command.user.snapshot.DeleteSnapshotCmd",
		Run: func() (any, error) {
			s, ok := model.ByID(c.State.Snapshots, id)
			if !ok || s.Removed != nil {
				return nil, kernel.ParamError("unable to find a snapshot with id %s", snapshotInternalID(s, id))
			}
			if s.State != snapshotBackedUp && s.State != snapshotError {
				return nil, kernel.ParamError("Can't delete snapshot %s due to it is in %s Status", snapshotString(c.State, s), s.State)
			}
			now := c.Engine.Now()
			s.State, s.Removed = snapshotDestroyed, &now
			tag.RemoveTagsOf(c.State, "Snapshot", s.ID)
			c.Changed()
			return kernel.Success(), nil
		}}, nil
}

// listSnapshots never shows deleted snapshots; name and keyword are LIKE
// %x% matches on the name, as SnapshotManagerImpl.listSnapshots does
// (QueryManagerImpl.searchForSnapshots in newer code). Every
// snapshot is MANUAL.
func listSnapshots(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.Snapshot]{Key: "snapshot", ID: (*model.Snapshot).UUID, Name: func(s *model.Snapshot) string { return s.Name },
		NameLike: true, Zone: func(s *model.Snapshot) string { return s.ZoneID }, View: views.SnapshotView,
		Owner: func(s *model.Snapshot) string { return s.AccountID }} // AccountManagerImpl.buildACLSearchCriteria scopes it by projectid
	p := c.Params
	return l.Run(c, c.State.Snapshots, func(s *model.Snapshot) bool {
		return s.Removed == nil && kernel.OptEq(p.Get("volumeid"), s.VolumeID) && kernel.OptEq(p.Get("snapshottype"), "MANUAL") &&
			kernel.OptEq(p.Get("intervaltype"), "MANUAL") && tag.TaggedWith(c.State, "Snapshot", s.ID, p.Map("tags"))
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
