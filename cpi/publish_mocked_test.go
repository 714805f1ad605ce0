package cpi_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// qcow2Image writes the smallest image stemcell.Prepare takes as QCOW2:
// the magic, version 3 and an empty L1 table, padded to a header.
func qcow2Image(t *testing.T) string {
	t.Helper()
	head := make([]byte, 512)
	copy(head, "QFI\xfb")
	binary.BigEndian.PutUint32(head[4:8], 3)
	path := filepath.Join(t.TempDir(), "root.img")
	if err := os.WriteFile(path, head, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// stemcellCPI is createVMCPI with a stemcell timeout, as config's
// defaults give one, and stemcell.config_drive false: the OpenStack KVM
// stemcells these tests publish become plain templates, whose VMs read
// user data (a site's metadata proxy serves it where their agent looks).
func stemcellCPI(t *testing.T) (apiv1.CPI, *cloudstackmock.MockAPI) {
	t.Helper()
	no := false
	return mockedCPIIn(t, callContext(2), func(cfg *config.Config) {
		cfg.Stemcell.Timeout = config.Duration(time.Minute)
		cfg.Stemcell.ConfigDrive = &no
	})
}

func kvmStemcell(zones string) apiv1.CloudPropsImpl {
	var p apiv1.CloudPropsImpl
	_ = p.UnmarshalJSON([]byte(`{"name":"bosh-kvm","version":"1.5","infrastructure":"openstack","hypervisor":"kvm",` +
		`"disk_format":"qcow2","zones":` + zones + `}`))
	return p
}

// ssvm is a secondary storage VM's upload endpoint on loopback, answering
// every POST with status.
func ssvm(t *testing.T, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("X-signature") != "sig" {
			t.Errorf("upload %s with signature %q", r.Method, r.Header.Get("X-signature"))
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// expectUploadStart is create_stemcell by upload up to the template's
// creation: zones, their hypervisors (KVM: the OpenStack stemcell goes
// there) and the OS type are resolved, leftovers swept, and the template
// created marked as this director's incomplete stemcell.
func expectUploadStart(t *testing.T, cloud *cloudstackmock.MockAPI, zones []cloudstack.Zone, up *cloudstack.UploadParams,
	upErr error) *cloudstack.TemplateSpec {
	t.Helper()
	var refs []string
	for _, z := range zones {
		refs = append(refs, z.Name)
	}
	spec := &cloudstack.TemplateSpec{}
	cloud.EXPECT().FindZones(refs).Return(zones, nil)
	for _, z := range zones {
		cloud.EXPECT().ZoneHypervisors(z.ID).Return([]cloudstack.Hypervisor{hypervisor.KVM}, nil)
	}
	cloud.EXPECT().FindOSType("").Return("os-1", nil)
	cloud.EXPECT().OwnTemplates("").Return(nil, nil)
	cloud.EXPECT().GetUploadParams(gomock.Any()).DoAndReturn(func(s cloudstack.TemplateSpec) (*cloudstack.UploadParams, error) {
		*spec = s
		mark, ok := cloudstack.Template{DisplayText: s.DisplayText}.Mark()
		if !ok || !mark.Incomplete || mark.ConfigDrive || mark.Director != "dir-1" || s.Format != "QCOW2" || s.Hypervisor != "KVM" ||
			s.OSTypeID != "os-1" || !strings.HasPrefix(s.Name, "bosh-kvm-1.5-") {
			t.Errorf("template spec %+v", s)
		}
		return up, upErr
	})
	return spec
}

// create_stemcell uploads the image to the secondary storage VM, waits for
// the template in the first zone, copies it to the others, and only then
// takes the incomplete mark off.
func TestCreateStemcellUploadsThenCompletes(t *testing.T) {
	c, cloud := stemcellCPI(t)
	srv := ssvm(t, http.StatusOK)
	zones := []cloudstack.Zone{{ID: "zone-1", Name: "z1"}, {ID: "zone-2", Name: "z2"}}
	up := &cloudstack.UploadParams{TemplateID: "tpl-1", PostURL: srv.URL, Signature: "sig"}
	expectUploadStart(t, cloud, zones, up, nil)
	cloud.EXPECT().UploadClient().Return(srv.Client())
	gomock.InOrder(
		cloud.EXPECT().WaitTemplate("tpl-1", []string{"zone-1"}, gomock.Any(), gomock.Any()).Return(nil),
		cloud.EXPECT().CopyTemplate("tpl-1", "zone-1", []string{"zone-2"}).Return(nil),
		cloud.EXPECT().WaitTemplate("tpl-1", []string{"zone-1", "zone-2"}, gomock.Any(), gomock.Any()).Return(nil),
		cloud.EXPECT().SetTemplateDisplayText("tpl-1", gomock.Any()).DoAndReturn(func(_, text string) error {
			if mark, ok := (cloudstack.Template{DisplayText: text}).Mark(); !ok || mark.Incomplete || mark.Director != "dir-1" {
				t.Errorf("completed with display text %q", text)
			}
			return nil
		}),
	)
	cid, err := c.CreateStemcell(qcow2Image(t), kvmStemcell(`["z1","z2"]`))
	if err != nil || cid.AsString() != "tpl-1" {
		t.Fatalf("create_stemcell: %v %v", cid, err)
	}
}

// A failed upload deletes the template it created, and says so.
func TestCreateStemcellDeletesTheTemplateOfAFailedUpload(t *testing.T) {
	c, cloud := stemcellCPI(t)
	srv := ssvm(t, http.StatusForbidden)
	zones := []cloudstack.Zone{{ID: "zone-1", Name: "z1"}}
	expectUploadStart(t, cloud, zones, &cloudstack.UploadParams{TemplateID: "tpl-1", PostURL: srv.URL, Signature: "sig"}, nil)
	cloud.EXPECT().UploadClient().Return(srv.Client())
	cloud.EXPECT().DeleteTemplate("tpl-1", false).Return(nil)
	_, err := c.CreateStemcell(qcow2Image(t), kvmStemcell(`["z1"]`))
	if got := errorType(t, err); got != "Bosh::Clouds::CloudError" || !strings.Contains(err.Error(), "refused the upload") ||
		!strings.Contains(err.Error(), "(template tpl-1 deleted)") {
		t.Fatalf("got %s %v", got, err)
	}
}

// When the template's creation failed uncertainly, the template of the
// attempt's own name is looked for and deleted; a template CloudStack
// will not delete stays marked, and the error says a later call removes
// it.
func TestCreateStemcellSettlesAnUncertainCreate(t *testing.T) {
	lost := &cloudstack.UnreachableError{Endpoint: "cs", Err: errors.New("connection reset")}
	for name, tc := range map[string]struct {
		found  bool
		delErr error
		says   string
	}{
		"none made":    {false, nil, "nothing is left"},
		"made":         {true, nil, "(template tpl-1 deleted)"},
		"delete fails": {true, errors.New("refused"), "is left in CloudStack, marked as an incomplete stemcell"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := stemcellCPI(t)
			zones := []cloudstack.Zone{{ID: "zone-1", Name: "z1"}}
			spec := expectUploadStart(t, cloud, zones, nil, lost)
			own := func(name string) ([]cloudstack.Template, error) {
				if name != spec.Name {
					t.Errorf("looked for templates named %q, want %q", name, spec.Name)
				}
				if !tc.found {
					return nil, nil
				}
				return []cloudstack.Template{{ID: "tpl-1", Name: name, ZoneID: "zone-1"}}, nil
			}
			cloud.EXPECT().OwnTemplates(gomock.Any()).DoAndReturn(own)
			if tc.found {
				cloud.EXPECT().DeleteTemplate("tpl-1", false).Return(tc.delErr)
			}
			if tc.delErr != nil {
				cloud.EXPECT().OwnTemplates(gomock.Any()).DoAndReturn(own)
			}
			start := time.Now()
			_, err := c.CreateStemcell(qcow2Image(t), kvmStemcell(`["z1"]`))
			if got := errorType(t, err); got != "Bosh::Clouds::CloudError" || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %s %v, want %q", got, err, tc.says)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
		})
	}
}

// webdavCPI publishes stemcells by serving them over WebDAV from this
// process, on loopback, at publicURL ("" for the bound address); its
// OpenStack KVM stemcells are plain templates, as in stemcellCPI.
func webdavCPI(t *testing.T, publicURL string) (apiv1.CPI, *cloudstackmock.MockAPI) {
	t.Helper()
	no := false
	return mockedCPIIn(t, callContext(2), func(cfg *config.Config) {
		cfg.Stemcell.ConfigDrive = &no
		cfg.Stemcell.Timeout = config.Duration(time.Minute)
		cfg.Stemcell.Publish = config.PublishWebDAV
		cfg.WebDAV.Listen = "127.0.0.1:0"
		cfg.WebDAV.PublicURL = publicURL
	})
}

// By WebDAV, CloudStack is told to download the image this call serves,
// and the template is complete once it is ready.
func TestCreateStemcellByWebDAVServesTheImage(t *testing.T) {
	c, cloud := webdavCPI(t, "")
	image := qcow2Image(t)
	want, err := os.ReadFile(image)
	if err != nil {
		t.Fatal(err)
	}
	cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1", Name: "z1"}}, nil)
	cloud.EXPECT().ZoneHypervisors("zone-1").Return([]cloudstack.Hypervisor{hypervisor.KVM}, nil)
	cloud.EXPECT().FindOSType("").Return("os-1", nil)
	cloud.EXPECT().OwnTemplates("").Return(nil, nil)
	cloud.EXPECT().RegisterTemplate(gomock.Any(), gomock.Any()).DoAndReturn(func(_ cloudstack.TemplateSpec, url string) (string, error) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("downloading %s: %v", url, err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
			t.Errorf("GET %s: %d, %d bytes, want the image's %d", url, resp.StatusCode, len(got), len(want))
		}
		return "tpl-1", nil
	})
	cloud.EXPECT().WaitTemplate("tpl-1", []string{"zone-1"}, gomock.Any(), gomock.Any()).Return(nil)
	cloud.EXPECT().SetTemplateDisplayText("tpl-1", gomock.Any()).Return(nil)
	cid, err := c.CreateStemcell(image, kvmStemcell(`["z1"]`))
	if err != nil || cid.AsString() != "tpl-1" {
		t.Fatalf("create_stemcell: %v %v", cid, err)
	}
}

// A download that fails from a private address deletes the template, and
// the error says what lets the secondary storage VM reach such a host.
func TestCreateStemcellByWebDAVNamesTheInternalSitesSetting(t *testing.T) {
	c, cloud := webdavCPI(t, "http://10.1.2.3:8080")
	cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1", Name: "z1"}}, nil)
	cloud.EXPECT().ZoneHypervisors("zone-1").Return([]cloudstack.Hypervisor{hypervisor.KVM}, nil)
	cloud.EXPECT().FindOSType("").Return("os-1", nil)
	cloud.EXPECT().OwnTemplates("").Return(nil, nil)
	cloud.EXPECT().RegisterTemplate(gomock.Any(), gomock.Any()).Return("tpl-1", nil)
	cloud.EXPECT().WaitTemplate("tpl-1", []string{"zone-1"}, gomock.Any(), gomock.Any()).Return(
		&cloudstack.TemplateFailedError{ID: "tpl-1", ZoneID: "zone-1", Status: "Download Failed"})
	cloud.EXPECT().DeleteTemplate("tpl-1", false).Return(nil)
	_, err := c.CreateStemcell(qcow2Image(t), kvmStemcell(`["z1"]`))
	if got := errorType(t, err); got != "Bosh::Clouds::CloudError" || !strings.Contains(err.Error(), "secstorage.allowed.internal.sites") ||
		!strings.Contains(err.Error(), "(template tpl-1 deleted)") {
		t.Fatalf("got %s %v", got, err)
	}
}
