package simulator

// deployTemplate is what deployVirtualMachine takes from its template.
type deployTemplate struct {
	osTypeID        string
	hypervisor      string
	passwordEnabled bool
	sizeBytes       int64 // the ROOT volume's size unless rootdisksize asks for more
}

// templateForDeploy resolves deployVirtualMachine's templateid in zoneID.
func (c *Call) templateForDeploy(zoneID, templateID string) (deployTemplate, error) {
	// MERGE: replace with a lookup in the template table: must exist, be ready in the zone (CloudStack: "Template … is not ready"/431), and be the zone's hypervisor
	if !uuidPattern.MatchString(templateID) {
		return deployTemplate{}, paramError("Unable to use template %s", templateID)
	}
	return deployTemplate{osTypeID: c.st.osTypeByDescription("Other Linux (64-bit)"),
		hypervisor: c.st.zoneHypervisor(zoneID), sizeBytes: 5 << 30}, nil
}
