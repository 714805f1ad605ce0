package cloudstack

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// Template is one zone's copy of a CloudStack template: a template in three
// zones is three of these with one ID.
type Template struct {
	ID          string
	Name        string
	DisplayText string
	ZoneID      string
	Status      string
	IsReady     bool
	Format      string
	Hypervisor  Hypervisor
	// DownloadStates are downloaddetails' downloadState, one per image store
	// of the zone (VMTemplateStorageResourceAssoc.Status names).
	DownloadStates []string
	// Created is when CloudStack made this zone's copy; Size its virtual
	// size in bytes (0 until CloudStack knows it).
	Created time.Time
	Size    int64
}

// TemplateSpec is what registering a template needs.
type TemplateSpec struct {
	Name        string
	DisplayText string
	Format      string
	Hypervisor  Hypervisor
	OSTypeID    string
	ZoneIDs     []string
	Bits        int
	Public      bool
	Extractable bool
	RequiresHVM bool
}

// templateParams is what registerTemplate and getUploadParamsForTemplate
// share.
type templateParams interface {
	SetOstypeid(string)
	SetBits(int)
	SetIspublic(bool)
	SetIsextractable(bool)
	SetRequireshvm(bool)
}

func (s TemplateSpec) apply(p templateParams) {
	if s.OSTypeID != "" {
		p.SetOstypeid(s.OSTypeID)
	}
	p.SetBits(s.Bits)
	p.SetIspublic(s.Public)
	p.SetIsextractable(s.Extractable)
	p.SetRequireshvm(s.RequiresHVM)
}

// UploadParams is where and how to POST a template's bytes.
type UploadParams struct {
	TemplateID string
	PostURL    string
	Signature  string
	Metadata   string
	Expires    string
}

// GetUploadParams registers an empty template in the spec's first zone and
// returns where to POST its bytes; the template exists from here on.
func (c *Client) GetUploadParams(s TemplateSpec) (*UploadParams, error) {
	p := c.cs.Template.NewGetUploadParamsForTemplateParams(s.DisplayText, s.Format, string(s.Hypervisor), s.Name, s.ZoneIDs[0])
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	s.apply(p)
	r, err := c.cs.Template.GetUploadParamsForTemplate(p)
	if err != nil {
		return nil, c.fail("getUploadParamsForTemplate", err)
	}
	return &UploadParams{TemplateID: r.Id, PostURL: r.PostURL, Signature: r.Signature, Metadata: r.Metadata, Expires: r.Expires}, nil
}

// RegisterTemplate has CloudStack's secondary storage download url into
// every zone of the spec and returns the template's id.
func (c *Client) RegisterTemplate(s TemplateSpec, url string) (string, error) {
	p := c.cs.Template.NewRegisterTemplateParams(s.DisplayText, s.Format, string(s.Hypervisor), s.Name, url)
	if err := c.inProject(p); err != nil {
		return "", err
	}
	p.SetZoneids(s.ZoneIDs)
	s.apply(p)
	r, err := c.cs.Template.RegisterTemplate(p)
	if err != nil {
		return "", c.fail("registerTemplate", err)
	}
	if len(r.RegisterTemplate) == 0 {
		return "", fmt.Errorf("CloudStack registerTemplate answered without a template")
	}
	return r.RegisterTemplate[0].Id, nil
}

// Templates lists every zone's copy of a template the account can run,
// named by id, or by exact name for the earlier CPIs' name-style CIDs
// (cpitemplate-…); none is an empty list.
func (c *Client) Templates(ref string) ([]Template, error) {
	p := c.cs.Template.NewListTemplatesParams("executable")
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	if !IsID(ref) {
		return c.templatesNamed(p, ref)
	}
	p.SetId(ref)
	copies, err := c.listTemplates(p)
	if IsNoSuchEntity(err) {
		return nil, nil
	}
	return copies, err
}

// templatesNamed lists the copies of the one template named exactly name;
// two templates may share a name.
func (c *Client) templatesNamed(p *csgo.ListTemplatesParams, name string) ([]Template, error) {
	named, err := c.listNamed(p, name)
	for _, t := range named {
		if t.ID != named[0].ID {
			return nil, fmt.Errorf("templates %s and %s are both named %q; refusing to guess which one is meant", named[0].ID, t.ID, name)
		}
	}
	return named, err
}

// listNamed lists the templates named exactly name: listTemplates' name is
// a substring filter.
func (c *Client) listNamed(p *csgo.ListTemplatesParams, name string) ([]Template, error) {
	p.SetName(name)
	all, err := c.listTemplates(p)
	if err != nil {
		return nil, err
	}
	return namedExactly(all, name, func(t Template) string { return t.Name }), nil
}

// FindTemplateByName finds the template named exactly name in a zone.
func (c *Client) FindTemplateByName(name, zoneID string) (*Template, error) {
	p := c.cs.Template.NewListTemplatesParams("executable")
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetZoneid(zoneID)
	found, err := c.listNamed(p, name)
	if err != nil {
		return nil, err
	}
	return exactlyOne(found, name, func(t Template) (string, string) { return "", t.Name }, "templates in zone "+zoneID)
}

