package template_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/template"
)

// imageServer serves template images on loopback, as a web server holding
// stemcells would. A path may be gated: the server then sends the first half
// of the file and waits for the gate to close before sending the rest.
type imageServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	gates map[string]chan struct{}
}

func newImageServer(t *testing.T) *imageServer {
	t.Helper()
	is := &imageServer{files: map[string][]byte{}, gates: map[string]chan struct{}{}}
	is.Server = httptest.NewServer(http.HandlerFunc(is.serve))
	t.Cleanup(func() {
		is.mu.Lock()
		for _, g := range is.gates {
			select {
			case <-g:
			default:
				close(g)
			}
		}
		is.mu.Unlock()
		is.Close()
	})
	return is
}

func (is *imageServer) add(path string, data []byte) string {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.files[path] = data
	return is.URL + path
}

func (is *imageServer) gate(path string) chan struct{} {
	is.mu.Lock()
	defer is.mu.Unlock()
	g := make(chan struct{})
	is.gates[path] = g
	return g
}

func (is *imageServer) serve(w http.ResponseWriter, r *http.Request) {
	is.mu.Lock()
	data, ok := is.files[r.URL.Path]
	gate := is.gates[r.URL.Path]
	is.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	if r.Method == http.MethodHead {
		return
	}
	if gate == nil {
		_, _ = w.Write(data)
		return
	}
	_, _ = w.Write(data[:len(data)/2])
	w.(http.Flusher).Flush()
	select {
	case <-gate:
	case <-r.Context().Done():
		return
	}
	_, _ = w.Write(data[len(data)/2:])
}

func bzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	out, err := testimages.Bzip2(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// registerURL registers a template through cloudstack-go and returns its id.
func registerURL(t *testing.T, s *simtesting.Sim, name, format, url string, zones ...string) string {
	t.Helper()
	cs := s.Client()
	p := cs.Template.NewRegisterTemplateParams(name, format, "XenServer", name, url)
	p.SetZoneids(zones)
	p.SetOstypeid(simtesting.OsTypeID(t, s))
	r, err := cs.Template.RegisterTemplate(p)
	if err != nil {
		t.Fatalf("registerTemplate: %v", err)
	}
	if r.Count != len(zones) || len(r.RegisterTemplate) != len(zones) {
		t.Fatalf("registerTemplate answered %+v", r)
	}
	return r.RegisterTemplate[0].Id
}

func settled(row *cloudstack.Template) bool {
	return row.Isready || strings.HasPrefix(row.Status, "Failed") || strings.HasPrefix(strings.TrimSpace(row.Status), "HTTP")
}

func TestRegisterTemplateDownloadsWithProgress(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{AllowLoopbackURLs: true, TemplateLatency: 150 * time.Millisecond})
	images := newImageServer(t)
	img := bzipped(t, simtesting.PaddedVHD(1<<30, 512<<10))
	url := images.add("/stemcells/image.vhd.bz2", img)
	gate := images.gate("/stemcells/image.vhd.bz2")
	zone := simtesting.ZoneID(t, s, "Sandbox-simulator")

	cs := s.Client()
	p := cs.Template.NewRegisterTemplateParams("bosh stemcell", "vhd", "xenserver", "bosh-stemcell", url)
	p.SetZoneid(zone)
	p.SetOstypeid(simtesting.OsTypeID(t, s))
	p.SetChecksum("{SHA-1}abc")
	r, err := cs.Template.RegisterTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	got := r.RegisterTemplate[0]
	if r.Count != 1 || got.Isready || got.Status != "" || got.Format != "VHD" || got.Hypervisor != "XenServer" ||
		got.Zoneid != zone || got.Templatetype != "USER" || got.Ispublic || got.Bits != 64 || !got.Requireshvm ||
		got.Checksum != "abc" || got.Account != "admin" || got.Url != url {
		t.Fatalf("registerTemplate answered %+v", got)
	}
	row, _ := simtesting.WaitTemplate(t, s, got.Id, zone, func(row *cloudstack.Template) bool {
		return strings.HasSuffix(row.Status, "% Downloaded") && row.Status != "0% Downloaded"
	})
	if row.Isready {
		t.Fatalf("ready while downloading: %+v", row)
	}
	close(gate)
	row, seen := simtesting.WaitTemplate(t, s, got.Id, zone, settled)
	if !row.Isready || row.Status != "Download Complete" || row.Size != 1<<30 || row.Physicalsize != int64(len(testimages.VHD(1<<30))+512<<10) {
		t.Fatalf("final row %+v after %q", row, seen)
	}
	if !contains(seen, "Installing Template") {
		t.Fatalf("statuses %q skip Installing Template", seen)
	}
	if d := row.Downloaddetails; len(d) != 1 || d[0]["downloadState"] != "DOWNLOADED" || d[0]["downloadPercent"] != "100" {
		t.Fatalf("downloaddetails = %v", d)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestRegisterTemplateRefusesBadInput(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	zone := simtesting.ZoneID(t, s, "Sandbox-simulator")
	os := simtesting.OsTypeID(t, s)
	base := map[string]string{"command": "registerTemplate", "name": "t", "displaytext": "t", "format": "VHD",
		"hypervisor": "XenServer", "zoneid": zone, "ostypeid": os, "url": "http://images.example.com/t.vhd.bz2"}
	with := func(kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(out, kv[i])
			} else {
				out[kv[i]] = kv[i+1]
			}
		}
		return out
	}
	const name = "registertemplateresponse"
	cases := []struct {
		params map[string]string
		CS     int
		text   string
	}{
		{with("url", "http://127.0.0.1:8080/t.vhd.bz2"), 9999, "Illegal host specified in url"},
		{with("url", "http://localhost/t.vhd"), 9999, "Illegal host specified in url"},
		{with("url", "http://169.254.169.254/t.vhd"), 9999, "Illegal host specified in url"},
		{with("url", "http://0.0.0.0/t.vhd"), 9999, "Illegal host specified in url"},
		{with("url", "http://224.0.0.1/t.vhd"), 9999, "Illegal host specified in url"},
		{with("url", "http://198.51.100.7/t.vhd.xz"), 9999, "Please specify a valid vhd"},
		{with("url", "http://[2001:db8::1]/t.vhd"), 9999, "IPV6 addresses not supported (2001:db8::1)"},
		{with("url", "ftp://198.51.100.7/t.vhd"), 9999, "Unsupported scheme for url: ftp://198.51.100.7/t.vhd"},
		{with("url", "file:///tmp/t.vhd"), 4350, "File:// type urls are currently unsupported"},
		{with("url", "http://198.51.100.7/images/t.qcow2"), 9999, "Please specify a valid URL. URL:/images/t.qcow2 is an invalid for the format vhd"},
		{with("url", "http://198.51.100.7/images/t.txt"), 9999, "Please specify a valid vhd"},
		{with("format", "qcow3"), 9999, "Image format: qcow3 is incorrect. Supported formats are [QCOW2, RAW, VHD, VHDX, ISO, OVA, BAREMETAL, VMDK, VDI, TAR, ZIP, DIR, EXTERNAL]"},
		{with("url", "http://198.51.100.7/t.vhd", "hypervisor", "Xen"), 4350, "Hypervisor Type: Xen is invalid. Supported Hypervisor types are: XenServer, KVM, VMware, Hyperv, VirtualBox, Parralels, BareMetal, Simulator, Ovm, Ovm3, LXC, Custom, External"},
		{with("url", "http://198.51.100.7/t.vhd", "hypervisor", "KVM"), 4350, "Hypervisor KVM is not supported in zone Sandbox-simulator, whose hosts run XenServer"},
		{with("ostypeid", ""), 9999, "Please provide a guest OS type"},
		{with("zoneids", zone), 9999, "Both zoneid and zoneids cannot be specified at the same time"},
		{with("zoneid", ""), 9999, "Either zoneid or zoneids is required. Both cannot be null."},
		{with("zoneid", "", "zoneids", "-1,"+zone), 9999, "Parameter zoneids cannot combine all zones (-1) option with other zones"},
	}
	for _, c := range cases {
		s.Call(c.params).WantError(t, name, 431, c.CS, c.text)
	}
	s.Call(with("url", "")).WantError(t, name, 431, 9999, "Unable to execute API command registertemplate due to missing parameter url")
	long := "http://198.51.100.7/" + strings.Repeat("a", 2048) + ".vhd"
	s.Call(with("url", long)).WantError(t, name, 431, 9999,
		"Unable to execute API command registertemplate due to invalid value. Value greater than max allowed length 2048 for param: url")
	if got := s.Call(map[string]string{"command": "listTemplates", "templatefilter": "self"}).Inner(t, "listtemplatesresponse"); len(got) != 0 {
		t.Fatalf("refused registrations left templates: %v", got)
	}
}

