package template

import (
	"slices"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// Template states (VirtualMachineTemplate.State).
const (
	tsActive           = "Active"
	tsInactive         = "Inactive"
	tsNotUploaded      = "NotUploaded"
	tsUploadInProgress = "UploadInProgress"
	tsUploadError      = "UploadError"
	TsUploadAbandoned  = "UploadAbandoned"
)

// Upload entity states on the SSVM (UploadEntity.Status).
const (
	uploadInProgress = "IN_PROGRESS"
	uploadCompleted  = "COMPLETED"
	uploadError      = "ERROR"
)

// errorText is a value for TemplateCopy.ErrorString.
func errorText(s string) *string { return &s }

// BuiltinTemplateName is the stock simulator's builtin template.
const BuiltinTemplateName = "CentOS 5.6(64-bit) no GUI (Simulator)"

// firstUserTemplateID: CloudStack's templates table starts user templates at
// 201; the builtin template is id 2.
const firstUserTemplateID = 200

// SeedTemplates adds the builtin template, ready in every zone, unless the
// state has it (a state file from before templates existed gets it too).
func SeedTemplates(st *model.State, hypervisor string, now time.Time) {
	for _, t := range st.Templates {
		if t.Type == "BUILTIN" {
			return
		}
	}
	st.Counters[model.KindTemplate] = max(st.Counters[model.KindTemplate], 1)
	id, internal := st.NewID(model.KindTemplate)
	st.Counters[model.KindTemplate] = max(st.Counters[model.KindTemplate], firstUserTemplateID)
	t := &model.Template{ID: id, InternalID: internal, Name: BuiltinTemplateName, DisplayText: BuiltinTemplateName,
		Format: "VHD", Hypervisor: hypervisor, Type: "BUILTIN", State: tsActive, Public: true, Featured: true,
		Extractable: true, RequiresHVM: true, CrossZones: true, Bits: 64, Created: now,
		URL: "http://download.cloudstack.org/templates/builtin/centos56-x86_64.vhd.bz2"}
	for _, o := range st.OSTypes {
		if o.Description == "CentOS 5.6 (64-bit)" {
			t.OSTypeID = o.ID
		}
	}
	st.Templates = append(st.Templates, t)
	for _, z := range st.Zones {
		st.AddBuiltinCopy(t, z.ID, now)
	}
}

// templateCommands are the commands of templates.go (registerCommands).
func templateCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listTemplates", IDKind: model.KindTemplate, Sync: listTemplates},
	}
}

// templateFilters are VirtualMachineTemplate.TemplateFilter's values; the
// parameter is matched case-sensitively (TemplateFilter.valueOf).
var templateFilters = []string{"featured", "self", "selfexecutable", "shared", "sharedexecutable", "executable", "community", "system", "all"}

func listTemplates(c *kernel.Call) (any, error) {
	p := c.Params
	filter := p.Get("templatefilter")
	if !validTemplateFilter(filter) {
		return nil, kernel.ServerParamError("No enum constant com.cloud.template.VirtualMachineTemplate.TemplateFilter.%s", filter)
	}
	scope, err := c.ProjectScope()
	if err != nil {
		return nil, err
	}
	rows := templateRows(c, false)
	l := kernel.Lister[views.TemplateRow]{Key: "template", ID: func(r views.TemplateRow) string { return r.Template.ID },
		Name: func(r views.TemplateRow) string { return r.Template.Name }, NameLike: true,
		Zone: func(r views.TemplateRow) string { return r.Copy.ZoneID }, View: views.TemplateView}
	return l.Run(c, rows, func(r views.TemplateRow) bool {
		return filterAdmits(c, scope, filter, r) && kernel.OptEq(p.Get("hypervisor"), r.Template.Hypervisor) &&
			kernel.OptEq(p.Get("templatetype"), r.Template.Type) && (!p.Has("isready") || p.Bool("isready", false) == r.Copy.Ready())
	})
}

// validTemplateFilter is TemplateFilter.valueOf's check (case-sensitive).
func validTemplateFilter(filter string) bool { return slices.Contains(templateFilters, filter) }

// templateRows are the rows of template_view the list commands search: one
// per zone copy, ISOs only or templates only (TemplateJoinDaoImpl searches
// with format = 'ISO' for ISOs and != 'ISO' otherwise); removed ones only
// with showremoved.
func templateRows(c *kernel.Call, isos bool) []views.TemplateRow {
	showRemoved := c.Params.Bool("showremoved", false)
	var rows []views.TemplateRow
	for _, t := range c.State.Templates {
		if t.Removed != nil && !showRemoved || (t.Format == isoFormat) != isos {
			continue
		}
		for _, z := range c.State.Zones {
			for _, cp := range t.Copies {
				if strings.EqualFold(cp.ZoneID, z.ID) && (cp.Removed == nil || showRemoved) {
					rows = append(rows, views.TemplateRow{Template: t, Copy: cp})
				}
			}
		}
	}
	return rows
}

// filterAdmits applies templatefilter. featured, community and the
// *executable filters list only ready copies (ListTemplatesCmd.listInReadyState;
// executable only when an admin names an account). The project scope is
// QueryManagerImpl.searchForTemplatesInternal's: the account-type
// criteria on every row, and "own" meaning the permitted accounts (the
// project's account when projectid names it), so a project's templates
// are self in the project and public templates stay executable in it.
func filterAdmits(c *kernel.Call, scope kernel.ProjectScope, filter string, r views.TemplateRow) bool {
	if !scope.AdmitsType(c.State, r.Template.AccountID) {
		return false
	}
	own := scope.Owns(r.Template.AccountID)
	ready := r.Copy.Ready()
	switch filter {
	case "featured":
		return r.Template.Featured && ready
	case "self":
		return own
	case "selfexecutable":
		return own && ready
	case "shared", "sharedexecutable":
		return false // no launch permissions are ever granted
	case "system":
		return r.Template.Type == "SYSTEM"
	case "executable":
		return (own || r.Template.Public || r.Template.Featured) && (ready || c.Account.Type == 1 && c.Params.Get("account") == "")
	case "community":
		return r.Template.Public && !r.Template.Featured && ready
	}
	return c.Account.Type == 1 || own // all
}