// OwnTemplates lists every zone's copy of the account's own templates, in
// any state (templatefilter=self), named exactly name unless name is "".
func (c *Client) OwnTemplates(name string) ([]Template, error) {
	p := c.cs.Template.NewListTemplatesParams("self")
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	if name == "" {
		return c.listTemplates(p)
	}
	return c.listNamed(p, name)
}

// Mark reads the CPI's mark from the template's display text (neither
// getUploadParamsForTemplate nor registerTemplate takes tags); false when it
// has none (a template of someone else's, or of an older CPI).
func (t Template) Mark() (marks.Template, bool) { return marks.ReadTemplate(t.DisplayText) }

// SetTemplateDisplayText replaces a template's display text (updateTemplate,
// a synchronous command).
func (c *Client) SetTemplateDisplayText(id, text string) error {
	p := c.cs.Template.NewUpdateTemplateParams(id)
	p.SetDisplaytext(text)
	if _, err := c.cs.Template.UpdateTemplate(p); err != nil {
		return c.fail("updateTemplate", err)
	}
	return nil
}

// listTemplates reads every page (a row per template and zone).
func (c *Client) listTemplates(p *csgo.ListTemplatesParams) ([]Template, error) {
	return everyRow(p, func(p *csgo.ListTemplatesParams) ([]*csgo.Template, int, error) {
		resp, err := c.cs.Template.ListTemplates(p)
		if err != nil {
			return nil, 0, c.fail("listTemplates", err)
		}
		return resp.Templates, resp.Count, nil
	}, func(t *csgo.Template) Template {
		return Template{ID: t.Id, Name: t.Name, DisplayText: t.Displaytext, ZoneID: t.Zoneid, Status: t.Status,
			IsReady: t.Isready, Format: t.Format, Hypervisor: Hypervisor(t.Hypervisor), Created: csTime(t.Created),
			Size: t.Size, DownloadStates: downloadStates(t.Downloaddetails)}
	})
}

// CopyTemplate copies template id from one zone to others, waiting for
// the job; the copies keep the id.
func (c *Client) CopyTemplate(id, fromZone string, toZones []string) error {
	p := c.cs.Template.NewCopyTemplateParams(id)
	p.SetSourcezoneid(fromZone)
	p.SetDestzoneids(toZones)
	r, err := c.cs.Template.CopyTemplate(p)
	if err != nil {
		return c.fail("copyTemplate", err)
	}
	_, err = c.waitJob("copyTemplate", r.JobID)
	return err
}

// IsTemplateBusy says CloudStack refused to delete a template because a
// transfer is pending: TemplateAdapterBase.prepareDelete while the template
// is NotUploaded or UploadInProgress (which lasts until the upload monitor
// finishes or abandons it), HypervisorTemplateAdapter.delete while a copy
// is DOWNLOAD_IN_PROGRESS.
func IsTemplateBusy(err error) bool {
	var api *APIError
	if !errors.As(err, &api) {
		return false
	}
	return strings.Contains(api.Text, "is either getting uploaded or it may be initiated shortly") ||
		strings.Contains(api.Text, "not currently being downloaded")
}

// IsTemplateInUse says CloudStack refused to delete a template because VMs
// not yet expunged were deployed from it (TemplateManagerImpl.deleteTemplate,
// skipped when forced): Destroyed VMs count until CloudStack's expunge
// thread removes them, after expunge.delay.
func IsTemplateInUse(err error) bool {
	var api *APIError
	return errors.As(err, &api) && strings.Contains(api.Text, "VM instances using it")
}

// InternalSiteHint is what an operator needs when CloudStack failed to
// download a template from url: for a host with a private (RFC 1918)
// address, that the secondary storage VM reaches such hosts only in the
// networks of the global setting secstorage.allowed.internal.sites, which
// CloudStack hands to the SSVM when the management server and the SSVM
// start. "" for any other host.
func InternalSiteHint(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	ip := net.ParseIP(u.Hostname())
	if ip == nil || ip.To4() == nil || !ip.IsPrivate() {
		return ""
	}
	return fmt.Sprintf("CloudStack's secondary storage VM downloads from a private address such as %s only if the "+
		"global setting secstorage.allowed.internal.sites lists its network: add the director's network (e.g. %s) "+
		"to it, then restart the management server and the secondary storage VM, which read it when they start",
		ip, privateNetwork(ip))
}

func privateNetwork(ip net.IP) string {
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(24, 32)), Mask: net.CIDRMask(24, 32)}).String()
}

// DeleteTemplate deletes template id from every zone, waiting for the job.
func (c *Client) DeleteTemplate(id string, forced bool) error {
	p := c.cs.Template.NewDeleteTemplateParams(id)
	if forced {
		p.SetForced(true)
	}
	r, err := c.cs.Template.DeleteTemplate(p)
	if err != nil {
		return c.fail("deleteTemplate", err)
	}
	_, err = c.waitJob("deleteTemplate", r.JobID)
	return err
}

// downloadStates reads downloaddetails' downloadState, one per image store,
// the same for templates and ISOs (TemplateJoinDaoImpl shows them to the
// owner only).
func downloadStates(details []map[string]string) []string {
	var out []string
	for _, d := range details {
		out = append(out, d["downloadState"])
	}
	return out
}
