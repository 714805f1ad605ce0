package spec

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
)

// BenchmarkStemcellPublish publishes one large image (1 GiB by default;
// BENCH_IMAGE_MIB changes it) through upload and through WebDAV, and
// uploads the same file with curl to the same simulator endpoint as the
// reference. Each row is the whole job: bytes sent, CloudStack's check,
// template ready. It prints docs/development/performance.md's table. Run with: make bench-stemcell
func BenchmarkStemcellPublish(b *testing.B) {
	mib := uint64(1024)
	if v := os.Getenv("BENCH_IMAGE_MIB"); v != "" {
		if _, err := fmt.Sscan(v, &mib); err != nil {
			b.Fatalf("BENCH_IMAGE_MIB=%q: %v", v, err)
		}
	}
	image := filepath.Join(b.TempDir(), "image.vhd")
	if err := testimages.WriteDynamicVHD(image, mib<<20); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(image)
	size := st.Size()
	props := stemcellMF("cloudstack", "xen", "vhdx")

	curl := curlUpload(b, image, size)
	upload := publishOnce(b, image, props, nil)
	webdav := publishOnce(b, image, props, webdavConfig)

	fmt.Printf("\ndocs/development/performance.md's stemcell table: a %.2f GiB image published to the simulator over loopback\n\n", float64(size)/(1<<30))
	fmt.Println("| path | seconds | MB/s | peak RSS of the CPI | vs curl |")
	fmt.Println("|---|---|---|---|---|")
	row := func(name string, d time.Duration, rss int64) {
		mbps := float64(size) / 1e6 / d.Seconds()
		rssText := "–"
		if rss > 0 {
			rssText = fmt.Sprintf("%.1f MiB", float64(rss)/(1<<20))
		}
		fmt.Printf("| %s | %.2f | %.1f | %s | %.2f× |\n", name, d.Seconds(), mbps, rssText, curl.Seconds()/d.Seconds())
	}
	row("curl upload (reference)", curl, 0)
	row("create_stemcell, upload", upload.took, upload.rss)
	row("create_stemcell, webdav", webdav.took, webdav.rss)
	b.ReportMetric(float64(upload.rss)/(1<<20), "upload-peak-RSS-MiB")
	b.ReportMetric(float64(webdav.rss)/(1<<20), "webdav-peak-RSS-MiB")
	b.ReportMetric(curl.Seconds()/upload.took.Seconds(), "upload-vs-curl")
	b.ReportMetric(curl.Seconds()/webdav.took.Seconds(), "webdav-vs-curl")
}

type published struct {
	took time.Duration
	rss  int64
}

func publishOnce(b *testing.B, image string, props map[string]any, edit func(map[string]any)) published {
	e := newEnv(b, edit)
	start := time.Now()
	r := e.call("create_stemcell", image, props).ok(b)
	return published{took: time.Since(start), rss: r.MaxRSS}
}

// curlUpload asks CloudStack for upload parameters, POSTs the file with
// curl exactly as the CPI does, and waits for the template to be ready.
func curlUpload(b *testing.B, image string, size int64) time.Duration {
	e := newEnv(b, nil)
	c := e.client()
	zones, err := c.Zone.ListZones(c.Zone.NewListZonesParams())
	if err != nil {
		b.Fatal(err)
	}
	osTypes, err := c.GuestOS.ListOsTypes(c.GuestOS.NewListOsTypesParams())
	if err != nil {
		b.Fatal(err)
	}
	p := c.Template.NewGetUploadParamsForTemplateParams("curl", "VHD", "XenServer", "curl", zones.Zones[0].Id)
	p.SetOstypeid(osTypes.OsTypes[0].Id)
	start := time.Now()
	up, err := c.Template.GetUploadParamsForTemplate(p)
	if err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command("curl", "-sS", "--fail-with-body", "-o", "/dev/null",
		"-H", "X-signature: "+up.Signature, "-H", "X-metadata: "+up.Metadata, "-H", "X-expires: "+up.Expires,
		"-F", "file=@"+image+";filename=image.vhd", up.PostURL).CombinedOutput()
	if err != nil {
		b.Fatalf("curl: %v\n%s", err, out)
	}
	for {
		resp, err := c.Template.ListTemplates(c.Template.NewListTemplatesParams("self"))
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Templates) == 1 && resp.Templates[0].Isready {
			return time.Since(start)
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("curl's template never became ready: %+v", resp.Templates)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
