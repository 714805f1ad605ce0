package template

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// templateRegisterCommands are the commands of templates_register.go (registerCommands).
func templateRegisterCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "registerTemplate", Sync: registerTemplate},
	}
}

func invalidHypervisor(shown string) *kernel.APIError {
	return kernel.ParamError("Hypervisor Type: %s is invalid. Supported Hypervisor types are: %s", shown,
		strings.Join(model.HypervisorTypes, ", "))
}

// imageFormats are ImageFormat's values; the simulator can install the first six.
var (
	imageFormats     = []string{"QCOW2", "RAW", "VHD", "VHDX", "ISO", "OVA", "BAREMETAL", "VMDK", "VDI", "TAR", "ZIP", "DIR", "EXTERNAL"}
	simulatedFormats = []string{"QCOW2", "RAW", "VHD", "VHDX", "ISO", "OVA"}
)

// imageFormat checks format as ImageFormat.valueOf(format.toUpperCase()) does.
func imageFormat(format string) (string, *kernel.APIError) {
	f := strings.ToUpper(format)
	if !slices.Contains(imageFormats, f) {
		return "", kernel.ServerParamError("Image format: %s is incorrect. Supported formats are [%s]", format,
			strings.Join(imageFormats, ", "))
	}
	if !slices.Contains(simulatedFormats, f) {
		return "", kernel.ParamError("Image format: %s is not supported by the CloudStack simulator, which installs %s",
			format, strings.Join(simulatedFormats, ", "))
	}
	return f, nil
}

// checkZoneHypervisor refuses a template for a hypervisor none of the zone's
// clusters runs: nothing could ever deploy it there.
func checkZoneHypervisor(st *model.State, z *model.Zone, hv string) *kernel.APIError {
	var have []string
	for _, cl := range st.Clusters {
		if strings.EqualFold(cl.ZoneID, z.ID) && !slices.Contains(have, cl.Hypervisor) {
			have = append(have, cl.Hypervisor)
		}
	}
	if slices.Contains(have, hv) {
		return nil
	}
	return kernel.ParamError("Hypervisor %s is not supported in zone %s, whose hosts run %s", hv, z.Name, strings.Join(have, ", "))
}

