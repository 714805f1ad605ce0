package cpi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/trust"
	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell"
	"github.com/bosh-cloudstack/cloudstack-cpi/webdav"
)

// publisher gets one prepared image into CloudStack as a template and, on
// any failure, deletes the template it created before returning, or says
// that it is left, marked, for a later call to remove.
type publisher struct {
	stemcells stemcells
	spec      cloudstack.TemplateSpec // its display text marked incomplete
	// published is the display text once the stemcell is complete.
	published string
	img       *stemcell.Image
	// patience is how long a refused delete is tried again: a download the
	// CPI stopped serving fails soon (downloadPatience); an upload is
	// settled only by CloudStack's upload monitor, worth one of its polls
	// once the SSVM has all the bytes, taken or refused
	// (uploadSettlePatience), and nothing when they never all arrived,
	// which it abandons after an hour.
	patience time.Duration
}

func (p publisher) byUpload() (string, error) {
	deadline := time.Now().Add(p.stemcells.cfg.Stemcell.Timeout.D())
	up, err := p.stemcells.cloud.GetUploadParams(p.spec)
	if err != nil {
		return "", p.unsure("getUploadParamsForTemplate", err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	target := stemcell.UploadTarget{URL: up.PostURL, Signature: up.Signature, Metadata: up.Metadata, Expires: up.Expires}
	progress := stemcell.Progress{Label: "uploading " + p.spec.Name, Log: p.log}
	err = stemcell.Upload(ctx, p.stemcells.cloud.UploadClient(), target, p.img, p.spec.Name, progress)
	var refused *stemcell.UploadRefusedError
	if err == nil || errors.As(err, &refused) {
		// A failure from here on (a refused poll, a copy) finds the
		// template pending until the upload monitor's next poll.
		p.patience = uploadSettlePatience
	}
	if err == nil {
		err = p.wait(up.TemplateID, p.spec.ZoneIDs[:1], deadline)
	}
	if err == nil && len(p.spec.ZoneIDs) > 1 {
		err = p.copyToOtherZones(up.TemplateID, deadline)
	}
	if err != nil {
		return "", p.discard(up.TemplateID, err)
	}
	return p.finish(up.TemplateID)
}

func (p publisher) copyToOtherZones(id string, deadline time.Time) error {
	zones := p.spec.ZoneIDs
	if err := p.stemcells.cloud.CopyTemplate(id, zones[0], zones[1:]); err != nil {
		return err
	}
	return p.wait(id, zones, deadline)
}

// byWebDAV serves the image from this process until CloudStack has it.
func (p publisher) byWebDAV() (string, error) {
	cfg := p.stemcells.cfg.WebDAV
	srv, err := webdav.Listen(cfg.Listen, cfg.PublicURL)
	if err != nil {
		return "", err
	}
	defer func() {
		if err := srv.Close(5 * time.Second); err != nil {
			p.log("stopping the WebDAV server on %s: %v", srv.Addr(), err)
		}
	}()
	url, err := srv.Publish(p.img.Path, p.spec.Name+p.img.Extension)
	if err != nil {
		return "", err
	}
	p.log("serving %s over WebDAV from %s for CloudStack's secondary storage", p.spec.Name, srv.Addr())
	deadline := time.Now().Add(p.stemcells.cfg.Stemcell.Timeout.D())
	id, err := p.stemcells.cloud.RegisterTemplate(p.spec, url)
	if err != nil {
		_ = srv.Close(0)
		return "", p.unsure("registerTemplate", err)
	}
	if err := p.wait(id, p.spec.ZoneIDs, deadline); err != nil {
		// Stop serving first: a download still running then fails, and
		// CloudStack lets a failed template be deleted.
		_ = srv.Close(0)
		return "", p.discard(id, withSiteHint(err, url))
	}
	return p.finish(id)
}

// byDaemon hands the image to the `serve` WebDAV daemon (webdav.daemon_url)
// and registers the template with the daemon's public URL. The image is
// taken back as soon as CloudStack has the template or gave up on it, so
// delete_stemcell has nothing left on the daemon; what a crash leaves there
// is removed by the daemon after webdav.max_age.
func (p publisher) byDaemon() (string, error) {
	cfg := p.stemcells.cfg.WebDAV
	handoff, err := webdav.NewHandoff(webdav.HandoffOptions{DaemonURL: cfg.DaemonURL, PublicURL: cfg.PublicURL,
		Dir: cfg.Dir, Username: cfg.Username, Password: cfg.Password,
		RootCAs: []trust.PEM{{Setting: "cloudstack.ca_cert", Text: p.stemcells.cfg.CloudStack.CACert},
			{Setting: "webdav.tls_cert", Text: cfg.TLSCert}}})
	if err != nil {
		return "", err
	}
	deadline := time.Now().Add(p.stemcells.cfg.Stemcell.Timeout.D())
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
	id, err := p.stemcells.cloud.RegisterTemplate(p.spec, image.URL)
	if err != nil {
		remove()
		return "", p.unsure("registerTemplate", err)
	}
	if err := p.wait(id, p.spec.ZoneIDs, deadline); err != nil {
		// Take the image back first, so that no download starts again.
		remove()
		return "", p.discard(id, withSiteHint(err, image.URL))
	}
	return p.finish(id)
}

func (p publisher) wait(id string, zones []string, deadline time.Time) error {
	report := func(t cloudstack.Template) {
		p.log("template %s in zone %s: %s", id, t.ZoneID, t.Progress())
	}
	return p.stemcells.cloud.WaitTemplate(id, zones, time.Until(deadline), report)
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

// finish takes the incomplete mark off a template that is ready: from here
// on it is a stemcell the director knows. If that fails, the template goes
// like any failed one.
func (p publisher) finish(id string) (string, error) {
	if err := p.stemcells.cloud.SetTemplateDisplayText(id, p.published); err != nil {
		return "", p.discard(id, fmt.Errorf("template %s is ready, but taking its incomplete mark off failed: %w", id, err))
	}
	return id, nil
}

// unsure settles a creating command that failed: CloudStack may have
// created the template all the same (the answer was lost, a poll failed),
// so it is looked up by the attempt's own name and removed.
func (p publisher) unsure(command string, cause error) error {
	found, err := p.stemcells.cloud.OwnTemplates(p.spec.Name)
	if err != nil {
		return fmt.Errorf("%w; whether %s created template %s could not be checked (%v): if it did, the template is "+
			"marked incomplete and a later create_stemcell or delete_stemcell removes it", cause, command, p.spec.Name, err)
	}
	ids := templateIDs(found)
	if len(ids) == 0 {
		return fmt.Errorf("%w (CloudStack has no template named %s: nothing is left)", cause, p.spec.Name)
	}
	p.log("%s failed but created template %s", command, ids[0])
	for _, id := range ids {
		cause = p.discard(id, cause)
	}
	return cause
}

// discard deletes a template that will never be a stemcell; if CloudStack
// refuses, the template stays marked incomplete, and the error says so.
// CloudStack refuses while a transfer is pending - an upload it has not
// finished or abandoned yet, a download in progress - which is tried again
// for p.patience only.
func (p publisher) discard(id string, cause error) error {
	p.log("deleting template %s after: %s", id, cause)
	err := whileSettling(p.patience, cloudstack.IsTemplateBusy,
		func() error { return p.stemcells.cloud.DeleteTemplate(id, false) },
		func(wait time.Duration) {
			p.log("template %s is still transferring; deleting it again in %s", id, wait)
		})
	if err == nil {
		return fmt.Errorf("%w (template %s deleted)", cause, id)
	}
	return p.leftBehind(id, cause, err)
}

// whileSettling calls try until CloudStack no longer refuses it as busy
// (a transfer it has not settled) or the next try would come after
// patience, waiting 1 s, doubled up to 5 s, between tries; announce says
// each wait.
func whileSettling(patience time.Duration, busy func(error) bool, try func() error, announce func(time.Duration)) error {
	deadline := time.Now().Add(patience)
	delay := time.Second
	for {
		err := try()
		if err == nil || !busy(err) || time.Now().Add(delay).After(deadline) {
			return err
		}
		announce(delay)
		time.Sleep(delay)
		delay = min(2*delay, 5*time.Second)
	}
}

// leftBehind is the error for a template whose delete failed: a lost
// answer or a failed poll may have deleted it all the same, so CloudStack
// is asked.
func (p publisher) leftBehind(id string, cause, deleteErr error) error {
	found, err := p.stemcells.cloud.OwnTemplates(p.spec.Name)
	if err == nil && !containsID(found, id) {
		return fmt.Errorf("%w (template %s deleted)", cause, id)
	}
	hint := ""
	if cloudstack.IsTemplateBusy(deleteErr) {
		hint = " CloudStack deletes no template while an upload is pending (it fails or abandons an upload that " +
			"never completed after upload.operation.timeout, 60 minutes by default) or a download runs."
	}
	return fmt.Errorf("%w; template %s (%s) is left in CloudStack, marked as an incomplete stemcell of this director: "+
		"deleting it failed: %v.%s The next create_stemcell or delete_stemcell removes it once CloudStack allows",
		cause, id, p.spec.Name, deleteErr, hint)
}

func templateIDs(copies []cloudstack.Template) []string {
	var ids []string
	for _, t := range copies {
		if !slices.Contains(ids, t.ID) {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

func containsID(copies []cloudstack.Template, id string) bool {
	for _, t := range copies {
		if t.ID == id {
			return true
		}
	}
	return false
}

// downloadPatience bounds how long a failed create_stemcell by WebDAV waits
// for CloudStack to let go of a download it stopped serving.
const downloadPatience = 30 * time.Second

// uploadSettlePatience covers one poll of CloudStack's upload monitor
// (upload.monitoring.interval, 60 s by default), which turns an upload the
// SSVM refused into UploadError and one it took into Ready
// (ImageStoreUploadMonitorImpl handleTemplateStatusResponse), after which
// the template or ISO may be deleted: create_stemcell's and create_vm's
// cleanups wait for it. A variable only for tests.
var uploadSettlePatience = 90 * time.Second

func (p publisher) log(format string, args ...any) {
	p.stemcells.logger.Info("stemcell", format, args...)
}
