package template_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/template"
)

func TestGetUploadParamsThroughCloudStackGo(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	up := simtesting.GetUploadParams(t, s, "bosh-stemcell-upload", "VHD")
	if up.Id == "" || up.Metadata == "" || up.Signature == "" || up.Expires == "" ||
		up.PostURL != s.HTTP.URL+"/upload/"+up.Id {
		t.Fatalf("upload params = %+v", up)
	}
	expires, err := time.Parse("2006-01-02T15:04:05.000Z07:00", up.Expires)
	if err != nil || time.Until(expires) < 59*time.Minute || time.Until(expires) > 61*time.Minute {
		t.Fatalf("expires %q: %v", up.Expires, err)
	}
	s.Srv.Mu.Lock()
	key := s.Srv.State.UploadKey
	s.Srv.Mu.Unlock()
	mac := hmac.New(sha1.New, []byte(key))
	// CloudStack signs the https URL its SSVM serves; the simulator serves http.
	mac.Write([]byte(up.Metadata + "https://" + strings.TrimPrefix(up.PostURL, "http://") + up.Expires))
	if base64.StdEncoding.EncodeToString(mac.Sum(nil)) != up.Signature {
		t.Fatal("signature is not HMAC-SHA1 over metadata + https postURL + expires")
	}
	rows := simtesting.ListTemplate(t, s, up.Id)
	if len(rows) != 1 || rows[0].Isready || rows[0].Status != "NotUploaded" || rows[0].Format != "VHD" ||
		len(rows[0].Downloaddetails) != 1 || rows[0].Downloaddetails[0]["downloadState"] != "NOT_UPLOADED" {
		t.Fatalf("template waiting for its upload = %+v", rows)
	}

	// CloudStack's own response key.
	r := s.Call(map[string]string{"command": "getUploadParamsForTemplate", "name": "raw", "format": "QCOW2",
		"hypervisor": "XenServer", "zoneid": rows[0].Zoneid, "ostypeid": simtesting.OsTypeID(t, s)})
	inner := r.Inner(t, "postuploadtemplateresponse")["getuploadparams"].(map[string]any)
	for _, k := range []string{"id", "postURL", "metadata", "expires", "signature"} {
		if s, _ := inner[k].(string); s == "" {
			t.Errorf("no %q in %s", k, r.Raw)
		}
	}
	for _, c := range []struct {
		params map[string]string
		CS     int
		text   string
	}{
		{map[string]string{"zoneid": "-1"}, 9999, "Invalid zoneid"},
		{map[string]string{"ostypeid": ""}, 9999, "Missing parameter ostypeid"},
		{map[string]string{"format": "vmdk"}, 4350, "Image format: vmdk is not supported by the CloudStack simulator, which installs QCOW2, RAW, VHD, VHDX, ISO, OVA"},
		{map[string]string{"hypervisor": "Xen"}, 4350, "Hypervisor Type: None is invalid. Supported Hypervisor types are: XenServer, KVM, VMware, Hyperv, VirtualBox, Parralels, BareMetal, Simulator, Ovm, Ovm3, LXC, Custom, External"},
		{map[string]string{"name": ""}, 9999, "Unable to execute API command getuploadparamsfortemplate due to missing parameter name"},
	} {
		params := map[string]string{"command": "getUploadParamsForTemplate", "name": "x", "format": "VHD",
			"hypervisor": "XenServer", "zoneid": rows[0].Zoneid, "ostypeid": simtesting.OsTypeID(t, s)}
		for k, v := range c.params {
			if v == "" {
				delete(params, k)
			} else {
				params[k] = v
			}
		}
		s.Call(params).WantError(t, "postuploadtemplateresponse", 431, c.CS, c.text)
	}
}

