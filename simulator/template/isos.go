package template

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// ISOs are templates with format ISO, hypervisor None and 64 bits
// (IsoUploadParams.<init>, TemplateAdapterBase.prepare(isIso=true, ...)):
// they share the store-copy state machine, the SSVM's receiver and download,
// and the upload monitor with templates.

// isoFormat is ImageFormat.ISO; isoHypervisor is HypervisorType.None.
const (
	isoFormat     = "ISO"
	isoHypervisor = "None"
)

// isoCommands are the commands of isos.go (registerCommands).
func isoCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listIsos", IDKind: model.KindTemplate, Sync: listIsos},
		{Name: "registerIso", Sync: registerIso},
		{Name: "deleteIso", IDKind: model.KindTemplate, Async: deleteIso},
	}
}

// getUploadParamsForIso registers an ISO whose bytes the client POSTs
// (TemplateManagerImpl.registerIsoForPostUpload). format is required by the
// schema but its value is ignored: IsoUploadParams always sets ISO.
func getUploadParamsForIso(c *kernel.Call) (any, error) {
	p := c.Params
	// GetUploadParamsForIsoCmd.validateRequest
	if p.Get("zoneid") == "-1" {
		return nil, kernel.ServerParamError("Invalid zoneid")
	}
	// TemplateAdapterBase.prepare(GetUploadParamsForIsoCmd): BooleanUtils.
	// toBoolean, so bootable defaults to false here (unlike registerIso).
	t, err := newISO(c, p.Bool("bootable", false))
	if err != nil {
		return nil, err
	}
	z := zoneByParam(c.State, p.Get("zoneid"))
	if z == nil {
		return nil, kernel.ServerParamError("Please specify a valid zone.")
	}
	return postUploadParams(c, t, z, isoFormat), nil
}

// newISO builds a user ISO from the parameters getUploadParamsForIso and
// registerIso share (TemplateAdapterBase.prepare with isIso true): a
// bootable ISO needs a guest OS; a non-bootable one gets the "None" guest OS
// (departure: the simulator's OS catalogue has no "None" row, so its ostypeid
// is left empty and the response has none).
func newISO(c *kernel.Call, bootable bool) (*model.Template, *kernel.APIError) {
	if bootable {
		if _, ok := model.ByID(c.State.OSTypes, c.Params.Get("ostypeid")); !ok {
			return nil, kernel.ParamError("Please pass a valid GuestOS Id")
		}
	}
	t, err := newTemplate(c, isoFormat, isoHypervisor, false)
	if err != nil {
		return nil, err
	}
	t.Bootable, t.Bits, t.RequiresHVM = bootable, 64, true
	if !bootable {
		t.OSTypeID = ""
	}
	return t, nil
}

// listIsos is ListIsosCmd and TemplateJoinDaoImpl's ISO search (format =
// 'ISO': listTemplates never shows ISOs, nor listIsos templates). isofilter
// is optional and defaults to selfexecutable, which, like featured,
// community and sharedexecutable, shows ready ISOs only
// (ListIsosCmd.listInReadyState, the same rule as filterAdmits).
func listIsos(c *kernel.Call) (any, error) {
	p := c.Params
	filter := p.Get("isofilter")
	if filter == "" {
		filter = "selfexecutable"
	}
	if !validTemplateFilter(filter) {
		return nil, kernel.ServerParamError("No enum constant com.cloud.template.VirtualMachineTemplate.TemplateFilter.%s", filter)
	}
	scope, err := c.ProjectScope() // QueryManagerImpl.searchForIsosInternal → buildACLSearchParameters
	if err != nil {
		return nil, err
	}
	rows := templateRows(c, true)
	l := kernel.Lister[views.TemplateRow]{Key: "iso", ID: func(r views.TemplateRow) string { return r.Template.ID },
		Name: func(r views.TemplateRow) string { return r.Template.Name }, NameLike: true,
		Zone: func(r views.TemplateRow) string { return r.Copy.ZoneID }, View: views.IsoView}
	return l.Run(c, rows, func(r views.TemplateRow) bool {
		t := r.Template
		return filterAdmits(c, scope, filter, r) && (!p.Has("bootable") || p.Bool("bootable", false) == t.Bootable) &&
			(!p.Has("ispublic") || p.Bool("ispublic", false) == t.Public) &&
			(!p.Has("isready") || p.Bool("isready", false) == r.Copy.Ready())
	})
}

// deleteIso is TemplateManagerImpl.deleteIso, TemplateAdapterBase.
// prepareDelete(DeleteIsoCmd) and HypervisorTemplateAdapter.delete, in the
// job (DeleteIsoCmd: instance type Iso), so every refusal fails the job.
func deleteIso(c *kernel.Call) (*kernel.AsyncJob, error) {
	idParam, zoneParam := c.Params.Get("id"), c.Params.Get("zoneid")
	t, _ := model.ByID(c.State.Templates, idParam)
	spec := &kernel.AsyncJob{InstanceType: "Iso", CmdClass: "org.apache.cloudstack.api.command.user.iso.DeleteIsoCmd"}
	if t != nil {
		spec.InstanceID = t.ID
	}
	spec.Run = func() (any, error) {
		if err := checkISODeletable(c, t, idParam); err != nil {
			return nil, err
		}
		if err := removeCopies(c, t, zoneParam); err != nil {
			return nil, err
		}
		return map[string]any{"success": true}, nil
	}
	return spec, nil
}

// checkISODeletable is deleteIso's checks before the adapter's delete, in
// TemplateManagerImpl.deleteIso's order.
func checkISODeletable(c *kernel.Call, t *model.Template, idParam string) *kernel.APIError {
	if t == nil || t.Removed != nil {
		return kernel.ParamError("Unable to find ISO with id %s", internalIDText(t, idParam))
	}
	if t.Format != isoFormat {
		return kernel.ParamError("Please specify a valid ISO.")
	}
	// TemplateManagerImpl.templateIsDeleteable → UserVmJoinDaoImpl.
	// listActiveByIsoId, whose state condition is never set: every VM not
	// expunged counts, Destroyed ones included.
	for _, vm := range c.State.VMs {
		if vm.Removed == nil && strings.EqualFold(vm.ISOID, t.ID) {
			return kernel.ParamError("Unable to delete ISO, as it's used by other instances")
		}
	}
	// TemplateAdapterBase.prepareDelete(DeleteIsoCmd)
	if t.State == tsNotUploaded || t.State == tsUploadInProgress {
		return kernel.ParamError("The iso is either getting uploaded or it may be initiated shortly, please wait for it to be completed")
	}
	return nil
}
