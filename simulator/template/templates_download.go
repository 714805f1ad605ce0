package template

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/imagecheck"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/transfers"
)

// withCopy runs fn on a template copy under the state lock, unless the
// simulator closed or the copy went away (deleted template or zone copy); it
// reports whether fn ran. persist saves the state afterwards.
func (s *SSVM) withCopy(templateID, zoneID string, persist bool, fn func(t *model.Template, cp *model.TemplateCopy)) bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.Closed {
		return false
	}
	t, _ := model.ByID(s.State.Templates, templateID)
	if t == nil || t.Removed != nil {
		return false
	}
	cp := t.CopyIn(zoneID)
	if cp == nil {
		return false
	}
	fn(t, cp)
	s.Dirty = true
	if persist {
		s.Persist()
	}
	return true
}

// failCopy records a download or copy error as the SSVM reports it: the copy
// is not ready and its status shows the error text.
func (s *SSVM) failCopy(templateID, zoneID, text string) {
	s.withCopy(templateID, zoneID, true, func(t *model.Template, cp *model.TemplateCopy) {
		cp.DownloadState, cp.ErrorString = model.DlError, errorText(text)
	})
	s.Xfer.RemoveImage(templateID, zoneID)
}

// startDownload queues the secondary storage VM's download of a registered
// template into one zone. The caller holds the state lock.
func (s *SSVM) startDownload(t *model.Template, zoneID string) {
	id, url, format := t.ID, t.URL, t.Format
	s.Xfer.Start(transfers.Key(id, zoneID), func(ctx context.Context) {
		s.download(ctx, id, zoneID, url, format)
	})
}

// downloadClient is the SSVM's HTTP client: it does not follow redirects
// (store.download.follow.redirects defaults to false).
var downloadClient = &http.Client{
	Transport: http.DefaultTransport.(*http.Transport).Clone(),
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// download does what the SSVM does with a registered URL: find the size,
// fetch the bytes reporting progress, check the content, install.
func (s *SSVM) download(ctx context.Context, id, zoneID, url, format string) {
	if !transfers.Pause(ctx, s.TemplateLatency) {
		return
	}
	if text := s.SSVMUnreachable(url); text != "" {
		s.failCopy(id, zoneID, text)
		return
	}
	size, err := remoteSize(ctx, url)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		s.failCopy(id, zoneID, err.Error())
		return
	}
	dst, err := s.Xfer.ImagePath(id, zoneID)
	if err != nil {
		return
	}
	if !s.withCopy(id, zoneID, true, func(t *model.Template, cp *model.TemplateCopy) {
		cp.DownloadState, cp.Percent, cp.ErrorString = model.DlInProgress, 0, nil
	}) {
		return
	}
	if err := s.fetch(ctx, id, zoneID, url, dst, size); err != nil {
		if ctx.Err() == nil {
			s.failCopy(id, zoneID, err.Error())
		} else {
			_ = os.Remove(dst)
		}
		return
	}
	s.install(ctx, id, zoneID, dst, url, format)
}

// install is the SSVM's post-download step: the copy shows "Installing
// Template" while the image is checked, then becomes ready.
func (s *SSVM) install(ctx context.Context, id, zoneID, file, url, format string) {
	if !s.withCopy(id, zoneID, true, func(t *model.Template, cp *model.TemplateCopy) { cp.Percent = 100 }) {
		_ = os.Remove(file)
		return
	}
	if !transfers.Pause(ctx, s.TemplateLatency) {
		return
	}
	uriPath := urlPath(url)
	if found, err := imagecheck.CheckFileType(file, uriPath); err != nil || found != "" {
		text := "Failed to install: Template content is unsupported, or mismatch between selected format and template content. Found  : " + found
		if err != nil {
			text = "Failed to install: " + err.Error()
		}
		s.failCopy(id, zoneID, text)
		return
	}
	info, err := imagecheck.Verify(file, uriPath, format)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		s.failCopy(id, zoneID, "Failed post download script: "+err.Error())
		return
	}
	if !s.withCopy(id, zoneID, true, func(t *model.Template, cp *model.TemplateCopy) {
		cp.DownloadState, cp.Percent, cp.ErrorString = model.DlDownloaded, 100, nil
		cp.Size, cp.PhysicalSize = info.VirtualSize, info.PhysicalSize
	}) {
		_ = os.Remove(file)
	}
}

// remoteSize asks for the image's length with HEAD, like UriUtils.getRemoteSize;
// a server that does not answer HEAD is asked with GET by fetch.
func remoteSize(ctx context.Context, url string) (int64, error) {
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(hctx, http.MethodHead, url, nil)
	if err != nil {
		return 0, fmt.Errorf("Failed to download template: Invalid URL %s", url) //nolint:staticcheck // ST1005: the errorstring answered, capital kept (UriUtils.getRemoteSize's "Invalid URL ")
	}
	resp, err := downloadClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("Failed to download template: Unable to establish connection with URL %s", url) //nolint:staticcheck // ST1005: the errorstring answered, capital kept (UriUtils.getRemoteSize)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength < 0 {
		return -1, nil // fetch decides from the GET answer
	}
	return resp.ContentLength, nil
}