func TestRegisterTemplateDownloadFailures(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{AllowLoopbackURLs: true})
	images := newImageServer(t)
	zone := simtesting.ZoneID(t, s, "Sandbox-simulator")
	vhd := testimages.VHD(64 << 20)
	qcow := testimages.QCOW2(1 << 30)
	vhdBz2 := bzipped(t, simtesting.PaddedVHD(64<<20, 1<<20)) // many bzip2 blocks: the first ones decode

	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/gone.vhd"
	dead.Close()
	redirect := httptest.NewServer(http.RedirectHandler("http://198.51.100.7/x.vhd", http.StatusFound))
	defer redirect.Close()

	cases := []struct {
		format, url, Status string
	}{
		{"VHD", images.URL + "/missing.vhd.bz2", " HTTP Server returned 404 (expected 200 OK) "},
		{"VHD", deadURL, "Failed to download template: Unable to establish connection with URL " + deadURL},
		{"VHD", redirect.URL + "/moved.vhd", "Failed to download " + redirect.URL + "/moved.vhd due to redirection, response code: 302"},
		{"VHD", images.add("/qcow-inside.vhd.bz2", bzipped(t, qcow)),
			"Failed to install: Template content is unsupported, or mismatch between selected format and template content. Found  : " +
				"QEMU QCOW2 Image (v3), 1073741824 bytes (bzip2 compressed data, block size = 100k)"},
		{"VHD", images.add("/truncated.vhd.bz2", vhdBz2[:len(vhdBz2)/2]),
			"Failed post download script: bzip2 data invalid: unexpected EOF"},
		{"VHD", images.add("/truncated.vhd", vhd[:len(vhd)-100]),
			"Failed post download script: truncated.vhd is not a valid VHD: no footer (\"conectix\" cookie) in its last 512 bytes, the image is truncated"},
		{"VHD", images.add("/plain.vhd.bz2", vhd),
			"Failed post download script: plain.vhd.bz2 is not in bzip2 format: its name ends in .bz2"},
		{"QCOW2", images.add("/gz-named-plain.qcow2", testimages.Gzip(qcow)),
			"Failed to install: Template content is unsupported, or mismatch between selected format and template content. Found  : gzip compressed data"},
		{"OVA", images.add("/bad.ova", testimages.Tar(testimages.Entry{Name: "disk.vmdk", Data: make([]byte, 1024)},
			testimages.Entry{Name: "image.ovf", Data: []byte("<Envelope/>")})),
			"Failed post download script: bad.ova is not a valid OVA: its first file is disk.vmdk, not the .ovf descriptor"},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = registerURL(t, s, "broken-"+strconv.Itoa(i), c.format, c.url, zone)
	}
	for i, c := range cases {
		row, _ := simtesting.WaitTemplate(t, s, ids[i], zone, func(r *cloudstack.Template) bool {
			return r.Status != "" && !strings.HasSuffix(r.Status, "Downloaded") && r.Status != "Installing Template"
		})
		if row.Isready || row.Status != c.Status {
			t.Errorf("%s: isready %v, status %q\nwant %q", c.url, row.Isready, row.Status, c.Status)
		}
	}
}