func TestUploadHappyPath(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{TemplateLatency: 30 * time.Millisecond})
	up := simtesting.GetUploadParams(t, s, "uploaded", "VHD")
	vhd := simtesting.PaddedVHD(10<<30, 256<<10)
	status, text := simtesting.PostImage(t, up, simtesting.UploadHeaders(up), "bosh-stemcell.vhd.bz2", bzipped(t, vhd))
	if status != http.StatusOK || text != "upload successful." {
		t.Fatalf("upload: %d %q", status, text)
	}
	rows := simtesting.ListTemplate(t, s, up.Id)
	row, _ := simtesting.WaitTemplate(t, s, up.Id, rows[0].Zoneid, func(r *cloudstack.Template) bool { return r.Isready })
	if row.Status != "Download Complete" || row.Size != 10<<30 || row.Physicalsize != int64(len(vhd)) {
		t.Fatalf("uploaded template = %+v", row)
	}
	// The request log has the upload, without its secrets.
	logged := simtesting.AdminGet(t, s, "/sim/requests")
	var entries []kernel.LoggedRequest
	if err := json.Unmarshal([]byte(logged), &entries); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if e.Command == "upload" {
			found = e.Status == http.StatusOK && e.Method == http.MethodPost && e.Params["id"] == up.Id && e.LatencyMS > 0
		}
	}
	if !found || strings.Contains(logged, up.Signature) || strings.Contains(logged, up.Metadata) {
		t.Fatalf("request log: %s", logged)
	}
	// The one time URL is used up.
	status, text = simtesting.PostImage(t, up, simtesting.UploadHeaders(up), "bosh-stemcell.vhd.bz2", bzipped(t, vhd))
	if status != 400 || text != "The one time post url is already used and the upload is in COMPLETED state." {
		t.Fatalf("second upload: %d %q", status, text)
	}
	// A ready uploaded template can be deleted.
	cs := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false)
	if _, err := cs.Template.DeleteTemplate(cs.Template.NewDeleteTemplateParams(up.Id)); err != nil {
		t.Fatal(err)
	}
}

func TestUploadRefusals(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	vhd := testimages.VHD(1 << 30)
	vhdBz2 := bzipped(t, simtesting.PaddedVHD(1<<30, 1<<20))
	qcow := testimages.QCOW2(1 << 30)
	zone := simtesting.ZoneID(t, s, "Sandbox-simulator")

	expiredParams := func(up *cloudstack.GetUploadParamsForTemplateResponse) map[string]string {
		past := time.Now().UTC().Add(-time.Minute).Format("2006-01-02T15:04:05.000Z07:00")
		s.Srv.Mu.Lock()
		sig := template.UploadSignature(s.Srv.State, up.Metadata+"https://"+strings.TrimPrefix(up.PostURL, "http://")+past)
		s.Srv.Mu.Unlock()
		return map[string]string{"X-signature": sig, "X-metadata": up.Metadata, "X-expires": past}
	}
	cases := []struct {
		name     string
		format   string
		headers  func(up *cloudstack.GetUploadParamsForTemplateResponse) map[string]string
		filename string
		data     []byte
		Status   int
		text     string
		poisoned bool // the template's upload failed for good
	}{
		{"missing headers", "VHD", func(up *cloudstack.GetUploadParamsForTemplateResponse) map[string]string {
			return map[string]string{"X-signature": up.Signature, "X-expires": up.Expires}
		}, "i.vhd", vhd, 400, "signature, metadata and expires are compulsory fields.", true},
		{"bad signature", "VHD", func(up *cloudstack.GetUploadParamsForTemplateResponse) map[string]string {
			h := simtesting.UploadHeaders(up)
			h["X-signature"] = base64.StdEncoding.EncodeToString(make([]byte, 20))
			return h
		}, "i.vhd", vhd, 400, "signature validation failed.", true},
		{"tampered metadata", "VHD", func(up *cloudstack.GetUploadParamsForTemplateResponse) map[string]string {
			h := simtesting.UploadHeaders(up)
			h["X-metadata"] = base64.StdEncoding.EncodeToString([]byte(`{"entityUUID":"x"}`))
			return h
		}, "i.vhd", vhd, 400, "signature validation failed.", true},
		{"expired", "VHD", expiredParams, "i.vhd", vhd, 400, "request not valid anymore.", true},
		{"content does not match the name", "VHD", simtesting.UploadHeaders, "i.qcow2", vhd, 400,
			"File type mismatch between the sent file and the actual content. Received: Microsoft Disk Image, Virtual Server or Virtual PC", true},
		{"compressed content in a plain name", "VHD", simtesting.UploadHeaders, "i.vhd", vhdBz2, 400,
			"File type mismatch between the sent file and the actual content. Received: bzip2 compressed data, block size = 100k", true},
		{"name and content disagree with the format", "VHD", simtesting.UploadHeaders, "i.qcow2", qcow, 500,
			"File type mismatch between uploaded file and selected format. Selected file format: VHD. Received: QEMU QCOW2 Image (v3), 1073741824 bytes", true},
		{"truncated bzip2", "VHD", simtesting.UploadHeaders, "i.vhd.bz2", vhdBz2[:len(vhdBz2)/2], 500,
			"bzip2 data invalid: unexpected EOF", true},
		{"truncated VHD", "VHD", simtesting.UploadHeaders, "i.vhd", vhd[:len(vhd)-700], 500,
			"i.vhd is not a valid VHD: no footer (\"conectix\" cookie) in its last 512 bytes, the image is truncated", true},
		{"OVA without descriptor first", "OVA", simtesting.UploadHeaders, "i.ova",
			testimages.Tar(testimages.Entry{Name: "disk.vmdk", Data: []byte("KDMV")}), 500,
			"i.ova is not a valid OVA: its first file is disk.vmdk, not the .ovf descriptor", true},
	}
	for _, c := range cases {
		up := simtesting.GetUploadParams(t, s, "refused", c.format)
		status, text := simtesting.PostImage(t, up, c.headers(up), c.filename, c.data)
		if status != c.Status || text != c.text {
			t.Errorf("%s: %d %q, want %d %q", c.name, status, text, c.Status, c.text)
			continue
		}
		row := simtesting.ListTemplate(t, s, up.Id)[0]
		if row.Isready || row.Zoneid != zone {
			t.Errorf("%s: template %+v", c.name, row)
		}
		if c.poisoned {
			// A failed attempt uses the one time URL up, as on the SSVM.
			status, text = simtesting.PostImage(t, up, simtesting.UploadHeaders(up), "i.vhd", vhd)
			if status != 400 || text != "The one time post url is already used and the upload is in ERROR state." {
				t.Errorf("%s, then a good upload: %d %q", c.name, status, text)
			}
		}
	}

	up := simtesting.GetUploadParams(t, s, "other", "VHD")
	target := up.PostURL
	get, err := http.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(get.Body)
	get.Body.Close()
	if get.StatusCode != http.StatusBadRequest || string(b) != "only post requests are allowed" {
		t.Fatalf("GET: %d %q", get.StatusCode, b)
	}
	body, ctype, _ := simtesting.MultipartBody("i.vhd", bytes.NewReader(vhd), int64(len(vhd)))
	if status, text := simtesting.Send(t, target, strings.TrimPrefix(s.HTTP.URL, "http://"), simtesting.UploadHeaders(up), body, ctype, -1); status != 400 ||
		text != "content length is not set in the request or has invalid value." {
		t.Fatalf("chunked upload: %d %q", status, text)
	}
	// That refusal did not use the URL up.
	if status, text := simtesting.PostImage(t, up, simtesting.UploadHeaders(up), "i.vhd", vhd); status != 200 {
		t.Fatalf("upload after a chunked attempt: %d %q", status, text)
	}
	form := strings.NewReader("--b\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n--b--\r\n")
	up2 := simtesting.GetUploadParams(t, s, "no-file", "VHD")
	if status, text := simtesting.Send(t, up2.PostURL, strings.TrimPrefix(s.HTTP.URL, "http://"), simtesting.UploadHeaders(up2), form,
		"multipart/form-data; boundary=b", int64(form.Len())); status != 422 || text != "received entity is not a file" {
		t.Fatalf("form without a file: %d %q", status, text)
	}
}

