package simtesting

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
)

// ZoneID is the seeded zone's (or another named zone's) id.
func ZoneID(t *testing.T, s *Sim, name string) string {
	t.Helper()
	cs := s.Client()
	zones, err := cs.Zone.ListZones(cs.Zone.NewListZonesParams())
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range zones.Zones {
		if z.Name == name {
			return z.Id
		}
	}
	t.Fatalf("no zone %s", name)
	return ""
}

// OsTypeID is the id of the first OS type listOsTypes answers.
func OsTypeID(t *testing.T, s *Sim) string {
	t.Helper()
	cs := s.Client()
	types, err := cs.GuestOS.ListOsTypes(cs.GuestOS.NewListOsTypesParams())
	if err != nil || len(types.OsTypes) == 0 {
		t.Fatalf("listOsTypes: %v", err)
	}
	return types.OsTypes[0].Id
}

// ListTemplate lists one template's rows through cloudstack-go.
func ListTemplate(t *testing.T, s *Sim, id string) []*cloudstack.Template {
	t.Helper()
	cs := s.Client()
	p := cs.Template.NewListTemplatesParams("all")
	p.SetId(id)
	r, err := cs.Template.ListTemplates(p)
	if err != nil {
		t.Fatalf("listTemplates: %v", err)
	}
	return r.Templates
}

// WaitTemplate polls until the template's copy in the zone satisfies done
// and returns the statuses seen on the way.
func WaitTemplate(t *testing.T, s *Sim, id, zone string, done func(*cloudstack.Template) bool) (*cloudstack.Template, []string) {
	t.Helper()
	var seen []string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, row := range ListTemplate(t, s, id) {
			if row.Zoneid != zone {
				continue
			}
			if len(seen) == 0 || seen[len(seen)-1] != row.Status {
				seen = append(seen, row.Status)
			}
			if done(row) {
				return row, seen
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("template %s in zone %s: statuses %q", id, zone, seen)
	return nil, nil
}

// PaddedVHD is a dynamic VHD with filler bytes (pseudo-random, so they do
// not compress away) between its headers and its footer.
func PaddedVHD(virtual uint64, filler int) []byte {
	vhd := testimages.VHD(virtual)
	out := append([]byte{}, vhd[:len(vhd)-512]...)
	x := uint32(2463534242)
	for i := 0; i < filler; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out = append(out, byte(x))
	}
	return append(out, vhd[len(vhd)-512:]...)
}

// GetUploadParams registers a template for upload through cloudstack-go.
func GetUploadParams(t *testing.T, s *Sim, name, format string) *cloudstack.GetUploadParamsForTemplateResponse {
	t.Helper()
	cs := s.Client()
	p := cs.Template.NewGetUploadParamsForTemplateParams(name, format, "XenServer", name, ZoneID(t, s, "Sandbox-simulator"))
	p.SetOstypeid(OsTypeID(t, s))
	r, err := cs.Template.GetUploadParamsForTemplate(p)
	if err != nil {
		t.Fatalf("getUploadParamsForTemplate: %v", err)
	}
	return r
}

// UploadHeaders are the headers CPIs send, in the case they use.
func UploadHeaders(up *cloudstack.GetUploadParamsForTemplateResponse) map[string]string {
	return map[string]string{"X-signature": up.Signature, "X-metadata": up.Metadata, "X-expires": up.Expires}
}

// PostImage POSTs an image to the upload parameters' URL.
func PostImage(t *testing.T, up *cloudstack.GetUploadParamsForTemplateResponse, headers map[string]string, filename string, data []byte) (int, string) {
	t.Helper()
	u, err := url.Parse(up.PostURL)
	if err != nil {
		t.Fatal(err)
	}
	return PostImageTo(t, up.PostURL, u.Host, headers, filename, data)
}

// PostImageTo POSTs data as a multipart upload of filename to target with
// Host set to host; it returns the status and the body.
func PostImageTo(t *testing.T, target, host string, headers map[string]string, filename string, data []byte) (int, string) {
	t.Helper()
	body, ctype, length := MultipartBody(filename, bytes.NewReader(data), int64(len(data)))
	return Send(t, target, host, headers, body, ctype, length)
}

// Send POSTs body to target with Host, Content-Type and Content-Length as
// given; it returns the status and the body.
func Send(t *testing.T, target, host string, headers map[string]string, body io.Reader, ctype string, length int64) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.ContentLength = length
	req.Header.Set("Content-Type", ctype)
	for k, v := range headers {
		req.Header[k] = []string{v} // as sent, not canonicalised
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// MultipartBody wraps content of the given size as a multipart/form-data
// file part without holding it in memory.
func MultipartBody(filename string, content io.Reader, size int64) (io.Reader, string, int64) {
	const boundary = "----cloudstack-simulator-test-boundary"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + filename +
		"\"\r\nContent-Type: application/octet-stream\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	return io.MultiReader(strings.NewReader(head), content, strings.NewReader(tail)),
		"multipart/form-data; boundary=" + boundary, int64(len(head)) + size + int64(len(tail))
}

// DownloadState is a template row's single downloadState, "?" without one.
func DownloadState(row *cloudstack.Template) string {
	if len(row.Downloaddetails) != 1 {
		return "?"
	}
	return row.Downloaddetails[0]["downloadState"]
}

// JSONKind is the JSON type of a decoded value.
func JSONKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// IsoUploadParams calls getUploadParamsForIso as the CPI does: through a
// custom request that unwraps "getuploadparams" (cloudstack-go v2.19.0's
// own call does not; see TestGetUploadParamsForIsoShape).
func (e *VMEnv) IsoUploadParams(t *testing.T, name string, extra map[string]string) (*cloudstack.GetUploadParamsForTemplateResponse, error) {
	t.Helper()
	p := &cloudstack.CustomServiceParams{}
	p.SetParam("name", name)
	p.SetParam("format", "ISO")
	p.SetParam("zoneid", e.Zone)
	for k, v := range extra {
		p.SetParam(k, v)
	}
	var r struct {
		Params cloudstack.GetUploadParamsForTemplateResponse `json:"getuploadparams"`
	}
	err := e.CS.Custom.(*cloudstack.CustomService).CustomRequest("getUploadParamsForIso", p, &r)
	return &r.Params, err
}