// zoneByParam finds a zone by UUID or legacy numeric id.
func zoneByParam(st *model.State, v string) *model.Zone {
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
func templateZones(c *kernel.Call) ([]*model.Zone, *kernel.APIError) {
	p := c.Params
	zoneID, zoneIDs := p.Get("zoneid"), p.List("zoneids")
	switch {
	case zoneID != "" && len(zoneIDs) > 0:
		return nil, kernel.ServerParamError("Both zoneid and zoneids cannot be specified at the same time")
	case zoneID == "" && len(zoneIDs) == 0:
		return nil, kernel.ServerParamError("Either zoneid or zoneids is required. Both cannot be null.")
	case len(zoneIDs) > 1 && slices.Contains(zoneIDs, "-1"):
		return nil, kernel.ServerParamError("Parameter zoneids cannot combine all zones (-1) option with other zones")
	case zoneID == "-1" || len(zoneIDs) == 1 && zoneIDs[0] == "-1":
		return nil, nil
	}
	if zoneID != "" {
		zoneIDs = []string{zoneID}
	}
	var zones []*model.Zone
	for _, id := range zoneIDs {
		z := zoneByParam(c.State, id)
		if z == nil {
			return nil, kernel.ServerParamError("Please specify a valid zone.")
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
func registerTemplate(c *kernel.Call) (any, error) {
	p := c.Params
	zones, err := templateZones(c)
	if err != nil {
		return nil, err
	}
	hvParam := p.Get("hypervisor")
	deployAsIs := strings.EqualFold(hvParam, "VMware") && p.Bool("deployasis", false)
	if !deployAsIs && p.Get("ostypeid") == "" {
		return nil, kernel.ServerParamError("Please provide a guest OS type")
	}
	format, err := imageFormat(p.Get("format"))
	if err != nil {
		return nil, err
	}
	rawURL := p.Get("url")
	if strings.Contains(strings.ToLower(rawURL), "file://") {
		return nil, kernel.ParamError("File:// type urls are currently unsupported")
	}
	if err := ssvmOf(c).validateTemplateURL(format, rawURL); err != nil {
		return nil, err
	}
	hv := model.HypervisorType(hvParam)
	if hv == "" {
		return nil, invalidHypervisor(hvParam)
	}
	crossZones := zones == nil
	if crossZones {
		zones = c.State.Zones
	}
	for _, z := range zones {
		if err := checkZoneHypervisor(c.State, z, hv); err != nil {
			return nil, err
		}
	}
	t, err := newTemplate(c, format, hv, deployAsIs)
	if err != nil {
		return nil, err
	}
	t.URL, t.CrossZones, t.State = rawURL, crossZones, tsActive
	rows := registerDownload(c, t, zones, views.TemplateView)
	return kernel.ListBody("template", len(rows), rows), nil
}

// registerDownload stores a registered template (or ISO), Active, with a
// copy per zone for the zone's SSVM to download (TemplateManagerImpl.
// registerTemplate/registerIso → adapter.create: persistTemplate and
// createTemplateWithinZones), and answers its rows in view.
func registerDownload(c *kernel.Call, t *model.Template, zones []*model.Zone,
	view func(*kernel.Call, views.TemplateRow) map[string]any) []map[string]any {
	now := c.Engine.Now()
	rows := []map[string]any{}
	for _, z := range zones {
		// The DownloadListener's constructor reports DownloadAnswer("",
		// NOT_DOWNLOADED) at once: the error string is "" from the start
		// (BaseImageStoreDriverImpl.createTemplateAsyncCallback).
		cp := &model.TemplateCopy{ZoneID: z.ID, DownloadState: model.DlNotDownloaded, ErrorString: errorText(""), Created: now}
		t.Copies = append(t.Copies, cp)
		rows = append(rows, view(c, views.TemplateRow{Template: t, Copy: cp}))
	}
	c.State.Templates = append(c.State.Templates, t)
	c.Changed()
	for _, z := range zones {
		ssvmOf(c).startDownload(t, z.ID)
	}
	return rows
}

// newTemplate builds a user template from the parameters registerTemplate
// and getUploadParamsForTemplate share (TemplateAdapterBase.prepare's
// defaults: private, 64 bits, HVM, not extractable).
func newTemplate(c *kernel.Call, format, hv string, deployAsIs bool) (*model.Template, *kernel.APIError) {
	p := c.Params
	ttype := "USER"
	if v := p.Get("templatetype"); v != "" {
		ttype = strings.ToUpper(v)
		if !slices.Contains([]string{"USER", "VNF", "SYSTEM", "ROUTING", "BUILTIN"}, ttype) {
			return nil, kernel.ParamError("Invalid template type %s. Valid options are: USER, VNF, SYSTEM, ROUTING, BUILTIN", v)
		}
	}
	// TemplateAdapterBase.prepare: the owner is getEntityOwnerId's account,
	// the project's with projectid (AccountManagerImpl.finalizeOwner).
	owner, err := c.Owner()
	if err != nil {
		return nil, kernel.AsAPIError(err)
	}
	id, internal := c.State.NewID(model.KindTemplate)
	name := p.Get("name")
	t := &model.Template{ID: id, InternalID: internal, Name: name, DisplayText: p.Get("displaytext"), Format: format,
		Hypervisor: hv, OSTypeID: p.Get("ostypeid"), AccountID: owner.ID, Type: ttype,
		Public: p.Bool("ispublic", false), Featured: c.Account.Type == 1 && p.Bool("isfeatured", false),
		Extractable: p.Bool("isextractable", false), PasswordEnabled: p.Bool("passwordenabled", false),
		SSHKeyEnabled: p.Bool("sshkeyenabled", false), DynamicallyScalable: p.Bool("isdynamicallyscalable", false),
		RequiresHVM: p.Bool("requireshvm", true), Bits: int(p.Int("bits", 64)), Checksum: p.Get("checksum"),
		DeployAsIs: deployAsIs, Created: c.Engine.Now()}
	if strings.TrimSpace(t.DisplayText) == "" {
		t.DisplayText = name
	}
	if d := p.Map("details"); len(d) > 0 {
		t.Details = d[0]
	}
	if o, ok := model.ByID(c.State.OSTypes, t.OSTypeID); ok {
		t.OSTypeID = o.ID // canonical spelling
	}
	return t, nil
}

// extensionsByFormat are UriUtils' SUPPORTED_EXTENSIONS_BY_FORMAT, without
// .metalink, which the simulator cannot follow.
var extensionsByFormat = map[string][]string{
	"vhd": {"vhd"}, "vhdx": {"vhdx"}, "qcow2": {"qcow2", "img"}, "ova": {"ova"}, "tar": {"tar"},
	"raw": {"img", "raw"}, "vmdk": {"vmdk"}, "iso": {"iso"},
}

func pathHasExtension(lowerPath string, bases []string) bool {
	for _, b := range bases {
		for _, comp := range []string{"", ".zip", ".bz2", ".gz"} { // UriUtils.COMMPRESSION_FORMATS
			if strings.HasSuffix(lowerPath, "."+b+comp) {
				return true
			}
		}
	}
	return false
}

// validateTemplateURL is UriUtils.validateUrl(format, url): an http(s) URL
// whose host is not any-local, link-local, loopback or multicast (private
// hosts pass: whether the SSVM reaches them shows when it downloads) and
// whose path ends in an extension of the format. Errors are
// IllegalArgumentExceptions: 431 with cserrorcode 9999. Departure: with
// AllowLoopbackURLs loopback hosts pass, for tests serving images locally.
func (s *SSVM) validateTemplateURL(format, rawURL string) *kernel.APIError {
	u, err := url.Parse(rawURL)
	if err != nil {
		return kernel.ServerParamError("Invalid URL: %s", rawURL)
	}
	if !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") {
		return kernel.ServerParamError("Unsupported scheme for url: %s", rawURL)
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
			return kernel.ServerParamError("Unable to resolve %s", host)
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
	case ip.IsLoopback() && s.AllowLoopbackURLs && host != "":
	case ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsLoopback() || ip.IsMulticast():
		return kernel.ServerParamError("Illegal host specified in url")
	}
	if ip.To4() == nil {
		return kernel.ServerParamError("IPV6 addresses not supported (%s)", ip)
	}
	lower := strings.ToLower(u.Path)
	if !pathHasExtension(lower, extensionsByFormat[strings.ToLower(format)]) {
		known := false
		for _, bases := range extensionsByFormat {
			known = known || pathHasExtension(lower, bases)
		}
		if !known {
			return kernel.ServerParamError("Please specify a valid %s", strings.ToLower(format))
		}
		return kernel.ServerParamError("Please specify a valid URL. URL:%s is an invalid for the format %s", u.Path, strings.ToLower(format))
	}
	return nil
}

// InternalSites parses secstorage.allowed.internal.sites as
// SecondaryStorageManagerImpl.generateVMSetupCommand hands it to the SSVM
// (comma-separated CIDRs or addresses), leaving out 0.0.0.0 sites, which the
// setting's description says are not valid.
func InternalSites(value string) []*net.IPNet {
	var nets []*net.IPNet
	for _, site := range strings.Split(value, ",") {
		site = strings.TrimSpace(site)
		if !strings.Contains(site, "/") {
			site += "/32"
		}
		_, n, err := net.ParseCIDR(site)
		if err == nil && n.IP.To4() != nil && !n.IP.Equal(net.IPv4zero) {
			nets = append(nets, n)
		}
	}
	return nets
}

// SSVMUnreachable is the error of a download the SSVM cannot route: it
// reaches a site-local (RFC 1918) host only through the routes
// NfsSecondaryStorageResource adds on SecStorageVMSetupCommand for the
// internal sites; any other goes out of its public interface and gets no
// answer, and HttpTemplateDownloader.download stores the IOException's
// message (its connection manager sets no timeout: the kernel's connect
// timeout ends it, java.net.ConnectException). "" when the download can go
// ahead. Departures: the simulator does not try the connection, and fails at
// once rather than after the kernel's two minutes or so.
func (s *SSVM) SSVMUnreachable(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	ip := net.ParseIP(u.Hostname())
	if ip == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		ips, err := net.DefaultResolver.LookupIP(ctx, "ip4", u.Hostname())
		cancel()
		if err != nil || len(ips) == 0 {
			return ""
		}
		ip = ips[0]
	}
	if ip = ip.To4(); ip == nil || !ip.IsPrivate() {
		return ""
	}
	for _, n := range s.SSVMSites {
		if n.Contains(ip) {
			return ""
		}
	}
	return "Connection timed out"
}

// urlPath is a URL's path, for the extension checks.
func urlPath(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.Path
	}
	return rawURL
}