// TestUploadStreamsToDisk uploads a generated ~200 MiB raw image and checks
// the simulator's heap does not grow with it.
func TestUploadStreamsToDisk(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	up := simtesting.GetUploadParams(t, s, "big", "RAW")
	const size = 200 << 20
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()
	body, ctype, length := simtesting.MultipartBody("disk.raw", &patternReader{left: size}, size)
	u, _ := url.Parse(up.PostURL)
	status, text := simtesting.Send(t, up.PostURL, u.Host, simtesting.UploadHeaders(up), body, ctype, length)
	close(stop)
	wg.Wait()
	if status != 200 {
		t.Fatalf("upload: %d %q", status, text)
	}
	growth := int64(peak.Load()) - int64(before.HeapInuse)
	t.Logf("heap in use grew by %d KiB during a %d MiB upload", growth>>10, size>>20)
	if growth > 32<<20 {
		t.Fatalf("heap grew by %d MiB while uploading %d MiB", growth>>20, size>>20)
	}
	rows := simtesting.ListTemplate(t, s, up.Id)
	if row, _ := simtesting.WaitTemplate(t, s, up.Id, rows[0].Zoneid, func(r *cloudstack.Template) bool { return r.Isready }); row.Size != size {
		t.Fatalf("size = %d", row.Size)
	}
}

// patternReader yields left bytes of a repeating pattern without allocating.
type patternReader struct{ left int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	n := min(int64(len(b)), p.left)
	for i := range b[:n] {
		b[i] = byte(i * 7)
	}
	p.left -= n
	return int(n), nil
}
