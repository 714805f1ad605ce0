package template_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

func deleteTemplateErr(s *simtesting.Sim, id string) error {
	cs := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false)
	_, err := cs.Template.DeleteTemplate(cs.Template.NewDeleteTemplateParams(id))
	return err
}

const uploadPending = "The template is either getting uploaded or it may be initiated shortly, please wait for it to be completed"

// TestUploadBecomesReadyOnTheMonitorsPoll: the SSVM accepts the bytes at
// once, the template stays NotUploaded until the management server polls.
func TestUploadBecomesReadyOnTheMonitorsPoll(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{UploadMonitorInterval: 400 * time.Millisecond})
	up := simtesting.GetUploadParams(t, s, "polled", "VHD")
	vhd := simtesting.PaddedVHD(1<<30, 64<<10)
	start := time.Now()
	if status, text := simtesting.PostImage(t, up, simtesting.UploadHeaders(up), "i.vhd", vhd); status != 200 {
		t.Fatalf("upload: %d %q", status, text)
	}
	row := simtesting.ListTemplate(t, s, up.Id)[0]
	if time.Since(start) < 300*time.Millisecond && (row.Isready || row.Status != "NotUploaded" || simtesting.DownloadState(row) != "NOT_UPLOADED") {
		t.Fatalf("before the monitor polled: %+v", row)
	}
	row, seen := simtesting.WaitTemplate(t, s, up.Id, row.Zoneid, func(r *cloudstack.Template) bool { return r.Isready })
	if row.Status != "Download Complete" || simtesting.DownloadState(row) != "DOWNLOADED" || row.Size != 1<<30 || seen[0] != "NotUploaded" {
		t.Fatalf("after the poll: %+v (statuses %q)", row, seen)
	}
}

// TestUploadMonitorFailsAndAbandons: an upload in progress past
// upload.operation.timeout fails (UploadError), one that never started is
// abandoned (UploadAbandoned); deleteTemplate refuses both until then.
func TestUploadMonitorFailsAndAbandons(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{UploadMonitorInterval: 30 * time.Millisecond, UploadOperationTimeout: 1500 * time.Millisecond})
	idle := simtesting.GetUploadParams(t, s, "never-sent", "VHD")
	slow := simtesting.GetUploadParams(t, s, "stalled", "VHD")
	zone := simtesting.ListTemplate(t, s, slow.Id)[0].Zoneid

	vhd := simtesting.PaddedVHD(1<<30, 1<<20)
	pr, pw := io.Pipe()
	t.Cleanup(func() { _ = pw.CloseWithError(io.ErrUnexpectedEOF) }) // before the simulator's cleanup
	body, ctype, length := simtesting.MultipartBody("i.vhd", pr, int64(len(vhd)))
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest(http.MethodPost, slow.PostURL, body)
		req.ContentLength = length
		req.Header.Set("Content-Type", ctype)
		for k, v := range simtesting.UploadHeaders(slow) {
			req.Header[k] = []string{v}
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	if _, err := pw.Write(vhd[:len(vhd)/2]); err != nil {
		t.Fatal(err)
	}
	row, _ := simtesting.WaitTemplate(t, s, slow.Id, zone, func(r *cloudstack.Template) bool { return simtesting.DownloadState(r) == "DOWNLOAD_IN_PROGRESS" })
	if !strings.HasSuffix(row.Status, "% Downloaded") || row.Isready {
		t.Fatalf("upload in progress: %+v", row)
	}
	if err := deleteTemplateErr(s, slow.Id); err == nil || !strings.Contains(err.Error(), uploadPending) {
		t.Fatalf("deleting an upload in progress: %v", err)
	}
	if err := deleteTemplateErr(s, idle.Id); err == nil || !strings.Contains(err.Error(), uploadPending) {
		t.Fatalf("deleting an upload not started: %v", err)
	}
	row, _ = simtesting.WaitTemplate(t, s, slow.Id, zone, func(r *cloudstack.Template) bool { return r.Status == "UploadError" })
	if simtesting.DownloadState(row) != "DOWNLOAD_ERROR" || row.Isready {
		t.Fatalf("timed-out upload: %+v", row)
	}
	// The SSVM may still finish receiving: the monitor no longer looks.
	if _, err := pw.Write(vhd[len(vhd)/2:]); err != nil {
		t.Fatal(err)
	}
	_ = pw.Close()
	<-done
	row, _ = simtesting.WaitTemplate(t, s, idle.Id, zone, func(r *cloudstack.Template) bool { return r.Status == "UploadAbandoned" })
	if simtesting.DownloadState(row) != "ABANDONED" || row.Isready {
		t.Fatalf("abandoned upload: %+v", row)
	}
	for _, id := range []string{slow.Id, idle.Id} {
		if err := deleteTemplateErr(s, id); err != nil {
			t.Fatalf("deleting failed upload %s: %v", id, err)
		}
	}
}

// TestRefusedUploadShowsUploadError: the SSVM's error text goes to the
// uploader and an alert; listTemplates shows the template state.
func TestRefusedUploadShowsUploadError(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	up := simtesting.GetUploadParams(t, s, "refused", "VHD")
	vhd := simtesting.PaddedVHD(1<<30, 64<<10)
	if status, _ := simtesting.PostImage(t, up, simtesting.UploadHeaders(up), "i.vhd", vhd[:len(vhd)-700]); status != 500 {
		t.Fatalf("truncated upload answered %d", status)
	}
	row, _ := simtesting.WaitTemplate(t, s, up.Id, simtesting.ListTemplate(t, s, up.Id)[0].Zoneid, uploadEnded)
	if row.Status != "UploadError" || simtesting.DownloadState(row) != "DOWNLOAD_ERROR" || row.Isready {
		t.Fatalf("refused upload: %+v", row)
	}
	if err := deleteTemplateErr(s, up.Id); err != nil {
		t.Fatalf("deleting a failed upload: %v", err)
	}
}

// uploadEnded: the monitor has reached an end state. Between NotUploaded and
// the end, a refused upload may show its progress ("5% Downloaded").
func uploadEnded(r *cloudstack.Template) bool {
	return r.Isready || r.Status == "UploadError" || r.Status == "UploadAbandoned"
}

// TestUploadSignatureCoversTheForwardedHost: HttpUploadServerHandler checks
// the signature against https:// + x-forwarded-host.
func TestUploadSignatureCoversTheForwardedHost(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	vhd := simtesting.PaddedVHD(1<<30, 64<<10)
	up := simtesting.GetUploadParams(t, s, "proxied", "VHD")
	u, _ := url.Parse(up.PostURL)
	h := simtesting.UploadHeaders(up)
	h["X-Forwarded-Host"] = u.Host
	if status, text := simtesting.PostImageTo(t, up.PostURL, "ssvm-proxy.internal:8443", h, "i.vhd", vhd); status != 200 {
		t.Fatalf("through a proxy that forwards the host: %d %q", status, text)
	}
	up2 := simtesting.GetUploadParams(t, s, "misforwarded", "VHD")
	h2 := simtesting.UploadHeaders(up2)
	h2["X-Forwarded-Host"] = "elsewhere.example:443"
	if status, text := simtesting.PostImage(t, up2, h2, "i.vhd", vhd); status != 400 || text != "signature validation failed." {
		t.Fatalf("a forwarded host the signature does not cover: %d %q", status, text)
	}
}
