package cloudstack_test

import (
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

func TestTemplateFailedReadsCloudStackStatuses(t *testing.T) {
	progress := []string{"", "Processing", "Installing Template", "0% Downloaded", "45% Downloaded", "100% Downloaded",
		"Bypassed Secondary Storage", "DOWNLOAD_IN_PROGRESS", "NOT_DOWNLOADED"}
	for _, s := range progress {
		if (cloudstack.Template{Status: s}).Failed() {
			t.Errorf("%q read as a failure", s)
		}
	}
	failures := []string{"HTTP Server returned 404 (expected 200 OK)", "Failed to download template: Downloaded 5 bytes (incomplete download)",
		"Failed post download script: bzip2 data invalid: unexpected EOF", "DOWNLOAD_ERROR", "ABANDONED", "UPLOAD_ERROR"}
	for _, s := range failures {
		if !(cloudstack.Template{Status: s}).Failed() {
			t.Errorf("%q not read as a failure", s)
		}
	}
	if (cloudstack.Template{Status: "HTTP Server returned 404", IsReady: true}).Failed() {
		t.Error("a ready template is never failed")
	}
}
