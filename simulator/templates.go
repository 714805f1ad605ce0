package simulator

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
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
	ErrorString   string     `json:"errorstring,omitempty"`
	Size          int64      `json:"size,omitempty"`         // virtual size
	PhysicalSize  int64      `json:"physicalsize,omitempty"` // bytes on the image store
	UploadState   string     `json:"uploadstate,omitempty"`  // the SSVM's upload entity: IN_PROGRESS, COMPLETED, ERROR
	Created       time.Time  `json:"created"`
	Removed       *time.Time `json:"removed,omitempty"`
}

// Download states (VMTemplateStorageResourceAssoc.Status).
const (
	dlNotDownloaded = "NOT_DOWNLOADED"
	dlInProgress    = "DOWNLOAD_IN_PROGRESS"
	dlDownloaded    = "DOWNLOADED"
	dlError         = "DOWNLOAD_ERROR"
	dlNotUploaded   = "NOT_UPLOADED"
	dlAbandoned     = "ABANDONED"
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

func (cp *TemplateCopy) ready() bool { return cp.DownloadState == dlDownloaded }

// status is TemplateJoinDaoImpl.getTemplateStatus (4.22).
func (cp *TemplateCopy) status() string {
	switch {
	case cp.DownloadState == dlDownloaded:
		return "Download Complete"
	case cp.DownloadState == dlInProgress && cp.Percent == 100:
		return "Installing Template"
	case cp.DownloadState == dlInProgress:
		return fmt.Sprintf("%d%% Downloaded", cp.Percent)
	case strings.TrimSpace(cp.ErrorString) != "":
		return strings.TrimSpace(cp.ErrorString)
	}
	return "Processing"
}

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
		command{name: "registerTemplate", sync: registerTemplate},
		command{name: "getUploadParamsForTemplate", sync: getUploadParamsForTemplate,
			responseName: "postuploadtemplateresponse"},
		command{name: "deleteTemplate", idKind: kindTemplate, async: deleteTemplate},
		command{name: "copyTemplate", idKind: kindTemplate, async: copyTemplate},
	)
}

// templateRow is one row of listTemplates: a template in one zone.
type templateRow struct {
	t  *Template
	cp *TemplateCopy
}

// templateFilters are VirtualMachineTemplate.TemplateFilter's values; the
// parameter is matched case-sensitively (TemplateFilter.valueOf).
var templateFilters = []string{"featured", "self", "selfexecutable", "sharedexecutable", "executable", "community", "all"}

func listTemplates(c *Call) (any, error) {
	p := c.Params
	filter := p.Get("templatefilter")
	if !slices.Contains(templateFilters, filter) {
		return nil, serverParamError("No enum constant com.cloud.template.VirtualMachineTemplate.TemplateFilter.%s", filter)
	}
	if c.st.abandonUploads(c.srv.now()) {
		c.changed()
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
	case "sharedexecutable":
		return false // no launch permissions are ever granted
	case "executable":
		return (own || r.t.Public || r.t.Featured) && (ready || c.Account.Type == 1 && c.Params.Get("account") == "")
	case "community":
		return r.t.Public && !r.t.Featured && ready
	}
	return c.Account.Type == 1 || own // all
}

