package cloudstack

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// Template is one zone's copy of a CloudStack template: a template in three
// zones is three of these with one ID.
type Template struct {
	ID         string
	Name       string
	ZoneID     string
	Status     string
	IsReady    bool
	Format     string
	Hypervisor string
}

// Failed says CloudStack gave up on the template. CloudStack 4.22 shows
// progress as a few fixed texts or "<n>% Downloaded"; anything else on a
// template that is not ready is the secondary storage's error text.
func (t Template) Failed() bool {
	if t.IsReady {
		return false
	}
	switch t.Status {
	case "", "Processing", "Installing Template", "Download Complete", "Bypassed Secondary Storage",
		"Not Uploaded", "Upload in Progress", "Uploaded":
		return false
	}
	return !progressStatus.MatchString(t.Status)
}

var progressStatus = regexp.MustCompile(`^\d{1,3}% (Downloaded|Uploaded)$|^[A-Z_]+_IN_PROGRESS$|^NOT_DOWNLOADED$|^NOT_UPLOADED$`)

// TemplateSpec is what registering a template needs.
type TemplateSpec struct {
	Name        string
	DisplayText string
	Format      string
	Hypervisor  string
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
	p := c.cs.Template.NewGetUploadParamsForTemplateParams(s.DisplayText, s.Format, s.Hypervisor, s.Name, s.ZoneIDs[0])
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
	p := c.cs.Template.NewRegisterTemplateParams(s.DisplayText, s.Format, s.Hypervisor, s.Name, url)
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

// Templates lists every zone's copy of template id that the account can
// run; none is an empty list.
func (c *Client) Templates(id string) ([]Template, error) {
	if !csgo.IsID(id) {
		return nil, nil
	}
	p := c.cs.Template.NewListTemplatesParams("executable")
	p.SetId(id)
	copies, err := c.listTemplates(p)
	if IsNoSuchEntity(err) {
		return nil, nil
	}
	return copies, err
}

// FindTemplateByName finds the template named exactly name in a zone.
func (c *Client) FindTemplateByName(name, zoneID string) (*Template, error) {
	p := c.cs.Template.NewListTemplatesParams("executable")
	p.SetName(name) // a substring filter: compared exactly below
	p.SetZoneid(zoneID)
	all, err := c.listTemplates(p)
	if err != nil {
		return nil, err
	}
	var found []Template
	for _, t := range all {
		if t.Name == name {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return &found[0], nil
	}
	return nil, fmt.Errorf("%d templates are named %q in zone %s; name the one meant by id", len(found), name, zoneID)
}

func (c *Client) listTemplates(p *csgo.ListTemplatesParams) ([]Template, error) {
	resp, err := c.cs.Template.ListTemplates(p)
	if err != nil {
		return nil, c.fail("listTemplates", err)
	}
	out := make([]Template, 0, len(resp.Templates))
	for _, t := range resp.Templates {
		out = append(out, Template{ID: t.Id, Name: t.Name, ZoneID: t.Zoneid, Status: t.Status, IsReady: t.Isready,
			Format: t.Format, Hypervisor: t.Hypervisor})
	}
	return out, nil
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

// TemplateTimeoutError means a template was not ready in time.
type TemplateTimeoutError struct {
	ID      string
	Waited  time.Duration
	Pending []Template
}

func (e *TemplateTimeoutError) Error() string {
	var states []string
	for _, t := range e.Pending {
		states = append(states, fmt.Sprintf("zone %s: %q", t.ZoneID, t.Status))
	}
	return fmt.Sprintf("template %s was not ready after %s (%s)", e.ID, e.Waited.Round(time.Second), strings.Join(states, "; "))
}

// TemplateFailedError carries the status text CloudStack gave up with.
type TemplateFailedError struct {
	ID, ZoneID, Status string
}

func (e *TemplateFailedError) Error() string {
	return fmt.Sprintf("CloudStack could not install template %s in zone %s: %s", e.ID, e.ZoneID, e.Status)
}

// WaitTemplate polls listTemplates until template id is ready in every zone,
// reporting each status change; it fails on CloudStack's error status or
// after timeout.
func (c *Client) WaitTemplate(id string, zoneIDs []string, timeout time.Duration, report func(Template)) error {
	start := time.Now()
	delay := c.jobs.first
	seen := map[string]string{}
	for {
		time.Sleep(delay)
		copies, err := c.Templates(id)
		if err != nil {
			return err
		}
		pending, err := pendingCopies(id, zoneIDs, copies)
		for _, t := range copies {
			if seen[t.ZoneID] != t.Status && report != nil {
				report(t)
			}
			seen[t.ZoneID] = t.Status
		}
		if err != nil || len(pending) == 0 {
			return err
		}
		if time.Since(start)+delay > timeout {
			return &TemplateTimeoutError{ID: id, Waited: time.Since(start), Pending: pending}
		}
		delay = c.jobs.next(time.Since(start))
	}
}

func pendingCopies(id string, zoneIDs []string, copies []Template) ([]Template, error) {
	byZone := map[string]Template{}
	for _, t := range copies {
		byZone[t.ZoneID] = t
	}
	var pending []Template
	for _, z := range zoneIDs {
		t, ok := byZone[z]
		switch {
		case !ok:
			pending = append(pending, Template{ID: id, ZoneID: z, Status: "not yet listed"})
		case t.Failed():
			return nil, &TemplateFailedError{ID: id, ZoneID: z, Status: t.Status}
		case !t.IsReady:
			pending = append(pending, t)
		}
	}
	return pending, nil
}

// DeleteTemplate deletes template id from every zone, waiting for the job.
func (c *Client) DeleteTemplate(id string) error {
	p := c.cs.Template.NewDeleteTemplateParams(id)
	r, err := c.cs.Template.DeleteTemplate(p)
	if err != nil {
		return c.fail("deleteTemplate", err)
	}
	_, err = c.waitJob("deleteTemplate", r.JobID)
	return err
}
