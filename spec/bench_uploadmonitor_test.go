package spec

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// BenchmarkStemcellUploadMonitor publishes a small stemcell by upload
// against simulators whose upload monitor polls at different intervals
// (upload.monitoring.interval; CloudStack's default is 60 s), and by WebDAV,
// which the monitor does not involve. An uploaded template becomes ready
// only on the monitor's next poll, so create_stemcell by upload takes up to
// one interval longer than the bytes take. BENCH_UPLOAD_INTERVALS (e.g.
// "1s,10s") replaces the default 1s,10s,60s. It prints docs/development/performance.md's table.
// Run with: make bench-upload-monitor
func BenchmarkStemcellUploadMonitor(b *testing.B) {
	intervals := []string{"1s", "10s", "60s"}
	if v := os.Getenv("BENCH_UPLOAD_INTERVALS"); v != "" {
		intervals = strings.Split(v, ",")
	}
	image := writeImage(b, bzippedVHD(b))
	props := stemcellMF("cloudstack", "xen", "vhdx")
	type result struct {
		path, interval string
		took           time.Duration
	}
	var rows []result
	for _, iv := range intervals {
		d, err := time.ParseDuration(iv)
		if err != nil {
			b.Fatalf("BENCH_UPLOAD_INTERVALS: %v", err)
		}
		for _, path := range []string{"upload", "webdav"} {
			edit := func(cfg map[string]any) {
				section(cfg, "stemcell")["timeout"] = (d + 2*time.Minute).String()
				if path == "webdav" {
					webdavConfig(cfg)
				}
			}
			e := newEnv(b, edit, "-upload-monitoring-interval", iv)
			start := time.Now()
			e.call("create_stemcell", image, props).ok(b)
			rows = append(rows, result{path, iv, time.Since(start)})
		}
	}
	fmt.Printf("\ndocs/development/performance.md's upload monitor table:\n\n| interval | create_stemcell, upload | create_stemcell, webdav |\n|---|---|---|\n")
	took := map[string]time.Duration{}
	for _, r := range rows {
		took[r.path+" "+r.interval] = r.took
		if r.path == "upload" {
			b.ReportMetric(r.took.Seconds(), "upload-s-at-"+r.interval)
		}
	}
	for _, iv := range intervals {
		d, _ := time.ParseDuration(iv)
		fmt.Printf("| %g s | %.2f s | %.2f s |\n", d.Seconds(), took["upload "+iv].Seconds(), took["webdav "+iv].Seconds())
	}
}
