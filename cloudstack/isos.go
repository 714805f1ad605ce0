package cloudstack

import (
	"errors"
	"fmt"
	"strings"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// ISO is a CloudStack ISO: for the CPI, the config drive of one VM of an
// OpenStack KVM stemcell. An ISO is a template of format ISO to CloudStack
// (TemplateAdapterBase, IsoUploadParams), so its readiness reads as a
// template's does.
type ISO struct {
	ID          string
	Name        string
	DisplayText string
	ZoneID      string
	Status      string
	IsReady     bool
	// DownloadStates are downloaddetails' downloadState, one per image
	// store (shown to the owner only: TemplateJoinDaoImpl.newIsoResponse).
	DownloadStates []string
	// Created is when CloudStack made it; Size its size in bytes.
	Created time.Time
	Size    int64
}

// ISOSpec is what creating the ISO needs. CloudStack takes no tags with
// it, so the display text carries the CPI's mark (marks.Template).
type ISOSpec struct {
	Name        string
	DisplayText string
	ZoneID      string
}

// Mark reads the CPI's mark from the ISO's display text; false when it has
// none (someone else's ISO).
func (i ISO) Mark() (marks.Template, bool) { return marks.ReadTemplate(i.DisplayText) }

// asTemplate lets the template readiness rules judge the ISO.
func (i ISO) asTemplate() Template {
	return Template{ID: i.ID, Name: i.Name, ZoneID: i.ZoneID, Status: i.Status, IsReady: i.IsReady,
		DownloadStates: i.DownloadStates}
}

// isoParams are the flags both ways of creating the CPI's ISO send: a data
// ISO, private and non-extractable (it carries the agent's credentials).
// bootable=false makes CloudStack give it the "None" guest OS
// (TemplateAdapterBase.prepare), so no ostypeid is needed.
func isoParams(p *csgo.CustomServiceParams, s ISOSpec) {
	p.SetParam("name", s.Name)
	p.SetParam("displaytext", s.DisplayText)
	p.SetParam("zoneid", s.ZoneID)
	p.SetParam("bootable", false)
	p.SetParam("ispublic", false)
	p.SetParam("isextractable", false)
	p.SetParam("isfeatured", false)
}

// ISOUploadParams creates an ISO awaiting its bytes (getUploadParamsForIso,
// since 4.13) and returns where to POST them; the ISO exists from here on.
// cloudstack-go v2.19.0's GetUploadParamsForIso reads the answer flat,
// while CloudStack nests it under "getuploadparams"
// (GetUploadParamsResponse's object name), so every field would be empty:
// this goes through CustomRequest and unwraps the object itself.
func (c *Client) ISOUploadParams(s ISOSpec) (*UploadParams, error) {
	p := &csgo.CustomServiceParams{}
	isoParams(p, s)
	if err := c.customInProject(p); err != nil {
		return nil, err
	}
	// AbstractGetUploadParamsCmd requires format; IsoUploadParams ignores
	// the value and stores ISO, which is what CloudStack's UI sends.
	p.SetParam("format", "ISO")
	var r struct {
		Params struct {
			ID        string `json:"id"`
			PostURL   string `json:"postURL"`
			Metadata  string `json:"metadata"`
			Expires   string `json:"expires"`
			Signature string `json:"signature"`
		} `json:"getuploadparams"`
	}
	custom, _ := c.cs.Custom.(*csgo.CustomService)
	if err := custom.CustomRequest("getUploadParamsForIso", p, &r); err != nil {
		return nil, c.fail("getUploadParamsForIso", err)
	}
	u := r.Params
	if u.ID == "" || u.PostURL == "" {
		return nil, fmt.Errorf("CloudStack's getUploadParamsForIso answered without an id or postURL")
	}
	return &UploadParams{TemplateID: u.ID, PostURL: u.PostURL, Signature: u.Signature, Metadata: u.Metadata,
		Expires: u.Expires}, nil
}

// RegisterISO has CloudStack's secondary storage VM download the ISO from
// url (registerIso, answered at once; the download runs on) and returns
// its id.
func (c *Client) RegisterISO(s ISOSpec, url string) (string, error) {
	p := &csgo.CustomServiceParams{}
	isoParams(p, s)
	if err := c.customInProject(p); err != nil {
		return "", err
	}
	p.SetParam("url", url)
	var r struct {
		ISOs []struct {
			ID string `json:"id"`
		} `json:"iso"`
	}
	custom, _ := c.cs.Custom.(*csgo.CustomService)
	if err := custom.CustomRequest("registerIso", p, &r); err != nil {
		return "", c.fail("registerIso", err)
	}
	if len(r.ISOs) == 0 || r.ISOs[0].ID == "" {
		return "", fmt.Errorf("CloudStack registerIso answered without an ISO")
	}
	return r.ISOs[0].ID, nil
}

// FindISO finds one of the account's own ISOs by id, ready or not:
// isofilter=self, since the default selfexecutable lists only ready ones
// (ListIsosCmd.listInReadyState). Absent is (nil, nil).
func (c *Client) FindISO(id string) (*ISO, error) {
	p := c.cs.ISO.NewListIsosParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetIsofilter("self")
	p.SetId(id)
	found, err := c.listISOs(p)
	if IsNoSuchEntity(err) || len(found) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &found[0], nil
}

// OwnISOs lists the account's own ISOs in any state, named exactly name
// unless name is "" (listIsos' name is a substring filter).
func (c *Client) OwnISOs(name string) ([]ISO, error) {
	p := c.cs.ISO.NewListIsosParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetIsofilter("self")
	if name != "" {
		p.SetName(name)
	}
	all, err := c.listISOs(p)
	if err != nil || name == "" {
		return all, err
	}
	return namedExactly(all, name, func(i ISO) string { return i.Name }), nil
}

// listISOs reads every page: an OpenStack KVM deployment has an ISO per VM.
func (c *Client) listISOs(p *csgo.ListIsosParams) ([]ISO, error) {
	return everyRow(p, func(p *csgo.ListIsosParams) ([]*csgo.Iso, int, error) {
		resp, err := c.cs.ISO.ListIsos(p)
		if err != nil {
			return nil, 0, c.fail("listIsos", err)
		}
		return resp.Isos, resp.Count, nil
	}, func(i *csgo.Iso) ISO {
		return ISO{ID: i.Id, Name: i.Name, DisplayText: i.Displaytext, ZoneID: i.Zoneid, Status: i.Status,
			IsReady: i.Isready, Created: csTime(i.Created), Size: i.Size, DownloadStates: downloadStates(i.Downloaddetails)}
	})
}

// WaitISO polls listIsos until the ISO is ready: an upload is ready at the
// upload monitor's next poll after the POST (ImageStoreUploadMonitorImpl,
// every upload.monitoring.interval), a registration when the SSVM's
// download ends. It fails on CloudStack's failure signals (those of
// templates: the same state machine) or after timeout.
func (c *Client) WaitISO(id string, timeout time.Duration) error {
	start := time.Now()
	delay := c.jobs.first
	for {
		time.Sleep(delay)
		iso, err := c.FindISO(id)
		switch {
		case err != nil:
			return err
		case iso == nil:
			return fmt.Errorf("ISO %s disappeared while CloudStack was installing it", id)
		case iso.IsReady:
			return nil
		case iso.asTemplate().Failed():
			return &ISOFailedError{ID: id, Status: iso.asTemplate().Progress()}
		}
		if time.Since(start)+delay > timeout {
			return &ISOTimeoutError{ID: id, Waited: time.Since(start), Status: iso.asTemplate().Progress()}
		}
		delay = c.jobs.next(time.Since(start))
	}
}

// ISOFailedError carries the status CloudStack gave up on an ISO with.
type ISOFailedError struct{ ID, Status string }

func (e *ISOFailedError) Error() string {
	return fmt.Sprintf("CloudStack could not install ISO %s: %s", e.ID, firstNonEmpty(e.Status, "no error text"))
}

// ISOTimeoutError means an ISO was not ready in time.
type ISOTimeoutError struct {
	ID     string
	Waited time.Duration
	Status string
}

func (e *ISOTimeoutError) Error() string {
	return fmt.Sprintf("ISO %s was not ready after %s (status %q)", e.ID, e.Waited.Round(time.Second), e.Status)
}

// IsISOTimeout says an ISO was not ready in time: worth a retry once it is
// removed.
func IsISOTimeout(err error) bool {
	var t *ISOTimeoutError
	return errors.As(err, &t)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// AttachISO attaches an ISO to a VM (attachIso, async). On a Stopped VM
// CloudStack only records it (TemplateManagerImpl.attachISOToVM); the ISO
// must be ready by the start (prepareIsoForVmProfile).
func (c *Client) AttachISO(id, vmID string) error {
	r, err := c.cs.ISO.AttachIso(c.cs.ISO.NewAttachIsoParams(id, vmID))
	if err != nil {
		return c.fail("attachIso", err)
	}
	_, err = c.waitJob("attachIso", r.JobID)
	return err
}

// DetachISO detaches the VM's ISO (detachIso, async; 4.22 has one ISO per
// VM). A VM with none is IsNoISOAttached.
func (c *Client) DetachISO(vmID string) error {
	r, err := c.cs.ISO.DetachIso(c.cs.ISO.NewDetachIsoParams(vmID))
	if err != nil {
		return c.fail("detachIso", err)
	}
	_, err = c.waitJob("detachIso", r.JobID)
	return err
}

// DeleteISO deletes an ISO from every zone (deleteIso, async).
func (c *Client) DeleteISO(id string) error {
	r, err := c.cs.ISO.DeleteIso(c.cs.ISO.NewDeleteIsoParams(id))
	if err != nil {
		return c.fail("deleteIso", err)
	}
	_, err = c.waitJob("deleteIso", r.JobID)
	return err
}

// SetISODisplayText replaces an ISO's display text (updateIso, sync).
func (c *Client) SetISODisplayText(id, text string) error {
	p := c.cs.ISO.NewUpdateIsoParams(id)
	p.SetDisplaytext(text)
	if _, err := c.cs.ISO.UpdateIso(p); err != nil {
		return c.fail("updateIso", err)
	}
	return nil
}

// IsISOInUse says CloudStack refused to delete an ISO because a VM not yet
// expunged, Destroyed ones included, has it attached
// (TemplateManagerImpl.deleteIso, templateIsDeleteable).
func IsISOInUse(err error) bool {
	var api *APIError
	return errors.As(err, &api) && strings.Contains(api.Text, "as it's used by other instances")
}

// IsISOBusy says CloudStack refused to delete an ISO whose transfer is
// pending: NotUploaded or UploadInProgress until the upload monitor ends
// or abandons it (TemplateAdapterBase.prepareDelete), or a copy still
// downloading (HypervisorTemplateAdapter.delete).
func IsISOBusy(err error) bool { return IsTemplateBusy(err) }

// IsNoISOAttached says detachIso found no ISO on the VM
// (TemplateManagerImpl.detachIso): nothing to detach.
func IsNoISOAttached(err error) bool {
	var api *APIError
	return errors.As(err, &api) && strings.Contains(api.Text, "has no ISO attached")
}