func TestRegisterTemplateFormats(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{AllowLoopbackURLs: true})
	images := newImageServer(t)
	zone := simtesting.ZoneID(t, s, "Sandbox-simulator")
	qcow := testimages.QCOW2(4 << 30)
	ova := testimages.OVA()
	cases := []struct {
		format, path string
		data         []byte
		size         int64
	}{
		{"QCOW2", "/image.qcow2", qcow, 4 << 30},
		{"QCOW2", "/image.qcow2.gz", testimages.Gzip(qcow), 4 << 30},
		{"QCOW2", "/disk-root.img", qcow, 4 << 30},
		{"OVA", "/image.ova", ova, int64(len(ova))},
		{"RAW", "/disk.raw.bz2", bzipped(t, make([]byte, 3<<20)), 3 << 20},
		{"VHD", "/image.vhd.zip", testimages.Zip("image.vhd", testimages.VHD(8<<20)), 8 << 20},
	}
	for _, c := range cases {
		id := registerURL(t, s, "ok"+c.path, c.format, images.add(c.path, c.data), zone)
		row, _ := simtesting.WaitTemplate(t, s, id, zone, settled)
		if !row.Isready || row.Size != c.size {
			t.Errorf("%s: isready %v status %q size %d, want size %d", c.path, row.Isready, row.Status, row.Size, c.size)
		}
	}
}

func TestListTemplatesFiltersAndPaging(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{AllowLoopbackURLs: true, ExtraZones: []string{"Sandbox-simulator-2"}})
	images := newImageServer(t)
	z1, z2 := simtesting.ZoneID(t, s, "Sandbox-simulator"), simtesting.ZoneID(t, s, "Sandbox-simulator-2")
	vhd := images.add("/a.vhd", testimages.VHD(8<<20))
	a := registerURL(t, s, "alpha", "VHD", vhd, z1, z2)
	b := registerURL(t, s, "beta", "VHD", vhd, z1)
	simtesting.WaitTemplate(t, s, a, z2, settled)
	simtesting.WaitTemplate(t, s, b, z1, settled)

	list := func(params map[string]string) (int, []string) {
		params["command"] = "listTemplates"
		body := s.Call(params).Inner(t, "listtemplatesresponse")
		var rows []string
		for _, it := range simtesting.Items(t, body, "template") {
			rows = append(rows, it["name"].(string)+"@"+it["zonename"].(string))
		}
		return int(simtesting.Num(body["count"])), rows
	}
	builtin := template.BuiltinTemplateName + "@"
	check := func(params map[string]string, wantCount int, want ...string) {
		t.Helper()
		count, rows := list(params)
		if count != wantCount || strings.Join(rows, "|") != strings.Join(want, "|") {
			t.Errorf("%v: count %d rows %q, want %d %q", params, count, rows, wantCount, want)
		}
	}
	check(map[string]string{"templatefilter": "all"}, 5, builtin+"Sandbox-simulator", builtin+"Sandbox-simulator-2",
		"alpha@Sandbox-simulator", "alpha@Sandbox-simulator-2", "beta@Sandbox-simulator")
	check(map[string]string{"templatefilter": "self"}, 3, "alpha@Sandbox-simulator", "alpha@Sandbox-simulator-2", "beta@Sandbox-simulator")
	check(map[string]string{"templatefilter": "featured"}, 2, builtin+"Sandbox-simulator", builtin+"Sandbox-simulator-2")
	check(map[string]string{"templatefilter": "community"}, 0)
	check(map[string]string{"templatefilter": "sharedexecutable"}, 0)
	check(map[string]string{"templatefilter": "executable", "zoneid": z2}, 2, builtin+"Sandbox-simulator-2", "alpha@Sandbox-simulator-2")
	check(map[string]string{"templatefilter": "self", "id": a}, 2, "alpha@Sandbox-simulator", "alpha@Sandbox-simulator-2")
	check(map[string]string{"templatefilter": "self", "ids": a + "," + b, "zoneid": z1}, 2, "alpha@Sandbox-simulator", "beta@Sandbox-simulator")
	check(map[string]string{"templatefilter": "all", "name": "alp"}, 2, "alpha@Sandbox-simulator", "alpha@Sandbox-simulator-2")
	check(map[string]string{"templatefilter": "all", "keyword": "CENTOS"}, 2, builtin+"Sandbox-simulator", builtin+"Sandbox-simulator-2")
	check(map[string]string{"templatefilter": "all", "hypervisor": "KVM"}, 0)
	check(map[string]string{"templatefilter": "all", "page": "2", "pagesize": "2"}, 5, "alpha@Sandbox-simulator", "alpha@Sandbox-simulator-2")
	check(map[string]string{"templatefilter": "all", "page": "3", "pagesize": "2"}, 5, "beta@Sandbox-simulator")
	check(map[string]string{"templatefilter": "shared"}, 0) // VirtualMachineTemplate.TemplateFilter has shared and system
	check(map[string]string{"templatefilter": "system"}, 0)

	s.Call(map[string]string{"command": "listTemplates", "templatefilter": "Featured"}).WantError(t, "listtemplatesresponse",
		431, 9999, "No enum constant com.cloud.template.VirtualMachineTemplate.TemplateFilter.Featured")
	s.Call(map[string]string{"command": "listTemplates"}).WantError(t, "listtemplatesresponse",
		431, 9999, "Unable to execute API command listtemplates due to missing parameter templatefilter")
	s.Call(map[string]string{"command": "listTemplates", "templatefilter": "all", "id": model.NewUUID()}).WantError(t, "listtemplatesresponse",
		431, 9999, "") // an unknown template UUID
}

