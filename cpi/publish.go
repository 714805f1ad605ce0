package cpi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell"
	"github.com/bosh-cloudstack/cloudstack-cpi/webdav"
)

// publisher gets one prepared image into CloudStack as a template and, on
// any failure, deletes the template it created before returning.
type publisher struct {
	cpi  CPI
	spec cloudstack.TemplateSpec
	img  *stemcell.Image
}

func (p publisher) byUpload() (string, error) {
	deadline := time.Now().Add(p.cpi.cfg.Stemcell.Timeout.D())
	up, err := p.cpi.cloud.GetUploadParams(p.spec)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	target := stemcell.UploadTarget{URL: up.PostURL, Signature: up.Signature, Metadata: up.Metadata, Expires: up.Expires}
	progress := stemcell.Progress{Label: "uploading " + p.spec.Name, Log: p.log}
	err = stemcell.Upload(ctx, p.cpi.cloud.UploadClient(), target, p.img, p.spec.Name, progress)
	if err == nil {
		err = p.wait(up.TemplateID, p.spec.ZoneIDs[:1], deadline)
	}
	if err == nil && len(p.spec.ZoneIDs) > 1 {
		err = p.copyToOtherZones(up.TemplateID, deadline)
	}
	if err != nil {
		return "", p.discard(up.TemplateID, err)
	}
	return up.TemplateID, nil
}

func (p publisher) copyToOtherZones(id string, deadline time.Time) error {
	zones := p.spec.ZoneIDs
	if err := p.cpi.cloud.CopyTemplate(id, zones[0], zones[1:]); err != nil {
		return err
	}
	return p.wait(id, zones, deadline)
}

// byWebDAV serves the image from this process until CloudStack has it.
func (p publisher) byWebDAV() (string, error) {
	cfg := p.cpi.cfg.WebDAV
	srv, err := webdav.Listen(cfg.Listen, cfg.PublicURL)
	if err != nil {
		return "", err
	}
	defer srv.Close(5 * time.Second)
	url, err := srv.Publish(p.img.Path, p.spec.Name+p.img.Extension)
	if err != nil {
		return "", err
	}
	p.log("serving %s over WebDAV from %s for CloudStack's secondary storage", p.spec.Name, srv.Addr())
	deadline := time.Now().Add(p.cpi.cfg.Stemcell.Timeout.D())
	id, err := p.cpi.cloud.RegisterTemplate(p.spec, url)
	if err != nil {
		return "", err
	}
	if err := p.wait(id, p.spec.ZoneIDs, deadline); err != nil {
		// Stop serving first: a download still running then fails, and
		// CloudStack lets a failed template be deleted.
		_ = srv.Close(0)
		return "", p.discard(id, withSiteHint(err, url))
	}
	return id, nil
}

// byDaemon hands the image to the `serve` WebDAV daemon (webdav.daemon_url)
// and registers the template with the daemon's public URL. The image is
// taken back as soon as CloudStack has the template or gave up on it, so
// delete_stemcell has nothing left on the daemon; what a crash leaves there
// is removed by the daemon after webdav.max_age.
func (p publisher) byDaemon() (string, error) {
	cfg := p.cpi.cfg.WebDAV
	handoff, err := webdav.NewHandoff(webdav.HandoffOptions{DaemonURL: cfg.DaemonURL, PublicURL: cfg.PublicURL,
		Dir: cfg.Dir, Username: cfg.Username, Password: cfg.Password,
		RootCAs: []string{p.cpi.cfg.CloudStack.CACert, cfg.TLSCert}})
	if err != nil {
		return "", err
	}
	deadline := time.Now().Add(p.cpi.cfg.Stemcell.Timeout.D())
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	name := p.spec.Name + p.img.Extension
	if !webdav.ValidName(name) {
		name = "stemcell" + p.img.Extension
	}
	start := time.Now()
	image, err := handoff.Publish(ctx, p.img.Path, name)
	if err != nil {
		return "", err
	}
	how := "uploaded to"
	if image.Local {
		how = "placed in the directory of"
	}
	p.log("%s %s the WebDAV daemon in %s", p.spec.Name, how, time.Since(start).Round(time.Millisecond))
	removed := false
	remove := func() {
		if removed {
			return
		}
		removed = true
		rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
		defer rcancel()
		if err := image.Remove(rctx); err != nil {
			p.log("the image stays on the WebDAV daemon until webdav.max_age removes it: %s", err)
			return
		}
		p.log("removed the image of %s from the WebDAV daemon", p.spec.Name)
	}
	defer remove()
	id, err := p.cpi.cloud.RegisterTemplate(p.spec, image.URL)
	if err != nil {
		return "", err
	}
	if err := p.wait(id, p.spec.ZoneIDs, deadline); err != nil {
		// Take the image back first, so that no download starts again.
		remove()
		return "", p.discard(id, withSiteHint(err, image.URL))
	}
	return id, nil
}

func (p publisher) wait(id string, zones []string, deadline time.Time) error {
	report := func(t cloudstack.Template) {
		p.log("template %s in zone %s: %s", id, t.ZoneID, t.Progress())
	}
	return p.cpi.cloud.WaitTemplate(id, zones, time.Until(deadline), report)
}

// withSiteHint adds, to CloudStack's failure to download url, what to do
// when url's host is private: the SSVM's routes to private networks.
func withSiteHint(err error, url string) error {
	var failed *cloudstack.TemplateFailedError
	if hint := cloudstack.InternalSiteHint(url); hint != "" && errors.As(err, &failed) {
		return fmt.Errorf("%w; %s", err, hint)
	}
	return err
}

// discard deletes a template that will never be a stemcell; if that fails
// too, the operator learns of both. CloudStack refuses to delete a template
// while a transfer is pending - an upload it has not finished or abandoned
// yet, a download in progress - so that refusal is waited out for a while.
func (p publisher) discard(id string, cause error) error {
	p.log("deleting template %s after: %s", id, cause)
	deadline := time.Now().Add(discardPatience)
	delay := time.Second
	waited := false
	for {
		err := p.cpi.cloud.DeleteTemplate(id, false)
		switch {
		case err == nil && waited:
			return fmt.Errorf("%w (template %s deleted once CloudStack let go of its pending transfer)", cause, id)
		case err == nil:
			return fmt.Errorf("%w (template %s deleted)", cause, id)
		case cloudstack.IsTemplateBusy(err) && time.Now().Add(delay).After(deadline):
			return fmt.Errorf("%w; CloudStack still refuses to delete the half-made template %s after %s: %v. "+
				"It gives up an upload that never started after upload.operation.timeout (60 minutes by default) "+
				"and a download when it fails; delete the template then", cause, id, discardPatience, err)
		case !cloudstack.IsTemplateBusy(err):
			return fmt.Errorf("%w; deleting the half-made template %s failed too: %v", cause, id, err)
		}
		p.log("template %s is still transferring; deleting it again in %s", id, delay)
		waited = true
		time.Sleep(delay)
		delay = min(2*delay, 10*time.Second)
	}
}

// discardPatience bounds how long a failed create_stemcell waits for
// CloudStack to let go of its template.
const discardPatience = 3 * time.Minute

func (p publisher) log(format string, args ...any) {
	p.cpi.logger.Info("stemcell", format, args...)
}