// templateView is TemplateResponse for one zone copy (admin view).
func (c *Call) templateView(r templateRow) map[string]any {
	t, cp := r.t, r.cp
	v := map[string]any{"id": t.ID, "name": t.Name, "displaytext": t.DisplayText, "ispublic": t.Public,
		"created": csTime(cp.Created), "isready": cp.ready(), "passwordenabled": t.PasswordEnabled,
		"format": t.Format, "isfeatured": t.Featured, "crossZones": t.CrossZones, "templatetype": t.Type,
		"hypervisor": t.Hypervisor, "isextractable": t.Extractable && t.Type != "SYSTEM", "bits": t.Bits,
		"sshkeyenabled": t.SSHKeyEnabled, "isdynamicallyscalable": t.DynamicallyScalable, "directdownload": false,
		"deployasis": t.DeployAsIs, "requireshvm": t.RequiresHVM, "status": cp.status(), "hasannotations": false,
		"arch": "x86_64", "forcks": false, "tags": []any{}, "details": orEmpty(t.Details),
		"downloaddetails": []map[string]string{{"datastore": c.st.imageStoreName(cp.ZoneID),
			"downloadPercent": itoa(cp.Percent), "downloadState": cp.DownloadState}}}
	if t.URL != "" {
		v["url"] = t.URL
	}
	if z := c.st.zone(cp.ZoneID); z != nil {
		v["zoneid"], v["zonename"] = z.ID, z.Name
	}
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
	v["account"], v["domain"], v["domainid"], v["domainpath"] = account, domain.Name, domain.ID, domain.displayPath()
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

// hypervisorTypes are HypervisorType's values (4.22) minus None.
var hypervisorTypes = []string{"XenServer", "KVM", "VMware", "Hyperv", "VirtualBox", "Parralels", "BareMetal",
	"Simulator", "Ovm", "Ovm3", "LXC", "Custom", "External"}

// hypervisorType is HypervisorType.getType: "" for None.
func hypervisorType(name string) string {
	for _, h := range hypervisorTypes {
		if strings.EqualFold(h, name) {
			return h
		}
	}
	return ""
}

func invalidHypervisor(shown string) *APIError {
	return paramError("Hypervisor Type: %s is invalid. Supported Hypervisor types are: %s", shown,
		strings.Join(hypervisorTypes, ", "))
}

// imageFormats are ImageFormat's values; the simulator can install the first six.
var (
	imageFormats     = []string{"QCOW2", "RAW", "VHD", "VHDX", "ISO", "OVA", "BAREMETAL", "VMDK", "VDI", "TAR", "ZIP", "DIR", "EXTERNAL"}
	simulatedFormats = []string{"QCOW2", "RAW", "VHD", "VHDX", "ISO", "OVA"}
)

// imageFormat checks format as ImageFormat.valueOf(format.toUpperCase()) does.
func imageFormat(format string) (string, *APIError) {
	f := strings.ToUpper(format)
	if !slices.Contains(imageFormats, f) {
		return "", serverParamError("Image format: %s is incorrect. Supported formats are [%s]", format,
			strings.Join(imageFormats, ", "))
	}
	if !slices.Contains(simulatedFormats, f) {
		return "", paramError("Image format: %s is not supported by the CloudStack simulator, which installs %s",
			format, strings.Join(simulatedFormats, ", "))
	}
	return f, nil
}

// checkZoneHypervisor refuses a template for a hypervisor none of the zone's
// clusters runs: nothing could ever deploy it there.
func (st *state) checkZoneHypervisor(z *Zone, hv string) *APIError {
	var have []string
	for _, cl := range st.Clusters {
		if strings.EqualFold(cl.ZoneID, z.ID) && !slices.Contains(have, cl.Hypervisor) {
			have = append(have, cl.Hypervisor)
		}
	}
	if slices.Contains(have, hv) {
		return nil
	}
	return paramError("Hypervisor %s is not supported in zone %s, whose hosts run %s", hv, z.Name, strings.Join(have, ", "))
}

// zoneByParam finds a zone by UUID or legacy numeric id.
func (st *state) zoneByParam(v string) *Zone {
	for _, z := range st.Zones {
		if strings.EqualFold(z.ID, v) || fmt.Sprint(z.InternalID) == v {
			return z
		}
	}
	return nil
}

// templateZones resolves registerTemplate's zoneid/zoneids
// (RegisterTemplateCmd.validateParameters and getZoneIds); nil means every
// zone (cross-zone).
func (c *Call) templateZones() ([]*Zone, *APIError) {
	p := c.Params
	zoneID, zoneIDs := p.Get("zoneid"), p.List("zoneids")
	switch {
	case zoneID != "" && len(zoneIDs) > 0:
		return nil, serverParamError("Both zoneid and zoneids cannot be specified at the same time")
	case zoneID == "" && len(zoneIDs) == 0:
		return nil, serverParamError("Either zoneid or zoneids is required. Both cannot be null.")
	case len(zoneIDs) > 1 && slices.Contains(zoneIDs, "-1"):
		return nil, serverParamError("Parameter zoneids cannot combine all zones (-1) option with other zones")
	case zoneID == "-1" || len(zoneIDs) == 1 && zoneIDs[0] == "-1":
		return nil, nil
	}
	if zoneID != "" {
		zoneIDs = []string{zoneID}
	}
	var zones []*Zone
	for _, id := range zoneIDs {
		z := c.st.zoneByParam(id)
		if z == nil {
			return nil, serverParamError("Please specify a valid zone.")
		}
		if !slices.Contains(zones, z) {
			zones = append(zones, z)
		}
	}
	return zones, nil
}

// registerTemplate registers a template from a URL. The answer comes at
// once; the zone's secondary storage VM then downloads the URL in the
// background (see download).
func registerTemplate(c *Call) (any, error) {
	p := c.Params
	zones, err := c.templateZones()
	if err != nil {
		return nil, err
	}
	hvParam := p.Get("hypervisor")
	deployAsIs := strings.EqualFold(hvParam, "VMware") && p.Bool("deployasis", false)
	if !deployAsIs && p.Get("ostypeid") == "" {
		return nil, serverParamError("Please provide a guest OS type")
	}
	format, err := imageFormat(p.Get("format"))
	if err != nil {
		return nil, err
	}
	rawURL := p.Get("url")
	if strings.Contains(strings.ToLower(rawURL), "file://") {
		return nil, paramError("File:// type urls are currently unsupported")
	}
	if err := c.srv.validateTemplateURL(format, rawURL); err != nil {
		return nil, err
	}
	hv := hypervisorType(hvParam)
	if hv == "" {
		return nil, invalidHypervisor(hvParam)
	}
	crossZones := zones == nil
	if crossZones {
		zones = c.st.Zones
	}
	for _, z := range zones {
		if err := c.st.checkZoneHypervisor(z, hv); err != nil {
			return nil, err
		}
	}
	t, err := c.newTemplate(format, hv, deployAsIs)
	if err != nil {
		return nil, err
	}
	t.URL, t.CrossZones, t.State = rawURL, crossZones, tsActive
	now := c.srv.now()
	views := []map[string]any{}
	for _, z := range zones {
		cp := &TemplateCopy{ZoneID: z.ID, DownloadState: dlNotDownloaded, Created: now}
		t.Copies = append(t.Copies, cp)
		views = append(views, c.templateView(templateRow{t, cp}))
	}
	c.st.Templates = append(c.st.Templates, t)
	c.changed()
	for _, z := range zones {
		c.srv.startDownload(t, z.ID)
	}
	return listBody("template", len(views), views), nil
}

// newTemplate builds a user template from the parameters registerTemplate
// and getUploadParamsForTemplate share (TemplateAdapterBase.prepare's
// defaults: private, 64 bits, HVM, not extractable).
func (c *Call) newTemplate(format, hv string, deployAsIs bool) (*Template, *APIError) {
	p := c.Params
	ttype := "USER"
	if v := p.Get("templatetype"); v != "" {
		ttype = strings.ToUpper(v)
		if !slices.Contains([]string{"USER", "VNF", "SYSTEM", "ROUTING", "BUILTIN"}, ttype) {
			return nil, paramError("Invalid template type %s. Valid options are: USER, VNF, SYSTEM, ROUTING, BUILTIN", v)
		}
	}
	id, internal := c.st.newID(kindTemplate)
	name := p.Get("name")
	t := &Template{ID: id, InternalID: internal, Name: name, DisplayText: p.Get("displaytext"), Format: format,
		Hypervisor: hv, OSTypeID: p.Get("ostypeid"), AccountID: c.Account.ID, Type: ttype,
		Public: p.Bool("ispublic", false), Featured: c.Account.Type == 1 && p.Bool("isfeatured", false),
		Extractable: p.Bool("isextractable", false), PasswordEnabled: p.Bool("passwordenabled", false),
		SSHKeyEnabled: p.Bool("sshkeyenabled", false), DynamicallyScalable: p.Bool("isdynamicallyscalable", false),
		RequiresHVM: p.Bool("requireshvm", true), Bits: int(p.Int("bits", 64)), Checksum: p.Get("checksum"),
		DeployAsIs: deployAsIs, Created: c.srv.now()}
	if strings.TrimSpace(t.DisplayText) == "" {
		t.DisplayText = name
	}
	if d := p.Map("details"); len(d) > 0 {
		t.Details = d[0]
	}
	if o, ok := byID(c.st.OSTypes, t.OSTypeID); ok {
		t.OSTypeID = o.ID // canonical spelling
	}
	return t, nil
}

// extensionsByFormat are UriUtils' SUPPORTED_EXTENSIONS_BY_FORMAT (4.22, with
// xz), without .metalink, which the simulator cannot follow.
var extensionsByFormat = map[string][]string{
	"vhd": {"vhd"}, "vhdx": {"vhdx"}, "qcow2": {"qcow2", "img"}, "ova": {"ova"}, "tar": {"tar"},
	"raw": {"img", "raw"}, "vmdk": {"vmdk"}, "iso": {"iso"},
}

func pathHasExtension(lowerPath string, bases []string) bool {
	for _, b := range bases {
		for _, comp := range []string{"", ".zip", ".bz2", ".gz", ".xz"} {
			if strings.HasSuffix(lowerPath, "."+b+comp) {
				return true
			}
		}
	}
	return false
}

// validateTemplateURL is UriUtils.validateUrl(format, url): an http(s) URL
// on a host the secondary storage VM may download from, whose path ends in
// an extension of the format. Errors are IllegalArgumentExceptions: 431 with
// cserrorcode 9999.
func (s *Server) validateTemplateURL(format, rawURL string) *APIError {
	u, err := url.Parse(rawURL)
	if err != nil {
		return serverParamError("Invalid URL: %s", rawURL)
	}
	if !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") {
		return serverParamError("Unsupported scheme for url: %s", rawURL)
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if host == "" {
		ip = net.IPv4(127, 0, 0, 1) // Java resolves a missing host to loopback
	}
	if ip == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
		cancel()
		if err != nil || len(ips) == 0 {
			return serverParamError("Unable to resolve %s", host)
		}
		ip = ips[0]
		for _, a := range ips { // Java prefers IPv4 addresses
			if a.To4() != nil {
				ip = a
				break
			}
		}
	}
	switch {
	case ip.IsLoopback() && s.opts.AllowLoopbackURLs && host != "":
	case ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsLoopback() || ip.IsMulticast():
		return serverParamError("Illegal host specified in url")
	case ip.IsPrivate():
		// The SSVM only reaches datacenter-internal hosts listed in
		// secstorage.allowed.internal.sites, which the simulator leaves empty.
		return serverParamError("Illegal host specified in url: %s is a private address and "+
			"secstorage.allowed.internal.sites does not list it", ip)
	}
	if ip.To4() == nil {
		return serverParamError("IPV6 addresses not supported (%s)", ip)
	}
	lower := strings.ToLower(u.Path)
	if !pathHasExtension(lower, extensionsByFormat[strings.ToLower(format)]) {
		known := false
		for _, bases := range extensionsByFormat {
			known = known || pathHasExtension(lower, bases)
		}
		if !known {
			return serverParamError("Please specify a valid %s", strings.ToLower(format))
		}
		return serverParamError("Please specify a valid URL. URL:%s is an invalid for the format %s", u.Path, strings.ToLower(format))
	}
	return nil
}

