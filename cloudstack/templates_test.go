package cloudstack_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// Every download state (VMTemplateStorageResourceAssoc.Status) and template
// state (VirtualMachineTemplate.State) of CloudStack 4.22.
var (
	downloadStates = []string{"UNKNOWN", "DOWNLOAD_ERROR", "NOT_DOWNLOADED", "DOWNLOAD_IN_PROGRESS", "DOWNLOADED",
		"ABANDONED", "UPLOADED", "NOT_UPLOADED", "UPLOAD_ERROR", "UPLOAD_IN_PROGRESS", "CREATING", "CREATED", "BYPASSED"}
	templateStates = []string{"Active", "Inactive", "NotUploaded", "UploadInProgress", "UploadError", "UploadAbandoned"}
	// error strings template_store_ref can hold: none (NULL), the ""
	// DownloadListener's first answer stores, and SSVM error texts.
	errorStrings = []*string{nil, ptr(""), ptr("HTTP Server returned 404 (expected 200 OK)"),
		ptr("Connection timed out"),
		ptr("Failed post download script: bzip2 data invalid: unexpected EOF"), ptr("Downloaded 10 bytes (incomplete download)")}
)

func ptr(s string) *string { return &s }

// templateStatus is TemplateJoinDaoImpl.getTemplateStatus, to produce the
// status CloudStack shows for each combination.
func templateStatus(download, state string, errText *string, percent int) string {
	switch {
	case download == "DOWNLOADED":
		return "Download Complete"
	case download == "DOWNLOAD_IN_PROGRESS" && percent == 100:
		return "Installing Template"
	case download == "DOWNLOAD_IN_PROGRESS":
		return fmt.Sprintf("%d%% Downloaded", percent)
	case download == "BYPASSED":
		return "Bypassed Secondary Storage"
	case errText == nil:
		return state
	}
	return *errText
}

// TestTemplateFailedOnExplicitSignalsOnly feeds Failed every combination of
// download state, template state, error string and percentage, with isready
// as CloudStack derives it (store state Ready comes with DOWNLOADED).
func TestTemplateFailedOnExplicitSignalsOnly(t *testing.T) {
	failedDownload := map[string]bool{"DOWNLOAD_ERROR": true, "ABANDONED": true, "UNKNOWN": true, "UPLOAD_ERROR": true}
	failedState := map[string]bool{"UploadError": true, "UploadAbandoned": true}
	for _, dl := range downloadStates {
		for _, state := range templateStates {
			for _, errText := range errorStrings {
				for _, pct := range []int{0, 45, 100} {
					status := templateStatus(dl, state, errText, pct)
					tpl := cloudstack.Template{Status: status, IsReady: dl == "DOWNLOADED", DownloadStates: []string{dl}}
					want := !tpl.IsReady && (failedDownload[dl] || failedState[status])
					if got := tpl.Failed(); got != want {
						t.Errorf("download %s, state %s, error %v, %d%%: status %q read as failed=%v", dl, state, errText, pct, status, got)
					}
				}
			}
		}
	}
}

func TestTemplateProgressThatUsedToReadAsFailure(t *testing.T) {
	// What a real CloudStack shows on the way: these are not failures.
	for _, c := range []cloudstack.Template{
		{Status: "NotUploaded", DownloadStates: []string{"NOT_UPLOADED"}},
		{Status: "UploadInProgress", DownloadStates: []string{"NOT_UPLOADED"}},
		{Status: "Active", DownloadStates: []string{"NOT_DOWNLOADED"}},
		{Status: "", DownloadStates: []string{"NOT_DOWNLOADED"}},
		{Status: "57% Downloaded", DownloadStates: []string{"DOWNLOAD_IN_PROGRESS"}},
		{Status: "Processing"},
		{Status: "HTTP Server returned 404 (expected 200 OK)"}, // no download state: no signal
	} {
		if c.Failed() {
			t.Errorf("%+v read as a failure", c)
		}
	}
	// One image store failed while another still downloads: not yet failed.
	mixed := cloudstack.Template{Status: "Failed to install", DownloadStates: []string{"DOWNLOAD_ERROR", "DOWNLOAD_IN_PROGRESS"}}
	if mixed.Failed() {
		t.Error("a copy still downloading on another image store is not failed")
	}
	if got := (cloudstack.Template{DownloadStates: []string{"NOT_DOWNLOADED"}}).Progress(); got != "NOT_DOWNLOADED" {
		t.Errorf("an empty status reads as the download state, got %q", got)
	}
	if !(cloudstack.Template{Status: "UploadAbandoned"}).Failed() {
		t.Error("an abandoned upload is a failure")
	}
}

// templateServer answers listTemplates with the rows of each call in turn
// (the last one repeatedly) and deleteTemplate with refusals first.
func templateServer(t *testing.T, rows [][]map[string]any) *httptest.Server {
	var calls atomic.Int32
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("command") != "listTemplates" {
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		i := min(int(calls.Add(1))-1, len(rows)-1)
		body, _ := json.Marshal(map[string]any{"listtemplatesresponse": map[string]any{"count": len(rows[i]), "template": rows[i]}})
		_, _ = w.Write(body)
	}))
}