// fetch GETs the image into dst, recording the download percentage.
func (s *SSVM) fetch(ctx context.Context, id, zoneID, url, dst string, size int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := downloadClient.Do(req)
	if err != nil {
		return fmt.Errorf("Failed to download template: Unable to establish connection with URL %s", url) //nolint:staticcheck // ST1005: the errorstring answered, capital kept (UriUtils.getRemoteSize)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusMovedPermanently || resp.StatusCode == http.StatusFound:
		return fmt.Errorf("Failed to download %s due to redirection, response code: %d", url, resp.StatusCode) //nolint:staticcheck // ST1005: HttpTemplateDownloader.checkServerResponse's errorString, capital kept
	case resp.StatusCode != http.StatusOK:
		// HttpTemplateDownloader.checkServerResponse, spaces included
		return fmt.Errorf(" HTTP Server returned %d (expected 200 OK) ", resp.StatusCode)
	}
	if size < 0 {
		size = resp.ContentLength
	}
	if size < 0 {
		return errors.New(" Failed to receive length of download ") // HttpTemplateDownloader.tryAndGetRemoteSize
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	progress := &progressWriter{total: size, report: func(pct int) {
		s.withCopy(id, zoneID, false, func(t *model.Template, cp *model.TemplateCopy) { cp.Percent = pct })
	}}
	n, err := io.CopyBuffer(io.MultiWriter(f, progress), resp.Body, make([]byte, 256<<10))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil && n < size:
		return fmt.Errorf("Failed to download template: Downloaded %d bytes (incomplete download): %w", n, err) //nolint:staticcheck // ST1005: the errorstring answered, capital kept (HttpTemplateDownloader.checkDownloadCompletion)
	case err != nil:
		return fmt.Errorf("Failed to download template: %w", err) //nolint:staticcheck // ST1005: the errorstring answered, capital kept, as above
	case n < size:
		return fmt.Errorf("Failed to download template: Downloaded %d bytes (incomplete download)", n) //nolint:staticcheck // ST1005: the errorstring answered, capital kept (HttpTemplateDownloader.checkDownloadCompletion)
	}
	return nil
}

// progressWriter reports whole percentages of total as bytes pass.
type progressWriter struct {
	total, done int64
	last        int
	report      func(int)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.total > 0 {
		pct := int(100 * p.done / p.total)
		pct = min(pct, 100)
		if pct != p.last {
			p.last = pct
			p.report(pct)
		}
	}
	return len(b), nil
}

// startCopy copies a ready template from one zone to another the way
// copyTemplate does: the destination copy shows "n% Downloaded" while the
// bytes move, "Installing Template", then "Download Complete". done is told
// whether the copy succeeded. The caller holds the state lock.
func (s *SSVM) startCopy(t *model.Template, from *model.TemplateCopy, toZone string, done func(ok bool)) bool {
	id, srcZone, size, physical := t.ID, from.ZoneID, from.Size, from.PhysicalSize
	return s.Xfer.Start(transfers.Key(id, toZone), func(ctx context.Context) {
		ok := s.copyImage(ctx, id, srcZone, toZone, size, physical)
		done(ok)
	})
}

func (s *SSVM) copyImage(ctx context.Context, id, srcZone, dstZone string, size, physical int64) bool {
	fail := func(text string) bool {
		if ctx.Err() == nil {
			s.failCopy(id, dstZone, text)
		}
		return false
	}
	if !transfers.Pause(ctx, s.TemplateLatency) {
		return false
	}
	if !s.withCopy(id, dstZone, true, func(t *model.Template, cp *model.TemplateCopy) {
		cp.DownloadState, cp.Percent, cp.ErrorString = model.DlInProgress, 0, nil
	}) {
		return false
	}
	report := func(pct int) {
		s.withCopy(id, dstZone, false, func(t *model.Template, cp *model.TemplateCopy) { cp.Percent = pct })
	}
	if src := s.Xfer.ExistingImage(id, srcZone); src != "" {
		dst, err := s.Xfer.ImagePath(id, dstZone)
		if err != nil {
			return false
		}
		if err := copyFile(src, dst, report); err != nil {
			_ = os.Remove(dst)
			return fail("Failed to copy template: " + err.Error())
		}
	} else {
		// no bytes on disk (the builtin template, or images of a previous
		// run): the copy only takes time
		for _, pct := range []int{25, 50, 75, 100} {
			if !transfers.Pause(ctx, s.TemplateLatency/4) {
				return false
			}
			report(pct)
		}
	}
	if !s.withCopy(id, dstZone, true, func(t *model.Template, cp *model.TemplateCopy) { cp.Percent = 100 }) {
		s.Xfer.RemoveImage(id, dstZone)
		return false
	}
	if !transfers.Pause(ctx, s.TemplateLatency) {
		return false
	}
	return s.withCopy(id, dstZone, true, func(t *model.Template, cp *model.TemplateCopy) {
		cp.DownloadState, cp.Percent, cp.ErrorString = model.DlDownloaded, 100, nil
		cp.Size, cp.PhysicalSize = size, physical
	})
}

func copyFile(src, dst string, report func(int)) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	progress := &progressWriter{total: st.Size(), report: report}
	_, err = io.CopyBuffer(io.MultiWriter(out, progress), in, make([]byte, 256<<10))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// FailInterruptedTransfers marks downloads a previous run left unfinished
// as failed: their bytes went with that run's image directory. The SSVM's
// upload entities lived in its memory, so after a restart its answer to the
// upload monitor is UNKNOWN for every pending upload
// (ImageStoreUploadMonitorImpl then abandons a NotUploaded template after
// upload.operation.timeout and leaves an UploadInProgress one as it is).
func FailInterruptedTransfers(st *model.State) {
	for _, t := range st.Templates {
		if t.Removed != nil {
			continue
		}
		for _, cp := range t.Copies {
			switch {
			case cp.Removed != nil:
			case cp.UploadState != "":
				cp.UploadState, cp.UploadPercent = "", 0
			case cp.DownloadState == model.DlNotDownloaded || cp.DownloadState == model.DlInProgress:
				cp.DownloadState, cp.ErrorString = model.DlError, errorText("Failed to download template: interrupted by a restart of the simulator")
			}
		}
	}
}
