package cloudstack

import (
	"fmt"
	"strings"
	"time"
)

// A template is ready when every zone's copy is: these read the copies'
// states as CloudStack reports them and wait for them.

// Template states (VirtualMachineTemplate.State) that are final failures.
// listTemplates has no state field: getTemplateStatus shows the state's
// name as the status when the copy is in no download state and has no
// error string, which is how a failed or abandoned upload shows.
const (
	TemplateUploadError     = "UploadError"
	TemplateUploadAbandoned = "UploadAbandoned"
)

// failedDownloadStates are the download states CloudStack leaves a copy in
// when it gave up: BaseImageStoreDriverImpl fails the registration on
// DOWNLOAD_ERROR, ABANDONED and UNKNOWN answers, and ImageStoreUploadMonitorImpl
// ends failed uploads in DOWNLOAD_ERROR, ABANDONED or UPLOAD_ERROR.
var failedDownloadStates = map[string]bool{"DOWNLOAD_ERROR": true, "ABANDONED": true, "UNKNOWN": true, "UPLOAD_ERROR": true}

// Failed says CloudStack gave up on the template, judged from explicit
// signals only: every image store's download state is a failure, or the
// status names a failed upload state. An error text in the status (the
// SSVM's) comes only with such a download state, so it is the reason, not a
// signal of its own; every other status and state - NotUploaded, Active,
// "", n% Downloaded - is progress.
func (t Template) Failed() bool {
	if t.IsReady {
		return false
	}
	if t.Status == TemplateUploadError || t.Status == TemplateUploadAbandoned {
		return true
	}
	for _, s := range t.DownloadStates {
		if !failedDownloadStates[s] {
			return false
		}
	}
	return len(t.DownloadStates) > 0
}

// Progress is the status for an operator: CloudStack's, or the download
// states while the status is the empty error string a registration starts
// with.
func (t Template) Progress() string {
	if t.Status == "" {
		return strings.Join(t.DownloadStates, ", ")
	}
	return t.Status
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
		states = append(states, fmt.Sprintf("zone %s: %q", t.ZoneID, t.Progress()))
	}
	return fmt.Sprintf("template %s was not ready after %s (%s)", e.ID, e.Waited.Round(time.Second), strings.Join(states, "; "))
}

// TemplateFailedError carries the status text CloudStack gave up with.
type TemplateFailedError struct {
	ID, ZoneID, Status string
	DownloadStates     []string
}

func (e *TemplateFailedError) Error() string {
	status := e.Status
	if status == "" {
		status = "no error text"
	}
	if len(e.DownloadStates) == 0 {
		return fmt.Sprintf("CloudStack could not install template %s in zone %s: %s", e.ID, e.ZoneID, status)
	}
	return fmt.Sprintf("CloudStack could not install template %s in zone %s: %s (download state %s)",
		e.ID, e.ZoneID, status, strings.Join(e.DownloadStates, ", "))
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
			return nil, &TemplateFailedError{ID: id, ZoneID: z, Status: t.Status, DownloadStates: t.DownloadStates}
		case !t.IsReady:
			pending = append(pending, t)
		}
	}
	return pending, nil
}
