package simulator

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Template is a template (vm_template) with one copy per zone
// (template_store_ref on the zone's image store). listTemplates shows one row
// per copy. A deleted template keeps its row with Removed set, because
// CloudStack still resolves its UUID.
type Template struct {
	ID                  string            `json:"id"`
	InternalID          int64             `json:"internalid"`
	Name                string            `json:"name"`
	DisplayText         string            `json:"displaytext"`
	Format              string            `json:"format"` // QCOW2, RAW, VHD, VHDX, OVA, ISO
	Hypervisor          string            `json:"hypervisor"`
	OSTypeID            string            `json:"ostypeid,omitempty"`
	AccountID           string            `json:"accountid,omitempty"` // empty: the system account
	URL                 string            `json:"url,omitempty"`
	Type                string            `json:"templatetype"` // USER, BUILTIN, ...
	State               string            `json:"state"`        // Active, Inactive, NotUploaded, UploadInProgress, UploadError, UploadAbandoned
	PostUpload          bool              `json:"postupload,omitempty"`
	Public              bool              `json:"ispublic"`
	Featured            bool              `json:"isfeatured"`
	Extractable         bool              `json:"isextractable"`
	PasswordEnabled     bool              `json:"passwordenabled"`
	SSHKeyEnabled       bool              `json:"sshkeyenabled"`
	DynamicallyScalable bool              `json:"isdynamicallyscalable"`
	RequiresHVM         bool              `json:"requireshvm"`
	CrossZones          bool              `json:"crosszones"`
	DeployAsIs          bool              `json:"deployasis,omitempty"`
	Bits                int               `json:"bits"`
	Checksum            string            `json:"checksum,omitempty"`
	Details             map[string]string `json:"details,omitempty"`
	Copies              []*TemplateCopy   `json:"copies"`
	Created             time.Time         `json:"created"`
	Removed             *time.Time        `json:"removed,omitempty"`
}

func (t *Template) uuid() string { return t.ID }

// TemplateCopy is a template's copy in one zone: what the zone's secondary
// storage VM reports about it.
type TemplateCopy struct {
	ZoneID        string     `json:"zoneid"`
	DownloadState string     `json:"downloadstate"` // NOT_DOWNLOADED, DOWNLOAD_IN_PROGRESS, DOWNLOADED, DOWNLOAD_ERROR, NOT_UPLOADED, ABANDONED
	Percent       int        `json:"downloadpercent"`
	ErrorString   *string    `json:"errorstring,omitempty"`  // nil is SQL NULL, which getTemplateStatus tells from ""
	Size          int64      `json:"size,omitempty"`         // virtual size
	PhysicalSize  int64      `json:"physicalsize,omitempty"` // bytes on the image store
	Created       time.Time  `json:"created"`
	Removed       *time.Time `json:"removed,omitempty"`

	// The SSVM's upload entity for a POSTed template, which the management
	// server learns of only when its upload monitor polls (upload_monitor.go):
	// its status (IN_PROGRESS, COMPLETED, ERROR; "" when the SSVM has none),
	// percentage and, once installed, the image's sizes.
	UploadState        string `json:"uploadstate,omitempty"`
	UploadPercent      int    `json:"uploadpercent,omitempty"`
	UploadSize         int64  `json:"uploadsize,omitempty"`
	UploadPhysicalSize int64  `json:"uploadphysicalsize,omitempty"`
}

