package storage

import (
	"fmt"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// cdromDeviceID is the device id CloudStack reserves for the CD-ROM drive on
// every hypervisor (VolumeHostTopologyServiceImpl.CDROM_DEVICE_ID): it is
// never handed out, and asking for it fails ("deviceId should be 0,1,2,4-N").
const cdromDeviceID = 3

// volumeCommands are the commands of volumes.go (registerCommands).
func volumeCommands() []kernel.Command {
	return []kernel.Command{{Name: "listVolumes", IDKind: model.KindVolume, Sync: listVolumes}}
}

// VolumeOwner is the taggable for Volume: the account owning the resource a tag names.
func VolumeOwner(st *model.State, id string) (string, bool) {
	v, ok := model.ByID(st.Volumes, id)
	if !ok || v.Removed != nil {
		return "", false
	}
	return v.AccountID, true
}

// listVolumes never shows expunged volumes. As QueryManagerImpl.searchForVolumes does, name
// is an exact (case-insensitive) match, type a LIKE %type% match, and
// keyword a substring of the name, the type or the state.
func listVolumes(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.Volume]{Key: "volume", ID: (*model.Volume).UUID, Name: func(v *model.Volume) string { return v.Name },
		Keyword: func(v *model.Volume) []string { return []string{v.Name, v.Type, v.State} },
		Zone:    func(v *model.Volume) string { return v.ZoneID }, View: views.VolumeView,
		Owner: func(v *model.Volume) string { return v.AccountID }} // AccountManagerImpl.buildACLSearchCriteria scopes it by projectid
	p := c.Params
	return l.Run(c, c.State.Volumes, func(v *model.Volume) bool {
		return v.Removed == nil && kernel.Like(v.Type, p.Get("type")) && kernel.OptEq(p.Get("virtualmachineid"), v.VMID) &&
			kernel.OptEq(p.Get("diskofferingid"), v.DiskOfferingID) && kernel.OptEq(p.Get("state"), v.State) &&
			kernel.OptEq(p.Get("serviceofferingid"), v.ServiceOfferingID) &&
			tag.TaggedWith(c.State, "Volume", v.ID, p.Map("tags"))
	})
}

// VolumeString is VolumeVO's toString, as CloudStack's error texts show it.
func VolumeString(st *model.State, v *model.Volume) string {
	vm := "null"
	if owner, ok := model.ByID(st.VMs, v.VMID); ok && v.VMID != "" {
		vm = fmt.Sprint(owner.InternalID)
	}
	return fmt.Sprintf("Vol[%d|name=%s|vm=%s|%s]", v.InternalID, v.Name, vm, v.Type)
}