// TestTemplateJSONMatchesRecordedResponse checks that a template row has
// every field of the registerTemplate answer cloudstack-go recorded from a
// real CloudStack simulator, with the same JSON types.
func TestTemplateJSONMatchesRecordedResponse(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(simtesting.ModuleDir(t, "github.com/apache/cloudstack-go/v2"), "test", "testdata", "TemplateService.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]json.RawMessage
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	var recorded struct {
		R struct {
			Template []map[string]any `json:"template"`
		} `json:"registertemplateresponse"`
	}
	if err := json.Unmarshal(file["registerTemplate"], &recorded); err != nil {
		t.Fatal(err)
	}
	s := simtesting.Start(t, simulator.Options{})
	row := simtesting.Items(t, s.Call(map[string]string{"command": "listTemplates", "templatefilter": "featured"}).
		Inner(t, "listtemplatesresponse"), "template")[0]
	var keys []string
	for k := range recorded.R.Template[0] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		want := recorded.R.Template[0][k]
		got, ok := row[k]
		if !ok {
			t.Errorf("missing %q", k)
			continue
		}
		if simtesting.JSONKind(got) != simtesting.JSONKind(want) {
			t.Errorf("%q = %v (%s), recorded %v (%s)", k, got, simtesting.JSONKind(got), want, simtesting.JSONKind(want))
		}
	}
	if row["name"] != template.BuiltinTemplateName || row["templatetype"] != "BUILTIN" || row["hypervisor"] != "XenServer" ||
		row["format"] != "VHD" || row["isready"] != true || row["status"] != "Download Complete" || row["account"] != "system" {
		t.Fatalf("builtin template = %v", row)
	}
}