// Download states (VMTemplateStorageResourceAssoc.Status).
const (
	dlNotDownloaded = "NOT_DOWNLOADED"
	dlInProgress    = "DOWNLOAD_IN_PROGRESS"
	dlDownloaded    = "DOWNLOADED"
	dlError         = "DOWNLOAD_ERROR"
	dlNotUploaded   = "NOT_UPLOADED"
	dlAbandoned     = "ABANDONED"
	dlBypassed      = "BYPASSED"
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

// ready is TemplateJoinDaoImpl's isready: the template_store_ref state is
// Ready, which every path that sets DOWNLOADED sets with it
// (TemplateServiceImpl's create callback, ImageStoreUploadMonitorImpl's
// COMPLETED case), and no other path does.
func (cp *TemplateCopy) ready() bool { return cp.DownloadState == dlDownloaded }

// status is TemplateJoinDaoImpl.getTemplateStatus: its initial "Processing"
// is always overwritten. Outside the download states it is the error string
// when one is stored (even an empty one), else the template's state name.
func (cp *TemplateCopy) status(t *Template) string {
	switch {
	case cp.DownloadState == dlDownloaded:
		return "Download Complete"
	case cp.DownloadState == dlInProgress && cp.Percent == 100:
		return "Installing Template"
	case cp.DownloadState == dlInProgress:
		return fmt.Sprintf("%d%% Downloaded", cp.Percent)
	case cp.DownloadState == dlBypassed:
		return "Bypassed Secondary Storage"
	case cp.ErrorString == nil:
		return t.State
	}
	return *cp.ErrorString
}

// errorText is a value for TemplateCopy.ErrorString.
func errorText(s string) *string { return &s }

// copyIn is the template's live copy in a zone, nil if none.
func (t *Template) copyIn(zoneID string) *TemplateCopy {
	for _, cp := range t.Copies {
		if cp.Removed == nil && strings.EqualFold(cp.ZoneID, zoneID) {
			return cp
		}
	}
	return nil
}

func (t *Template) liveCopies() []*TemplateCopy {
	var out []*TemplateCopy
	for _, cp := range t.Copies {
		if cp.Removed == nil {
			out = append(out, cp)
		}
	}
	return out
}

// builtinTemplateName is the stock simulator's builtin template.
const builtinTemplateName = "CentOS 5.6(64-bit) no GUI (Simulator)"

// firstUserTemplateID: CloudStack's templates table starts user templates at
// 201; the builtin template is id 2.
const firstUserTemplateID = 200

// seedTemplates adds the builtin template, ready in every zone, unless the
// state has it (a state file from before templates existed gets it too).
func seedTemplates(st *state, hypervisor string, now time.Time) {
	for _, t := range st.Templates {
		if t.Type == "BUILTIN" {
			return
		}
	}
	st.Counters[kindTemplate] = max(st.Counters[kindTemplate], 1)
	id, internal := st.newID(kindTemplate)
	st.Counters[kindTemplate] = max(st.Counters[kindTemplate], firstUserTemplateID)
	t := &Template{ID: id, InternalID: internal, Name: builtinTemplateName, DisplayText: builtinTemplateName,
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
		st.addBuiltinCopy(t, z.ID, now)
	}
}

func (st *state) addBuiltinCopy(t *Template, zoneID string, now time.Time) {
	if t.copyIn(zoneID) == nil {
		t.Copies = append(t.Copies, &TemplateCopy{ZoneID: zoneID, DownloadState: dlDownloaded, Percent: 100,
			Size: 2 << 30, PhysicalSize: 2101252608, Created: now})
	}
}

func (st *state) builtinTemplate() *Template {
	for _, t := range st.Templates {
		if t.Type == "BUILTIN" && t.Removed == nil {
			return t
		}
	}
	return nil
}

func init() {
	paramKinds["templateid"] = kindTemplate
	paramKinds["sourcezoneid"] = kindZone
	paramKinds["destzoneid"] = kindZone
	register(
		command{name: "listTemplates", idKind: kindTemplate, sync: listTemplates},
	)
}

// templateRow is one row of listTemplates: a template in one zone.
type templateRow struct {
	t  *Template
	cp *TemplateCopy
}

// templateFilters are VirtualMachineTemplate.TemplateFilter's values; the
// parameter is matched case-sensitively (TemplateFilter.valueOf).
var templateFilters = []string{"featured", "self", "selfexecutable", "shared", "sharedexecutable", "executable", "community", "system", "all"}

func listTemplates(c *Call) (any, error) {
	p := c.Params
	filter := p.Get("templatefilter")
	if !slices.Contains(templateFilters, filter) {
		return nil, serverParamError("No enum constant com.cloud.template.VirtualMachineTemplate.TemplateFilter.%s", filter)
	}
	showRemoved := p.Bool("showremoved", false)
	var rows []templateRow
	for _, t := range c.st.Templates {
		if t.Removed != nil && !showRemoved {
			continue
		}
		for _, z := range c.st.Zones {
			for _, cp := range t.Copies {
				if strings.EqualFold(cp.ZoneID, z.ID) && (cp.Removed == nil || showRemoved) {
					rows = append(rows, templateRow{t, cp})
				}
			}
		}
	}
	l := lister[templateRow]{key: "template", id: func(r templateRow) string { return r.t.ID },
		name: func(r templateRow) string { return r.t.Name }, nameLike: true,
		zone: func(r templateRow) string { return r.cp.ZoneID }, view: c.templateView}
	return l.run(c, rows, func(r templateRow) bool {
		return c.filterAdmits(filter, r) && optEq(p.Get("hypervisor"), r.t.Hypervisor) &&
			optEq(p.Get("templatetype"), r.t.Type) && (!p.Has("isready") || p.Bool("isready", false) == r.cp.ready())
	})
}

// filterAdmits applies templatefilter. featured, community and the
// *executable filters list only ready copies (ListTemplatesCmd.listInReadyState;
// executable only when an admin names an account).
func (c *Call) filterAdmits(filter string, r templateRow) bool {
	own := r.t.AccountID == c.Account.ID
	ready := r.cp.ready()
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
func (c *Call) templateView(r templateRow) map[string]any {
	t, cp := r.t, r.cp
	v := map[string]any{"id": t.ID, "name": t.Name, "displaytext": t.DisplayText, "ispublic": t.Public,
		"created": csTime(cp.Created), "isready": cp.ready(), "passwordenabled": t.PasswordEnabled,
		"format": t.Format, "isfeatured": t.Featured, "crossZones": t.CrossZones, "templatetype": t.Type,
		"hypervisor": t.Hypervisor, "isextractable": t.Extractable && t.Type != "SYSTEM", "bits": t.Bits,
		"sshkeyenabled": t.SSHKeyEnabled, "isdynamicallyscalable": t.DynamicallyScalable, "directdownload": false,
		"deployasis": t.DeployAsIs, "requireshvm": t.RequiresHVM, "hasannotations": false,
		"arch": "x86_64", "forcks": false, "tags": []any{}, "details": orEmpty(t.Details),
		"downloaddetails": []map[string]string{{"datastore": c.st.imageStoreName(cp.ZoneID),
			"downloadPercent": itoa(cp.Percent), "downloadState": cp.DownloadState}}}
	// status and url only in the full (admin) view or for the owner
	if c.Account.Type == 1 || c.Account.Type == 2 || t.AccountID == c.Account.ID {
		v["status"] = cp.status(t)
		if t.URL != "" {
			v["url"] = t.URL
		}
	}
	if z := c.st.zone(cp.ZoneID); z != nil {
		v["zoneid"], v["zonename"] = z.ID, z.Name
	}
	domain := c.templateOwner(t, v)
	v["domainpath"] = domain.displayPath()
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
		v["removed"] = csTime(*cp.Removed)
	}
	return v
}

// templateOwner adds the OS type and the owner (account, domain; the
// system account's for a builtin template) to a template's view and
// returns the owner's domain.
func (c *Call) templateOwner(t *Template, v map[string]any) *Domain {
	if o, ok := byID(c.st.OSTypes, t.OSTypeID); ok {
		v["ostypeid"], v["ostypename"] = o.ID, o.Description
	}
	account, domain := "system", c.st.Domains[0]
	if a := c.st.account(t.AccountID); a != nil {
		account = a.Name
		if d := c.st.domain(a.DomainID); d != nil {
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
func (st *state) imageStoreName(zoneID string) string {
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