// urlPath is a URL's path, for the extension checks.
func urlPath(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.Path
	}
	return rawURL
}

// describeTemplate is VMTemplateVO.toString.
func (t *Template) describe() string {
	return fmt.Sprintf(`Template {"id":%d,"name":%q,"uuid":%q}`, t.InternalID, t.Name, t.ID)
}

// deleteTemplate removes a template from one zone or all (TemplateManagerImpl.deleteTemplate
// and HypervisorTemplateAdapter.delete). The checks run in the job, as in
// CloudStack, so they fail the job rather than the request.
func deleteTemplate(c *Call) (*asyncJob, error) {
	idParam, zoneParam, forced := c.Params.Get("id"), c.Params.Get("zoneid"), c.Params.Bool("forced", false)
	t, _ := byID(c.st.Templates, idParam)
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

func (c *Call) removeTemplate(t *Template, idParam, zoneParam string, forced bool) *APIError {
	if c.st.abandonUploads(c.srv.now()) {
		c.changed()
	}
	if t == nil || t.Removed != nil {
		return paramError("Unable to find Template with id %s", internalIDText(t, idParam))
	}
	var users []string
	for _, vm := range c.st.VMs {
		// Hook: deployed VMs record their template; expunged ones no longer count.
		if vm.Removed == nil && strings.EqualFold(vm.TemplateID, t.ID) && optEq(zoneParam, vm.ZoneID) {
			users = append(users, fmt.Sprintf(`VM instance {"id":%d,"instanceName":%q,"uuid":%q}`, vm.InternalID, vm.InstanceName, vm.ID))
		}
	}
	if len(users) > 0 && !forced {
		msg := fmt.Sprintf("Unable to delete template [%s] because there are [%d] VM instances using it.", t.describe(), len(users))
		if c.Account.Type == 1 {
			msg += fmt.Sprintf(" Instances list: [%s].", strings.Join(users, ","))
		}
		return paramError("%s", msg)
	}
	if t.Format == "ISO" {
		return paramError("Please specify a valid Template.")
	}
	if t.State == tsNotUploaded || t.State == tsUploadInProgress {
		return paramError("The template is either getting uploaded or it may be initiated shortly, please wait for it to be completed")
	}
	if t.Type == "SYSTEM" {
		return paramError("The DomR template cannot be deleted.")
	}
	var doomed []*TemplateCopy
	for _, cp := range t.liveCopies() {
		if zoneParam == "" || strings.EqualFold(cp.ZoneID, zoneParam) {
			doomed = append(doomed, cp)
		}
	}
	for _, cp := range doomed {
		if cp.DownloadState == dlInProgress {
			return internalError("Please specify a template that is not currently being downloaded.")
		}
	}
	now := c.srv.now()
	for _, cp := range doomed {
		cp.Removed = &now
		c.srv.xfer.stop(copyKey(t.ID, cp.ZoneID))
		c.srv.xfer.removeImage(t.ID, cp.ZoneID)
	}
	if len(t.liveCopies()) == 0 {
		t.Removed, t.State = &now, tsInactive
	}
	c.changed()
	return nil
}

// internalIDText is the numeric id CloudStack prints for a template.
func internalIDText(t *Template, param string) string {
	if t != nil {
		return fmt.Sprint(t.InternalID)
	}
	return param
}

// copyTemplate copies a ready template to other zones
// (TemplateManagerImpl.copyTemplate). The job completes when every copy has
// finished; it fails only if none succeeded.
func copyTemplate(c *Call) (*asyncJob, error) {
	p := c.Params
	t, _ := byID(c.st.Templates, p.Get("id"))
	spec := &asyncJob{instanceType: "Template",
		cmdClass: "org.apache.cloudstack.api.command.admin.template.CopyTemplateCmdByAdmin"}
	if t != nil {
		spec.instanceID = t.ID
	}
	dests, source, err := c.copyPlan(t)
	if err != nil {
		spec.run = func() (any, error) { return nil, err }
		return spec, nil
	}
	var (
		mu      sync.Mutex
		failed  []string
		first   *TemplateCopy
		targets []*Zone
	)
	now := c.srv.now()
	for _, z := range dests {
		cp := t.copyIn(z.ID)
		if cp != nil && cp.ready() {
			if first == nil {
				first = cp
			}
			continue // "don't need to copy"
		}
		if cp != nil && cp.DownloadState != dlInProgress {
			cp.Removed = &now // a failed or abandoned copy is replaced
			cp = nil
		}
		if cp == nil {
			cp = &TemplateCopy{ZoneID: z.ID, DownloadState: dlNotDownloaded, Created: now}
			t.Copies = append(t.Copies, cp)
		}
		if first == nil {
			first = cp
		}
		targets = append(targets, z)
	}
	done := make(chan struct{})
	pending := len(targets)
	for _, z := range targets {
		name := z.Name
		c.srv.startCopy(t, source, z.ID, func(ok bool) {
			mu.Lock()
			defer mu.Unlock()
			if !ok {
				failed = append(failed, name)
			}
			if pending--; pending == 0 {
				close(done)
			}
		})
	}
	c.changed()
	if len(targets) > 0 {
		spec.await = done
	}
	total := len(dests)
	spec.run = func() (any, error) {
		mu.Lock()
		nFailed := len(failed)
		mu.Unlock()
		if nFailed >= total {
			return nil, internalError("Failed to copy Template")
		}
		cp := first
		if live := t.copyIn(first.ZoneID); live != nil {
			cp = live
		}
		return map[string]any{"template": c.templateView(templateRow{t, cp})}, nil
	}
	return spec, nil
}

// copyPlan checks copyTemplate's parameters and finds the source copy.
func (c *Call) copyPlan(t *Template) ([]*Zone, *TemplateCopy, *APIError) {
	p := c.Params
	if t == nil || t.Removed != nil {
		return nil, nil, paramError("Unable to find Template with id")
	}
	destID, destIDs := p.Get("destzoneid"), p.List("destzoneids")
	switch {
	case destID != "" && len(destIDs) > 0:
		return nil, nil, serverParamError("Both destzoneid and destzoneids cannot be specified at the same time.")
	case destID == "" && len(destIDs) == 0:
		return nil, nil, serverParamError("Either destzoneid or destzoneids parameters have to be specified.")
	case destID != "":
		destIDs = []string{destID}
	}
	srcID := p.Get("sourcezoneid")
	var dests []*Zone
	for _, id := range destIDs {
		if srcID != "" && strings.EqualFold(id, srcID) {
			return nil, nil, paramError("Please specify different source and destination zones.")
		}
		z := c.st.zoneByParam(id)
		if z == nil {
			return nil, nil, paramError("Please specify a valid destination zone.")
		}
		if !slices.Contains(dests, z) {
			dests = append(dests, z)
		}
	}
	var source *TemplateCopy
	if srcID != "" {
		z := c.st.zoneByParam(srcID)
		if z == nil {
			return nil, nil, paramError("Please specify a valid source zone.")
		}
		if cp := t.copyIn(z.ID); cp != nil && cp.ready() {
			source = cp
		}
	} else {
		for _, cp := range t.liveCopies() {
			if cp.ready() && source == nil {
				source = cp
			}
		}
	}
	if source == nil {
		return nil, nil, paramError("There is no Template %s ready on image store.", t.describe())
	}
	return dests, source, nil
}

// abandonUploads marks templates whose upload never started within the
// upload timeout as abandoned, as ImageStoreUploadMonitorImpl does. It
// reports whether anything changed.
func (st *state) abandonUploads(now time.Time) bool {
	changed := false
	for _, t := range st.Templates {
		if t.Removed != nil || t.State != tsNotUploaded || now.Sub(t.Created) <= uploadTimeout {
			continue
		}
		t.State = tsUploadAbandoned
		for _, cp := range t.liveCopies() {
			cp.DownloadState = dlAbandoned
		}
		changed = true
	}
	return changed
}