func row(status, downloadState string, ready bool) map[string]any {
	return map[string]any{"id": "6f2c0f8e-8c3b-4d0e-9a53-2a3f0e2c9d11", "zoneid": "z1", "status": status, "isready": ready,
		"downloaddetails": []map[string]string{{"datastore": "nfs://store", "downloadPercent": "0", "downloadState": downloadState}}}
}

const tplID = "6f2c0f8e-8c3b-4d0e-9a53-2a3f0e2c9d11"

func TestWaitTemplateReadsDownloadDetails(t *testing.T) {
	srv := templateServer(t, [][]map[string]any{
		{row("NotUploaded", "NOT_UPLOADED", false)},
		{row("45% Downloaded", "DOWNLOAD_IN_PROGRESS", false)},
		{row("Download Complete", "DOWNLOADED", true)},
	})
	defer srv.Close()
	c, _ := newClient(t, srv.URL, nil)
	var seen []string
	err := c.WaitTemplate(tplID, []string{"z1"}, 5*time.Second, func(t cloudstack.Template) { seen = append(seen, t.Status) })
	if err != nil || strings.Join(seen, "|") != "NotUploaded|45% Downloaded|Download Complete" {
		t.Fatalf("WaitTemplate: %v after %q", err, seen)
	}

	srv2 := templateServer(t, [][]map[string]any{
		{row("NotUploaded", "NOT_UPLOADED", false)},
		{row("UploadAbandoned", "ABANDONED", false)},
	})
	defer srv2.Close()
	c2, _ := newClient(t, srv2.URL, nil)
	err = c2.WaitTemplate(tplID, []string{"z1"}, 5*time.Second, nil)
	var failed *cloudstack.TemplateFailedError
	if !errors.As(err, &failed) || failed.Status != "UploadAbandoned" || !strings.Contains(err.Error(), "ABANDONED") {
		t.Fatalf("abandoned upload: %v", err)
	}

	srv3 := templateServer(t, [][]map[string]any{{row("NotUploaded", "NOT_UPLOADED", false)}})
	defer srv3.Close()
	c3, _ := newClient(t, srv3.URL, nil)
	err = c3.WaitTemplate(tplID, []string{"z1"}, 300*time.Millisecond, nil)
	var timeout *cloudstack.TemplateTimeoutError
	if !errors.As(err, &timeout) || !strings.Contains(err.Error(), `"NotUploaded"`) {
		t.Fatalf("a template that stays NotUploaded times out: %v", err)
	}

	// Right after registerTemplate the status is the empty error string
	// DownloadListener's first answer stores: the timeout names the
	// download state instead of "".
	srv4 := templateServer(t, [][]map[string]any{{row("", "NOT_DOWNLOADED", false)}})
	defer srv4.Close()
	c4, _ := newClient(t, srv4.URL, nil)
	err = c4.WaitTemplate(tplID, []string{"z1"}, 300*time.Millisecond, nil)
	if !errors.As(err, &timeout) || !strings.Contains(err.Error(), `zone z1: "NOT_DOWNLOADED"`) {
		t.Fatalf("a template that stays NOT_DOWNLOADED times out naming it: %v", err)
	}
}

func TestTemplateFailedErrorNamesWhatCloudStackShowed(t *testing.T) {
	for e, want := range map[*cloudstack.TemplateFailedError]string{
		{ID: "t1", ZoneID: "z1", Status: "HTTP Server returned 404 (expected 200 OK)", DownloadStates: []string{"DOWNLOAD_ERROR"}}: "CloudStack could not install template t1 in zone z1: HTTP Server returned 404 (expected 200 OK) (download state DOWNLOAD_ERROR)",
		{ID: "t1", ZoneID: "z1", Status: "", DownloadStates: []string{"ABANDONED"}}:                                                "CloudStack could not install template t1 in zone z1: no error text (download state ABANDONED)",
		// A failed upload's state name, with no downloaddetails to show.
		{ID: "t1", ZoneID: "z1", Status: "UploadAbandoned"}: "CloudStack could not install template t1 in zone z1: UploadAbandoned",
	} {
		if got := e.Error(); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
}

func TestInternalSiteHint(t *testing.T) {
	for url, want := range map[string]string{
		"http://10.0.3.7:8443/stemcell.vhd.bz2": "10.0.3.0/24",
		"http://192.168.1.20/s.qcow2":           "192.168.1.0/24",
		"http://198.51.100.7/s.qcow2":           "",
		"http://director.example/s.qcow2":       "",
		"http://127.0.0.1:25250/s.vhd":          "",
	} {
		got := cloudstack.InternalSiteHint(url)
		if want == "" && got != "" || want != "" && !(strings.Contains(got, "secstorage.allowed.internal.sites") && strings.Contains(got, want)) {
			t.Errorf("%s: %q", url, got)
		}
	}
}

func TestIsTemplateBusy(t *testing.T) {
	busy := []string{"The template is either getting uploaded or it may be initiated shortly, please wait for it to be completed",
		"Please specify a template that is not currently being downloaded."}
	for _, text := range busy {
		if !cloudstack.IsTemplateBusy(fmt.Errorf("wrapped: %w", &cloudstack.APIError{Text: text})) {
			t.Errorf("%q is a pending transfer", text)
		}
	}
	if cloudstack.IsTemplateBusy(&cloudstack.APIError{Text: "Unable to find Template with id 7"}) {
		t.Error("other refusals are not")
	}
}
