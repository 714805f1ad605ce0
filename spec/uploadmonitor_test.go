package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// TestStemcellWithARealisticUploadMonitor publishes through both paths
// against a simulator whose upload monitor polls every 3 s: an uploaded
// template stays NotUploaded until the poll, which the CPI waits out.
func TestStemcellWithARealisticUploadMonitor(t *testing.T) {
	const interval = 3 * time.Second
	for _, publish := range []string{"upload", "webdav"} {
		t.Run(publish, func(t *testing.T) {
			e := newEnv(t, func(cfg map[string]any) {
				if publish == "webdav" {
					webdavConfig(cfg)
				}
			}, "-upload-monitoring-interval", interval.String())
			var cid string
			r := e.call("create_stemcell", writeImage(t, bzippedVHD(t)), stemcellMF("cloudstack", "xen", "vhdx")).ok(t)
			r.decode(t, &cid)
			if tpls := e.ourTemplates(); len(tpls) != 1 || tpls[0].Id != cid || !tpls[0].Isready {
				t.Fatalf("after create_stemcell: %+v", tpls)
			}
			if publish == "upload" && !strings.Contains(r.Stderr, ": NotUploaded") {
				t.Errorf("the CPI should have reported the template NotUploaded while it waited:\n%s", r.Stderr)
			}
			e.call("delete_stemcell", cid).ok(t)
			e.assertNoTemplatesLeft()
		})
	}
}

// TestStemcellUploadThatNeverArrives: the bytes never reach the SSVM, so
// the template stays NotUploaded and CloudStack refuses to delete it until
// its upload monitor abandons it after upload.operation.timeout; the CPI
// waits for that, deletes it and says so.
func TestStemcellUploadThatNeverArrives(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) {
		section(cfg, "stemcell")["timeout"] = "2s"
	}, "-upload-operation-timeout", "4s")
	if err := e.sim.Admin.AddFault(simulator.Fault{Command: "upload", Delay: time.Minute}); err != nil {
		t.Fatal(err)
	}
	r := e.call("create_stemcell", writeImage(t, bzippedVHD(t)), stemcellMF("cloudstack", "xen", "vhdx"))
	if r.Error == nil || !strings.Contains(r.Error.Message, "deleted once CloudStack let go of its pending transfer") {
		t.Fatalf("want the template deleted after CloudStack abandoned it, got %s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "still transferring") {
		t.Errorf("the CPI should have logged CloudStack's refusal while the upload was pending:\n%s", r.Stderr)
	}
	e.assertNoTemplatesLeft()
}
