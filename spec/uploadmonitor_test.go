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
// its upload monitor abandons it after upload.operation.timeout. The CPI
// does not wait for that: it answers at once that the template is left,
// marked, and the next create_stemcell removes it once CloudStack allows.
func TestStemcellUploadThatNeverArrives(t *testing.T) {
	const operationTimeout = 3 * time.Second
	e := newEnv(t, func(cfg map[string]any) {
		section(cfg, "stemcell")["timeout"] = "2s"
	}, "-upload-operation-timeout", operationTimeout.String())
	// Past the CPI's 2 s: the SSVM's receiver sleeps it out, the body unread.
	if err := e.sim.Admin.AddFault(simulator.Fault{Command: "upload", Delay: 8 * time.Second}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := e.call("create_stemcell", writeImage(t, bzippedVHD(t)), stemcellMF("cloudstack", "xen", "vhdx"))
	if r.Error == nil || !strings.Contains(r.Error.Message, "is left in CloudStack, marked as an incomplete stemcell") ||
		!strings.Contains(r.Error.Message, "upload.operation.timeout") {
		t.Fatalf("want the template reported left and marked, got %s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the failed upload blocked create_stemcell for %s", took)
	}
	left := e.ourTemplates()
	if len(left) != 1 || left[0].Status != "NotUploaded" {
		t.Fatalf("want the one NotUploaded template left, got %+v", left)
	}
	if err := e.sim.Admin.ClearFaults(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(operationTimeout + time.Second) // CloudStack abandons it
	var cid string
	r = e.call("create_stemcell", writeImage(t, bzippedVHD(t)), stemcellMF("cloudstack", "xen", "vhdx")).ok(t)
	r.decode(t, &cid)
	if !strings.Contains(r.Stderr, "removed 1 template(s) that interrupted create_stemcell calls left: "+left[0].Id) {
		t.Errorf("the next create_stemcell should have removed and logged the leftover:\n%s", r.Stderr)
	}
	if tpls := e.ourTemplates(); len(tpls) != 1 || tpls[0].Id != cid {
		t.Fatalf("after the next create_stemcell: %+v", tpls)
	}
	e.call("delete_stemcell", cid).ok(t)
	e.assertNoTemplatesLeft()
}