func TestDeleteTemplate(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{AllowLoopbackURLs: true, ExtraZones: []string{"Sandbox-simulator-2"}})
	images := newImageServer(t)
	z1, z2 := simtesting.ZoneID(t, s, "Sandbox-simulator"), simtesting.ZoneID(t, s, "Sandbox-simulator-2")
	id := registerURL(t, s, "doomed", "VHD", images.add("/d.vhd", testimages.VHD(8<<20)), z1, z2)
	simtesting.WaitTemplate(t, s, id, z1, settled)
	simtesting.WaitTemplate(t, s, id, z2, settled)

	cs := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false)
	p := cs.Template.NewDeleteTemplateParams(id)
	p.SetZoneid(z2)
	if r, err := cs.Template.DeleteTemplate(p); err != nil || !r.Success {
		t.Fatalf("deleteTemplate zone 2: %+v, %v", r, err)
	}
	if rows := simtesting.ListTemplate(t, s, id); len(rows) != 1 || rows[0].Zoneid != z1 {
		t.Fatalf("after deleting the zone 2 copy: %+v", rows)
	}
	if r, err := cs.Template.DeleteTemplate(cs.Template.NewDeleteTemplateParams(id)); err != nil || !r.Success {
		t.Fatalf("deleteTemplate: %+v, %v", r, err)
	}
	if rows := simtesting.ListTemplate(t, s, id); len(rows) != 0 {
		t.Fatalf("deleted template still listed: %+v", rows)
	}
	if s.Srv.Xfer.ExistingImage(id, z1) != "" {
		t.Fatal("the deleted template's image is still on disk")
	}

	// The UUID still resolves: the request is accepted, the job fails.
	start := s.Call(map[string]string{"command": "deleteTemplate", "id": id}).Inner(t, "deletetemplateresponse")
	job := simtesting.WaitJob(t, s, start["jobid"].(string))
	res := job["jobresult"].(map[string]any)
	var internal int64
	s.Srv.Mu.Lock()
	tmpl, _ := model.ByID(s.Srv.State.Templates, id)
	internal = tmpl.InternalID
	s.Srv.Mu.Unlock()
	if simtesting.Num(job["jobstatus"]) != 2 || simtesting.Num(job["jobresultcode"]) != 431 || res["errortext"] != "Unable to find Template with id "+strconv.FormatInt(internal, 10) ||
		job["jobinstancetype"] != "Template" || job["jobinstanceid"] != id {
		t.Fatalf("second delete: %v", job)
	}
}

func TestDeleteTemplateRefusals(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := cloudstack.NewAsyncClient(s.API, simtesting.Key, simtesting.Secret, false)
	up := simtesting.GetUploadParams(t, s, "never-uploaded", "VHD")
	_, err := cs.Template.DeleteTemplate(cs.Template.NewDeleteTemplateParams(up.Id))
	if err == nil || !strings.Contains(err.Error(), "The template is either getting uploaded or it may be initiated shortly, please wait for it to be completed") {
		t.Fatalf("deleting a template waiting for its upload: %v", err)
	}
	// A template in use by a VM.
	builtin := listTemplatesBy(t, s, "featured")[0]
	s.Srv.Mu.Lock()
	s.Srv.State.VMs = append(s.Srv.State.VMs, &model.VirtualMachine{ID: model.NewUUID(), InternalID: 3, InstanceName: "i-2-3-VM",
		TemplateID: builtin.Id, ZoneID: builtin.Zoneid, State: "Running"})
	s.Srv.Mu.Unlock()
	_, err = cs.Template.DeleteTemplate(cs.Template.NewDeleteTemplateParams(builtin.Id))
	if err == nil || !strings.Contains(err.Error(), "because there are [1] VM instances using it.") {
		t.Fatalf("deleting a template in use: %v", err)
	}
	p := cs.Template.NewDeleteTemplateParams(builtin.Id)
	p.SetForced(true)
	if _, err := cs.Template.DeleteTemplate(p); err != nil {
		t.Fatalf("forced delete: %v", err)
	}
}

