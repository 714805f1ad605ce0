package template

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/transfers"
)

// templateDeleteCommands are the commands of templates_delete.go (registerCommands).
func templateDeleteCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "deleteTemplate", IDKind: model.KindTemplate, Async: deleteTemplate},
	}
}

// deleteTemplate removes a template from one zone or all (TemplateManagerImpl.deleteTemplate
// and HypervisorTemplateAdapter.delete). The checks run in the job, as in
// CloudStack, so they fail the job rather than the request.
func deleteTemplate(c *kernel.Call) (*kernel.AsyncJob, error) {
	idParam, zoneParam, forced := c.Params.Get("id"), c.Params.Get("zoneid"), c.Params.Bool("forced", false)
	t, _ := model.ByID(c.State.Templates, idParam)
	spec := &kernel.AsyncJob{InstanceType: "Template",
		CmdClass: "org.apache.cloudstack.api.command.user.template.DeleteTemplateCmd"}
	if t != nil {
		spec.InstanceID = t.ID
	}
	spec.Run = func() (any, error) {
		if err := removeTemplate(c, t, idParam, zoneParam, forced); err != nil {
			return nil, err
		}
		return map[string]any{"success": true}, nil
	}
	return spec, nil
}

func removeTemplate(c *kernel.Call, t *model.Template, idParam, zoneParam string, forced bool) *kernel.APIError {
	if t == nil || t.Removed != nil {
		return kernel.ParamError("Unable to find Template with id %s", internalIDText(t, idParam))
	}
	// TemplateManagerImpl.deleteTemplate: VMs using the template first, then
	// the adapter's prepareDelete and delete
	var users []string
	for _, vm := range c.State.VMs {
		// Hook: deployed VMs record their template; expunged ones no longer count.
		if vm.Removed == nil && strings.EqualFold(vm.TemplateID, t.ID) && kernel.OptEq(zoneParam, vm.ZoneID) {
			users = append(users, fmt.Sprintf(`VM instance {"id":%d,"instanceName":%q,"uuid":%q}`, vm.InternalID, vm.InstanceName, vm.ID))
		}
	}
	if len(users) > 0 && !forced {
		msg := fmt.Sprintf("Unable to delete template [%s] because there are [%d] VM instances using it.", t.Describe(), len(users))
		if c.Account.Type == 1 {
			msg += fmt.Sprintf(" Instances list: [%s].", strings.Join(users, ","))
		}
		return kernel.ParamError("%s", msg)
	}
	// TemplateAdapterBase.prepareDelete
	if t.Format == "ISO" {
		return kernel.ParamError("Please specify a valid Template.")
	}
	if t.State == tsNotUploaded || t.State == tsUploadInProgress {
		return kernel.ParamError("The template is either getting uploaded or it may be initiated shortly, please wait for it to be completed")
	}
	if t.Type == "SYSTEM" {
		return kernel.ParamError("The DomR template cannot be deleted.")
	}
	return removeCopies(c, t, zoneParam)
}

// removeCopies is HypervisorTemplateAdapter.delete, for templates and ISOs:
// the copies in the zone (or all) go, and the template with the last one.
func removeCopies(c *kernel.Call, t *model.Template, zoneParam string) *kernel.APIError {
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
			return kernel.InternalError("Please specify a template that is not currently being downloaded.")
		}
	}
	now := c.Engine.Now()
	for _, cp := range doomed {
		cp.Removed = &now
		c.Engine.Xfer.Stop(transfers.Key(t.ID, cp.ZoneID))
		c.Engine.Xfer.RemoveImage(t.ID, cp.ZoneID)
	}
	if len(t.LiveCopies()) == 0 {
		t.Removed, t.State = &now, tsInactive
	}
	c.Changed()
	return nil
}

// internalIDText is the numeric id CloudStack prints for a template.
func internalIDText(t *model.Template, param string) string {
	if t != nil {
		return fmt.Sprint(t.InternalID)
	}
	return param
}
