package vm

import (
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// deployTemplate is what deployVirtualMachine takes from its template.
type deployTemplate struct {
	osTypeID        string
	hypervisor      string
	passwordEnabled bool
	sizeBytes       int64 // the ROOT volume's size unless rootdisksize asks for more
}

// templateForDeploy resolves deployVirtualMachine's templateid in zoneID, in
// the order deployVirtualMachine's create phase checks it (synchronously,
// before the job): UserVmManagerImpl.deployVirtualMachine ("Unable to use
// template", 431), createVirtualMachine's template_zone_ref look-up ("The
// template <id> is not available for use", 431, id the internal one), then
// the ROOT volume's size, TemplateManagerImpl.getTemplateSize, which needs a
// DOWNLOADED copy in the zone (TemplateDataStoreDao.
// findByTemplateZoneDownloadStatus: a CloudRuntimeException, 530, naming the
// template's and the zone's internal ids). Departure: a template of another hypervisor than the zone's is
// refused here with the simulator's text; CloudStack lets the planner find
// no host for it (533).
func templateForDeploy(c *kernel.Call, zoneID, templateID string) (deployTemplate, error) {
	t, _ := model.ByID(c.State.Templates, templateID)
	if t == nil || t.Removed != nil {
		return deployTemplate{}, kernel.ParamError("Unable to use template %s", templateID)
	}
	cp := t.CopyIn(zoneID)
	if cp == nil {
		return deployTemplate{}, kernel.ParamError("The template %d is not available for use", t.InternalID)
	}
	if cp.DownloadState != model.DlDownloaded {
		return deployTemplate{}, kernel.InternalError("Template %d has not been completely downloaded to zone %d", t.InternalID, c.State.Zone(zoneID).InternalID)
	}
	hv := c.State.ZoneHypervisor(zoneID)
	if t.Hypervisor != hv {
		return deployTemplate{}, kernel.ParamError("Template %s is for hypervisor %s, but zone %s runs %s", t.ID, t.Hypervisor, zoneID, hv)
	}
	// The ROOT volume takes the copy's size (getTemplateSize).
	size := cp.Size
	if size == 0 {
		size = 5 << 30
	}
	return deployTemplate{osTypeID: t.OSTypeID, hypervisor: hv, passwordEnabled: t.PasswordEnabled, sizeBytes: size}, nil
}

// TemplateOwner is the taggable for Template: the account owning the resource a tag names.
func TemplateOwner(st *model.State, id string) (string, bool) {
	t, _ := model.ByID(st.Templates, id)
	if t == nil || t.Removed != nil {
		return "", false
	}
	return t.AccountID, true
}