func listTemplatesBy(t *testing.T, s *simtesting.Sim, filter string) []*cloudstack.Template {
	t.Helper()
	cs := s.Client()
	r, err := cs.Template.ListTemplates(cs.Template.NewListTemplatesParams(filter))
	if err != nil {
		t.Fatal(err)
	}
	return r.Templates
}

func TestCopyTemplateToExtraZone(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{AllowLoopbackURLs: true, ExtraZones: []string{"Sandbox-simulator-2"},
		TemplateLatency: 40 * time.Millisecond})
	images := newImageServer(t)
	z1, z2 := simtesting.ZoneID(t, s, "Sandbox-simulator"), simtesting.ZoneID(t, s, "Sandbox-simulator-2")
	vhd := testimages.VHD(2 << 30)
	id := registerURL(t, s, "copied", "VHD", images.add("/c.vhd.bz2", bzipped(t, vhd)), z1)
	first, _ := simtesting.WaitTemplate(t, s, id, z1, settled)

	cs := s.Client()
	p := cs.Template.NewCopyTemplateParams(id)
	p.SetSourcezoneid(z1)
	p.SetDestzoneid(z2)
	start, err := cs.Template.CopyTemplate(p)
	if err != nil || start.JobID == "" {
		t.Fatalf("copyTemplate: %+v, %v", start, err)
	}
	row, seen := simtesting.WaitTemplate(t, s, id, z2, func(r *cloudstack.Template) bool { return r.Isready })
	if row.Status != "Download Complete" || row.Size != first.Size || row.Physicalsize != first.Physicalsize {
		t.Fatalf("copy = %+v (statuses %q)", row, seen)
	}
	if !contains(seen, "Installing Template") || seen[0] == "Download Complete" {
		t.Fatalf("copy statuses %q", seen)
	}
	job := simtesting.WaitJob(t, s, start.JobID)
	result := job["jobresult"].(map[string]any)["template"].(map[string]any)
	if simtesting.Num(job["jobstatus"]) != 1 || result["id"] != id || result["zoneid"] != z2 || job["jobinstanceid"] != id {
		t.Fatalf("copy job = %v", job)
	}
	rows := simtesting.ListTemplate(t, s, id)
	if len(rows) != 2 || rows[0].Id != rows[1].Id || rows[0].Zoneid == rows[1].Zoneid {
		t.Fatalf("rows after copy = %+v", rows)
	}

	// Copying again is a no-op that succeeds, as in CloudStack.
	again := s.Call(map[string]string{"command": "copyTemplate", "id": id, "destzoneids": z2}).Inner(t, "copytemplateresponse")
	if j := simtesting.WaitJob(t, s, again["jobid"].(string)); simtesting.Num(j["jobstatus"]) != 1 {
		t.Fatalf("copy to a zone that has it: %v", j)
	}
	// The builtin template copies without bytes on disk.
	up := simtesting.GetUploadParams(t, s, "not-ready", "VHD")
	for _, c := range []struct {
		params map[string]string
		code   int
		text   string
	}{
		{map[string]string{"id": up.Id, "destzoneid": z2}, 431, "There is no Template "},
		{map[string]string{"id": id, "sourcezoneid": z2, "destzoneid": z2}, 431, "Please specify different source and destination zones."},
		{map[string]string{"id": id}, 431, "Either destzoneid or destzoneids parameters have to be specified."},
	} {
		c.params["command"] = "copyTemplate"
		j := simtesting.WaitJob(t, s, s.Call(c.params).Inner(t, "copytemplateresponse")["jobid"].(string))
		res := j["jobresult"].(map[string]any)
		if simtesting.Num(j["jobstatus"]) != 2 || int(simtesting.Num(res["errorcode"])) != c.code || !strings.HasPrefix(res["errortext"].(string), c.text) {
			t.Errorf("%v: %v", c.params, j)
		}
	}
}

