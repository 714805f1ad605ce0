package template

import (
	"context"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/transfers"
)

// StartUploadMonitor is ImageStoreUploadMonitorImpl: configure() reads
// upload.monitoring.interval and upload.operation.timeout once, start()
// schedules UploadStatusCheck with a fixed delay of the interval (the first
// check one interval after start). Changing either setting later takes effect
// at the next start, as in CloudStack. Options.UploadMonitorInterval and
// UploadOperationTimeout give them finer than the settings' whole seconds and
// minutes, for tests.
func (s *SSVM) StartUploadMonitor() {
	interval := s.UploadMonitorInterval
	if interval <= 0 {
		interval = time.Duration(s.State.SettingInt(model.SettingUploadInterval)) * time.Second
	}
	timeout := s.UploadOperationTimeout
	if timeout <= 0 {
		timeout = time.Duration(s.State.SettingInt(model.SettingUploadTimeout)) * time.Minute
	}
	if interval <= 0 {
		return // scheduleWithFixedDelay refuses a delay that is not positive: no monitor runs
	}
	s.Xfer.Start("", func(ctx context.Context) {
		for transfers.Pause(ctx, interval) {
			s.checkUploads(timeout)
		}
	})
}

// checkUploads is UploadStatusCheck.runInContext for templates: every image
// store copy of a template in state NotUploaded or UploadInProgress gets the
// SSVM's answer about its upload entity.
func (s *SSVM) checkUploads(timeout time.Duration) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.Closed {
		return
	}
	now := s.Now()
	for _, t := range s.State.Templates {
		if t.Removed != nil || t.State != tsNotUploaded && t.State != tsUploadInProgress {
			continue
		}
		for _, cp := range t.LiveCopies() {
			if handleTemplateStatusResponse(t, cp, now.Sub(cp.Created) > timeout) {
				s.Dirty = true
			}
		}
	}
	s.Persist()
}

// handleTemplateStatusResponse is ImageStoreUploadMonitorImpl's
// handleTemplateStatusResponse for the SSVM's answer (UploadStatusAnswer:
// the entity's status, UNKNOWN when the SSVM has none); timedOut says the
// copy is older than upload.operation.timeout. It reports a change. The
// template state changes follow VirtualMachineTemplate.State's machine.
func handleTemplateStatusResponse(t *model.Template, cp *model.TemplateCopy, timedOut bool) bool {
	switch cp.UploadState {
	case uploadCompleted:
		cp.DownloadState, cp.Percent = model.DlDownloaded, 100
		cp.Size, cp.PhysicalSize = cp.UploadSize, cp.UploadPhysicalSize
		t.State = tsActive // OperationSucceeded
	case uploadInProgress:
		switch {
		case t.State == tsNotUploaded:
			cp.DownloadState, cp.Percent = model.DlInProgress, cp.UploadPercent
			t.State = tsUploadInProgress // UploadRequested
		case timedOut:
			cp.DownloadState = model.DlError
			t.State = tsUploadError // OperationFailed
		default:
			cp.Percent = cp.UploadPercent
		}
	case uploadError:
		// The SSVM's error text goes to the alert, not to the error string.
		cp.DownloadState = model.DlError
		t.State = tsUploadError // OperationFailed
	default: // UNKNOWN
		if t.State != tsNotUploaded || !timedOut {
			return false
		}
		cp.DownloadState = model.DlAbandoned
		t.State = TsUploadAbandoned // OperationTimeout
	}
	return true
}
