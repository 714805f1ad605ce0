package simulator

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/transfers"
)

func init() {
	register(
		command{name: "deleteTemplate", idKind: model.KindTemplate, async: deleteTemplate},
	)
}

// deleteTemplate removes a template from one zone or all (TemplateManagerImpl.deleteTemplate
// and HypervisorTemplateAdapter.delete). The checks run in the job, as in
// CloudStack, so they fail the job rather than the request.
func deleteTemplate(c *Call) (*asyncJob, error) {
	idParam, zoneParam, forced := c.Params.Get("id"), c.Params.Get("zoneid"), c.Params.Bool("forced", false)
	t, _ := model.ByID(c.st.Templates, idParam)
	spec := &asyncJob{instanceType: "Template",
		cmdClass: "org.apache.cloudstack.api.command.user.template.DeleteTemplateCmd"}
	if t != nil {
		spec.instanceID = t.ID
	}
	spec.run = func() (any, error) {
		if err := c.removeTemplate(t, idParam, zoneParam, forced); err != nil {
			return nil, err
		}
		return map[string]any{"success": true}, nil
	}
	return spec, nil
}

func (c *Call) removeTemplate(t *model.Template, idParam, zoneParam string, forced bool) *APIError {
	if t == nil || t.Removed != nil {
		return paramError("Unable to find Template with id %s", internalIDText(t, idParam))
	}
	// TemplateManagerImpl.deleteTemplate: VMs using the template first, then
	// the adapter's prepareDelete and delete
	var users []string
	for _, vm := range c.st.VMs {
		// Hook: deployed VMs record their template; expunged ones no longer count.
		if vm.Removed == nil && strings.EqualFold(vm.TemplateID, t.ID) && optEq(zoneParam, vm.ZoneID) {
			users = append(users, fmt.Sprintf(`VM instance {"id":%d,"instanceName":%q,"uuid":%q}`, vm.InternalID, vm.InstanceName, vm.ID))
		}
	}
	if len(users) > 0 && !forced {
		msg := fmt.Sprintf("Unable to delete template [%s] because there are [%d] VM instances using it.", t.Describe(), len(users))
		if c.Account.Type == 1 {
			msg += fmt.Sprintf(" Instances list: [%s].", strings.Join(users, ","))
		}
		return paramError("%s", msg)
	}
	// TemplateAdapterBase.prepareDelete
	if t.Format == "ISO" {
		return paramError("Please specify a valid Template.")
	}
	if t.State == tsNotUploaded || t.State == tsUploadInProgress {
		return paramError("The template is either getting uploaded or it may be initiated shortly, please wait for it to be completed")
	}
	if t.Type == "SYSTEM" {
		return paramError("The DomR template cannot be deleted.")
	}
	var doomed []*model.TemplateCopy
	for _, cp := range t.LiveCopies() {
		if zoneParam == "" || strings.EqualFold(cp.ZoneID, zoneParam) {
			doomed = append(doomed, cp)
		}
	}
	// HypervisorTemplateAdapter.delete: a CloudRuntimeException (530), so an
	// upload the monitor has seen start (DOWNLOAD_IN_PROGRESS) is refused too
	for _, cp := range doomed {
		if cp.DownloadState == model.DlInProgress {
			return internalError("Please specify a template that is not currently being downloaded.")
		}
	}
	now := c.eng.now()
	for _, cp := range doomed {
		cp.Removed = &now
		c.eng.xfer.Stop(transfers.Key(t.ID, cp.ZoneID))
		c.eng.xfer.RemoveImage(t.ID, cp.ZoneID)
	}
	if len(t.LiveCopies()) == 0 {
		t.Removed, t.State = &now, tsInactive
	}
	c.changed()
	return nil
}

// internalIDText is the numeric id CloudStack prints for a template.
func internalIDText(t *model.Template, param string) string {
	if t != nil {
		return fmt.Sprint(t.InternalID)
	}
	return param
}