func TestExtraZonesAndBuiltinTemplate(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{Hypervisor: "KVM", ExtraZones: []string{"Sandbox-simulator-2", "Sandbox-simulator-3"}})
	cs := s.Client()
	zones, err := cs.Zone.ListZones(cs.Zone.NewListZonesParams())
	if err != nil || zones.Count != 3 {
		t.Fatalf("zones = %+v, %v", zones, err)
	}
	for _, z := range zones.Zones {
		hv, err := cs.Hypervisor.ListHypervisors(func() *cloudstack.ListHypervisorsParams {
			p := cs.Hypervisor.NewListHypervisorsParams()
			p.SetZoneid(z.Id)
			return p
		}())
		if err != nil || hv.Count != 1 || hv.Hypervisors[0].Name != "KVM" {
			t.Fatalf("hypervisors of %s = %+v, %v", z.Name, hv, err)
		}
	}
	builtin := listTemplatesBy(t, s, "featured")
	if len(builtin) != 3 || builtin[0].Hypervisor != "KVM" || !builtin[0].CrossZones {
		t.Fatalf("builtin rows = %+v", builtin)
	}
}

func TestTemplatesSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s1 := simtesting.Start(t, simulator.Options{StatePath: path, AllowLoopbackURLs: true})
	images := newImageServer(t)
	zone := simtesting.ZoneID(t, s1, "Sandbox-simulator")
	id := registerURL(t, s1, "kept", "VHD", images.add("/k.vhd", testimages.VHD(8<<20)), zone)
	simtesting.WaitTemplate(t, s1, id, zone, settled)
	up := simtesting.GetUploadParams(t, s1, "upload-later", "VHD")
	dir := filepath.Dir(s1.Srv.Xfer.ExistingImage(id, zone))
	s1.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("image directory %s left behind: %v", dir, err)
	}

	s2 := simtesting.Start(t, simulator.Options{StatePath: path, ExtraZones: []string{"Sandbox-simulator-2"}})
	if rows := simtesting.ListTemplate(t, s2, id); len(rows) != 1 || !rows[0].Isready {
		t.Fatalf("template after restart = %+v", rows)
	}
	if rows := listTemplatesBy(t, s2, "featured"); len(rows) != 2 {
		t.Fatalf("the new zone lacks the builtin template: %+v", rows)
	}
	// Upload parameters handed out before the restart are still valid: the
	// signing key is part of the state.
	target := s2.HTTP.URL + "/upload/" + up.Id
	img := bzipped(t, testimages.VHD(8<<20))
	if status, text := simtesting.PostImageTo(t, target, strings.TrimPrefix(s1.HTTP.URL, "http://"), simtesting.UploadHeaders(up), "image.vhd.bz2", img); status != 200 {
		t.Fatalf("upload after restart: %d %s", status, text)
	}
}

// TestRegisterTemplateCompressionSuffixes: UriUtils.COMMPRESSION_FORMATS are
// zip, bz2 and gz; xz is refused at API time.
func TestRegisterTemplateCompressionSuffixes(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{AllowLoopbackURLs: true})
	images := newImageServer(t)
	zone := simtesting.ZoneID(t, s, "Sandbox-simulator")
	register := func(path string) simtesting.Response {
		return s.Call(map[string]string{"command": "registerTemplate", "name": "c", "displaytext": "c", "format": "VHD",
			"hypervisor": "XenServer", "zoneid": zone, "ostypeid": simtesting.OsTypeID(t, s), "url": images.URL + path})
	}
	for _, ext := range []string{".vhd", ".vhd.zip", ".vhd.bz2", ".vhd.gz", ".VHD.GZ"} {
		if r := register("/t" + ext); r.Status != 200 {
			t.Errorf("%s refused: %s", ext, r.Raw)
		}
	}
	register("/t.vhd.xz").WantError(t, "registertemplateresponse", 431, 9999, "Please specify a valid vhd")
}
