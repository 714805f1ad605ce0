package orphans

import (
	"fmt"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// listISOs finds the config drive ISOs of listed VMs (attached to one, or
// named after one), those a create_vm that no longer runs left marked
// incomplete, and those whose VM is gone.
func (s *survey) listISOs() error {
	isos, err := s.cloud.OwnISOs("")
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, iso := range isos {
		mark, ok := iso.Mark()
		if !ok || seen[iso.ID] {
			continue
		}
		seen[iso.ID] = true
		row := Row{Director: mark.Director, Kind: KindISO, ID: iso.ID, Name: iso.Name, Created: iso.Created,
			SizeBytes: iso.Size, incomplete: true}
		holder, named := s.isoVMs(iso)
		switch {
		case holder != nil && s.listed[holder.ID] != nil:
			row.Why = "the config drive of a VM listed here"
		case holder != nil:
			continue
		case named != nil && s.listed[named.ID] != nil:
			row.Why = "made for a VM listed here"
		case named != nil || !s.o.old(iso.Created) || mark.Incomplete && marks.ProcessAlive(mark.Owner):
			continue
		case mark.Incomplete:
			row.Why = "create_vm for agent " + mark.Agent + " never finished"
		default:
			row.Why = "the config drive of a VM that is gone"
		}
		s.add(row)
	}
	return nil
}

// isoVMs are the VM the ISO is attached to and the VM it is named after
// (its host name), Expunging ones left out.
func (s *survey) isoVMs(iso cloudstack.ISO) (holder, named *cloudstack.VM) {
	for _, vm := range s.vms {
		if vm.Expunged() {
			continue
		}
		if vm.ISOID == iso.ID {
			holder = vm
		}
		if vm.Name == iso.Name {
			named = vm
		}
	}
	return holder, named
}

// listVolumes finds the disks a create_disk for a VM left unused when it
// died, and, against -known disk CIDs, the CPI's detached disks the
// director does not know.
func (s *survey) listVolumes() error {
	vols, err := s.cloud.DataVolumes()
	if err != nil {
		return err
	}
	s.detached, s.listedDisks = map[string]bool{}, map[string]bool{}
	for _, v := range vols {
		if !v.Gone() && v.VMID == "" {
			s.detached[v.ID] = true
		}
		if v.Gone() || v.VMID != "" || !s.o.old(v.Created) {
			continue
		}
		row := Row{Director: v.Tags[marks.DirectorTag], Kind: KindVolume, ID: v.ID, Name: v.Name,
			Created: v.Created, SizeBytes: v.SizeGB << 30}
		creator := marks.DiskCreator(v.Name)
		switch {
		case s.o.Known.Has(v.ID, v.Name):
			continue
		case v.DiskMark().UnusedForVM() && marks.ProcessAlive(creator):
			continue // its create_disk still runs
		case v.DiskMark().UnusedForVM():
			row.incomplete = true
			row.Why = fmt.Sprintf("create_disk by %s: never attached", creator)
		case (marks.MadeByCreateDisk(v.Name) || row.Director != "") && s.o.Known.Covers(KindVolume):
			row.Why = "the CPI's detached disk, unknown to the director (-known)"
		default:
			continue
		}
		s.listedDisks[v.ID] = true
		s.add(row)
	}
	return nil
}

// listSnapshots finds the snapshots a snapshot_disk that no longer runs
// left marked incomplete; the CPI's snapshots of a disk listed here; and,
// against -known snapshot CIDs, the CPI's complete snapshots the director
// does not know (a snapshot_disk killed after CloudStack cleared the mark,
// before the director got the CID), but those of a detached disk: the
// director keeps an orphaned disk's snapshots with it, and no bosh command
// lists them.
func (s *survey) listSnapshots() error {
	snaps, err := s.cloud.AllSnapshots()
	if err != nil {
		return err
	}
	for _, snap := range snaps {
		if snap.Busy() || snap.Gone() || !s.o.old(snap.Created) {
			continue
		}
		row := Row{Director: snap.Tags[marks.DirectorTag], Kind: KindSnapshot, ID: snap.ID, Name: snap.Name,
			Created: snap.Created, SizeBytes: snap.Size}
		owner, incomplete := marks.IncompleteOwner(snap.Tags)
		switch {
		case s.o.Known.Has(snap.ID) || !incomplete && !marks.MadeBySnapshotDisk(snap.Name) && row.Director == "":
			continue // the director's, or not the CPI's
		case incomplete && marks.ProcessAlive(owner):
			continue // its snapshot_disk still runs
		case incomplete:
			row.incomplete = true
			row.Why = fmt.Sprintf("snapshot_disk by %s never finished", owner)
		case s.listedDisks[snap.VolumeID]:
			row.Why = "a snapshot of a disk listed here"
		case s.o.Known.Covers(KindSnapshot) && !s.detached[snap.VolumeID]:
			row.Why = "the CPI's snapshot, unknown to the director (-known)"
		default:
			continue
		}
		s.add(row)
	}
	return nil
}

// listTemplates finds the templates a create_stemcell that no longer runs
// left marked incomplete and, against -known stemcell CIDs, the CPI's
// stemcells the director does not know. A template has a row per zone:
// one is listed.
func (s *survey) listTemplates() error {
	templates, err := s.cloud.OwnTemplates("")
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, t := range templates {
		mark, ok := t.Mark()
		if !ok || seen[t.ID] || !s.o.old(t.Created) {
			continue
		}
		seen[t.ID] = true
		row := Row{Director: mark.Director, Kind: KindTemplate, ID: t.ID, Name: t.Name, Created: t.Created,
			SizeBytes: t.Size, zoneID: t.ZoneID}
		switch {
		case mark.Incomplete && !marks.ProcessAlive(mark.Owner):
			row.incomplete = true
			row.Why = fmt.Sprintf("create_stemcell by %s never finished (%s)", mark.Owner, firstOf(t.Status, "no status"))
		case !mark.Incomplete && s.o.Known.Unknown(KindTemplate, t.ID, stemcellCID(t, mark)):
			row.Why = "the CPI's stemcell, unknown to the director (-known)"
		default:
			continue
		}
		s.add(row)
	}
	return nil
}

// stemcellCID is the CID create_stemcell answered for the template
// (cpi/stemcells.go): a stemcell whose VMs get a settings ISO has its id
// prefixed, configdrive- for bosh.io's OpenStack stemcells, cdrom- for its
// vSphere stemcells (VMware templates).
func stemcellCID(t cloudstack.Template, m marks.Template) string {
	switch {
	case m.ConfigDrive && t.Hypervisor == hypervisor.VMware:
		return marks.CDROMCIDPrefix + t.ID
	case m.ConfigDrive:
		return marks.ConfigDriveCIDPrefix + t.ID
	}
	return t.ID
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
