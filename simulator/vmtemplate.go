package simulator

// deployTemplate is what deployVirtualMachine takes from its template.
type deployTemplate struct {
	osTypeID        string
	hypervisor      string
	passwordEnabled bool
	sizeBytes       int64 // the ROOT volume's size unless rootdisksize asks for more
}

// templateForDeploy resolves deployVirtualMachine's templateid in zoneID:
// the template must exist, be ready in that zone, and suit the zone's
// hypervisor, as UserVmManagerImpl insists.
func (c *Call) templateForDeploy(zoneID, templateID string) (deployTemplate, error) {
	t, _ := byID(c.st.Templates, templateID)
	if t == nil || t.Removed != nil {
		return deployTemplate{}, paramError("Unable to use template %s", templateID)
	}
	cp := t.copyIn(zoneID)
	if cp == nil || cp.DownloadState != dlDownloaded {
		return deployTemplate{}, paramError("Template %s has not been completely downloaded to zone %s", t.ID, zoneID)
	}
	hv := c.st.zoneHypervisor(zoneID)
	if t.Hypervisor != hv {
		return deployTemplate{}, paramError("Template %s is for hypervisor %s, but zone %s runs %s", t.ID, t.Hypervisor, zoneID, hv)
	}
	size := cp.Size
	if size == 0 {
		size = 5 << 30
	}
	return deployTemplate{osTypeID: t.OSTypeID, hypervisor: hv, passwordEnabled: t.PasswordEnabled, sizeBytes: size}, nil
}

func init() {
	registerTaggable("Template", func(st *state, id string) (string, bool) {
		t, _ := byID(st.Templates, id)
		if t == nil || t.Removed != nil {
			return "", false
		}
		return t.AccountID, true
	})
}
