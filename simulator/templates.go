package simulator

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// Template states (VirtualMachineTemplate.State).
const (
	tsActive           = "Active"
	tsInactive         = "Inactive"
	tsNotUploaded      = "NotUploaded"
	tsUploadInProgress = "UploadInProgress"
	tsUploadError      = "UploadError"
	tsUploadAbandoned  = "UploadAbandoned"
)

// Upload entity states on the SSVM (UploadEntity.Status).
const (
	uploadInProgress = "IN_PROGRESS"
	uploadCompleted  = "COMPLETED"
	uploadError      = "ERROR"
)

// errorText is a value for TemplateCopy.ErrorString.
func errorText(s string) *string { return &s }

// builtinTemplateName is the stock simulator's builtin template.
const builtinTemplateName = "CentOS 5.6(64-bit) no GUI (Simulator)"

// firstUserTemplateID: CloudStack's templates table starts user templates at
// 201; the builtin template is id 2.
const firstUserTemplateID = 200

// seedTemplates adds the builtin template, ready in every zone, unless the
// state has it (a state file from before templates existed gets it too).
func seedTemplates(st *model.State, hypervisor string, now time.Time) {
	for _, t := range st.Templates {
		if t.Type == "BUILTIN" {
			return
		}
	}
	st.Counters[model.KindTemplate] = max(st.Counters[model.KindTemplate], 1)
	id, internal := st.NewID(model.KindTemplate)
	st.Counters[model.KindTemplate] = max(st.Counters[model.KindTemplate], firstUserTemplateID)
	t := &model.Template{ID: id, InternalID: internal, Name: builtinTemplateName, DisplayText: builtinTemplateName,
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

func init() {
	kernel.ParamKinds["templateid"] = model.KindTemplate
	kernel.ParamKinds["sourcezoneid"] = model.KindZone
	kernel.ParamKinds["destzoneid"] = model.KindZone
	kernel.Register(
		kernel.Command{Name: "listTemplates", IDKind: model.KindTemplate, Sync: listTemplates},
	)
}

// templateRow is one row of listTemplates: a template in one zone.
type templateRow struct {
	t  *model.Template
	cp *model.TemplateCopy
}

// templateFilters are VirtualMachineTemplate.TemplateFilter's values; the
// parameter is matched case-sensitively (TemplateFilter.valueOf).
var templateFilters = []string{"featured", "self", "selfexecutable", "shared", "sharedexecutable", "executable", "community", "system", "all"}

func listTemplates(c *kernel.Call) (any, error) {
	p := c.Params
	filter := p.Get("templatefilter")
	if !slices.Contains(templateFilters, filter) {
		return nil, kernel.ServerParamError("No enum constant com.cloud.template.VirtualMachineTemplate.TemplateFilter.%s", filter)
	}
	showRemoved := p.Bool("showremoved", false)
	var rows []templateRow
	for _, t := range c.State.Templates {
		if t.Removed != nil && !showRemoved {
			continue
		}
		for _, z := range c.State.Zones {
			for _, cp := range t.Copies {
				if strings.EqualFold(cp.ZoneID, z.ID) && (cp.Removed == nil || showRemoved) {
					rows = append(rows, templateRow{t, cp})
				}
			}
		}
	}
	l := kernel.Lister[templateRow]{Key: "template", ID: func(r templateRow) string { return r.t.ID },
		Name: func(r templateRow) string { return r.t.Name }, NameLike: true,
		Zone: func(r templateRow) string { return r.cp.ZoneID }, View: templateView}
	return l.Run(c, rows, func(r templateRow) bool {
		return filterAdmits(c, filter, r) && kernel.OptEq(p.Get("hypervisor"), r.t.Hypervisor) &&
			kernel.OptEq(p.Get("templatetype"), r.t.Type) && (!p.Has("isready") || p.Bool("isready", false) == r.cp.Ready())
	})
}

// filterAdmits applies templatefilter. featured, community and the
// *executable filters list only ready copies (ListTemplatesCmd.listInReadyState;
// executable only when an admin names an account).
func filterAdmits(c *kernel.Call, filter string, r templateRow) bool {
	own := r.t.AccountID == c.Account.ID
	ready := r.cp.Ready()
	switch filter {
	case "featured":
		return r.t.Featured && ready
	case "self":
		return own
	case "selfexecutable":
		return own && ready
	case "shared", "sharedexecutable":
		return false // no launch permissions are ever granted
	case "system":
		return r.t.Type == "SYSTEM"
	case "executable":
		return (own || r.t.Public || r.t.Featured) && (ready || c.Account.Type == 1 && c.Params.Get("account") == "")
	case "community":
		return r.t.Public && !r.t.Featured && ready
	}
	return c.Account.Type == 1 || own // all
}

// templateView is TemplateJoinDaoImpl.newTemplateResponse for one zone copy.
func templateView(c *kernel.Call, r templateRow) map[string]any {
	t, cp := r.t, r.cp
	v := map[string]any{"id": t.ID, "name": t.Name, "displaytext": t.DisplayText, "ispublic": t.Public,
		"created": kernel.CsTime(cp.Created), "isready": cp.Ready(), "passwordenabled": t.PasswordEnabled,
		"format": t.Format, "isfeatured": t.Featured, "crossZones": t.CrossZones, "templatetype": t.Type,
		"hypervisor": t.Hypervisor, "isextractable": t.Extractable && t.Type != "SYSTEM", "bits": t.Bits,
		"sshkeyenabled": t.SSHKeyEnabled, "isdynamicallyscalable": t.DynamicallyScalable, "directdownload": false,
		"deployasis": t.DeployAsIs, "requireshvm": t.RequiresHVM, "hasannotations": false,
		"arch": "x86_64", "forcks": false, "tags": []any{}, "details": orEmpty(t.Details),
		"downloaddetails": []map[string]string{{"datastore": imageStoreName(c.State, cp.ZoneID),
			"downloadPercent": model.Itoa(cp.Percent), "downloadState": cp.DownloadState}}}
	// status and url only in the full (admin) view or for the owner
	if c.Account.Type == 1 || c.Account.Type == 2 || t.AccountID == c.Account.ID {
		v["status"] = cp.Status(t)
		if t.URL != "" {
			v["url"] = t.URL
		}
	}
	if z := c.State.Zone(cp.ZoneID); z != nil {
		v["zoneid"], v["zonename"] = z.ID, z.Name
	}
	domain := templateOwner(c, t, v)
	v["domainpath"] = domain.DisplayPath()
	if cp.Size > 0 {
		v["size"] = cp.Size
	}
	if cp.PhysicalSize > 0 {
		v["physicalsize"] = cp.PhysicalSize
	}
	if t.Checksum != "" {
		v["checksum"] = checksumValue(t.Checksum)
	}
	if cp.Removed != nil {
		v["removed"] = kernel.CsTime(*cp.Removed)
	}
	return v
}

// templateOwner adds the OS type and the owner (account, domain; the
// system account's for a builtin template) to a template's view and
// returns the owner's domain.
func templateOwner(c *kernel.Call, t *model.Template, v map[string]any) *model.Domain {
	if o, ok := model.ByID(c.State.OSTypes, t.OSTypeID); ok {
		v["ostypeid"], v["ostypename"] = o.ID, o.Description
	}
	account, domain := "system", c.State.Domains[0]
	if a := c.State.Account(t.AccountID); a != nil {
		account = a.Name
		if d := c.State.Domain(a.DomainID); d != nil {
			domain = d
		}
	}
	v["account"], v["domain"], v["domainid"] = account, domain.Name, domain.ID
	return domain
}

// checksumValue strips a "{ALGORITHM}" prefix (DigestHelper.getHashValueFromChecksumValue).
func checksumValue(s string) string {
	if strings.HasPrefix(s, "{") {
		if i := strings.Index(s, "}"); i > 0 {
			return s[i+1:]
		}
	}
	return s
}

// imageStoreName names a zone's NFS secondary storage in downloaddetails.
func imageStoreName(st *model.State, zoneID string) string {
	for i, z := range st.Zones {
		if strings.EqualFold(z.ID, zoneID) {
			if i == 0 {
				return "nfs://10.147.28.6:/export/home/sandbox/secondary"
			}
			return fmt.Sprintf("nfs://10.147.28.6:/export/home/sandbox/secondary%d", i+1)
		}
	}
	return ""
}
