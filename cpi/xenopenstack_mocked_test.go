package cpi_test

import (
	"io"
	"mime/multipart"
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
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
)

// vhdSSVM is a secondary storage VM's upload endpoint that keeps the name
// and the first bytes of the file it is sent.
func vhdSSVM(t *testing.T, name *string, head *[]byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mr, err := r.MultipartReader()
		var part *multipart.Part
		if err == nil {
			part, err = mr.NextPart()
		}
		if err != nil {
			t.Errorf("upload: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		*name = part.FileName()
		*head = make([]byte, 8)
		_, _ = io.ReadFull(part, *head)
		_, _ = io.Copy(io.Discard, part)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// bosh.io's OpenStack stemcell for zones that run XenServer alone becomes
// a XenServer VHD template (its QCOW2 converted on the way) of os_type,
// HVM, marked as needing a config drive; the temporary files go.
func TestCreateStemcellOpenStackOnXenServerIsAConvertedVHD(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	c, cloud := mockedCPIIn(t, callContext(3), func(cfg *config.Config) {
		cfg.Stemcell.Timeout = config.Duration(time.Minute)
		cfg.Stemcell.OSType = "Other Linux (64-bit)"
		cfg.Stemcell.ConfigDriveOSType = "Ubuntu 22.04 LTS"
	})
	var name string
	var head []byte
	srv := vhdSSVM(t, &name, &head)
	cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1", Name: "z1"}}, nil)
	cloud.EXPECT().ZoneHypervisors("zone-1").Return([]cloudstack.Hypervisor{hypervisor.XenServer}, nil)
	cloud.EXPECT().FindOSType("Other Linux (64-bit)").Return("os-other", nil)
	cloud.EXPECT().OwnTemplates("").Return(nil, nil)
	cloud.EXPECT().GetUploadParams(gomock.Any()).DoAndReturn(func(s cloudstack.TemplateSpec) (*cloudstack.UploadParams, error) {
		m, ok := cloudstack.Template{DisplayText: s.DisplayText}.Mark()
		if !ok || !m.ConfigDrive || s.Format != "VHD" || s.Hypervisor != "XenServer" || s.OSTypeID != "os-other" || !s.RequiresHVM {
			t.Errorf("template spec %+v", s)
		}
		return &cloudstack.UploadParams{TemplateID: "tpl-1", PostURL: srv.URL, Signature: "sig"}, nil
	})
	cloud.EXPECT().UploadClient().Return(srv.Client())
	cloud.EXPECT().WaitTemplate("tpl-1", []string{"zone-1"}, gomock.Any(), gomock.Any()).Return(nil)
	cloud.EXPECT().SetTemplateDisplayText("tpl-1", gomock.Any()).Return(nil)
	disk := make([]byte, 3<<20)
	copy(disk[1<<20:], "bosh root disk")
	image := filepath.Join(t.TempDir(), "image")
	if err := os.WriteFile(image, testimages.OpenStackTgz(testimages.QCOW2Of(disk)), 0o600); err != nil {
		t.Fatal(err)
	}
	cid, err := c.CreateStemcell(image, kvmStemcell(`["z1"]`))
	if err != nil || cid.AsString() != "configdrive-tpl-1" {
		t.Fatalf("create_stemcell: %v %v", cid, err)
	}
	if !strings.HasSuffix(name, ".vhd") || string(head) != "conectix" {
		t.Errorf("uploaded %q beginning %q, want a .vhd", name, head)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("create_stemcell left %v in the temporary directory", left)
	}
}

// The CloudStack-built Xen stemcell is uploaded as it is, with no config
// drive, once its zone is known to run XenServer.
func TestCreateStemcellCloudStackXenIsUnchanged(t *testing.T) {
	c, cloud := mockedCPIIn(t, callContext(3), func(cfg *config.Config) {
		cfg.Stemcell.Timeout = config.Duration(time.Minute)
	})
	var name string
	var head []byte
	srv := vhdSSVM(t, &name, &head)
	cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1", Name: "z1"}}, nil)
	cloud.EXPECT().ZoneHypervisors("zone-1").Return([]cloudstack.Hypervisor{hypervisor.XenServer}, nil)
	cloud.EXPECT().FindOSType("").Return("os-1", nil)
	cloud.EXPECT().OwnTemplates("").Return(nil, nil)
	cloud.EXPECT().GetUploadParams(gomock.Any()).DoAndReturn(func(s cloudstack.TemplateSpec) (*cloudstack.UploadParams, error) {
		if m, ok := (cloudstack.Template{DisplayText: s.DisplayText}).Mark(); !ok || m.ConfigDrive || s.Format != "VHD" {
			t.Errorf("template spec %+v", s)
		}
		return &cloudstack.UploadParams{TemplateID: "tpl-1", PostURL: srv.URL, Signature: "sig"}, nil
	})
	cloud.EXPECT().UploadClient().Return(srv.Client())
	cloud.EXPECT().WaitTemplate("tpl-1", []string{"zone-1"}, gomock.Any(), gomock.Any()).Return(nil)
	cloud.EXPECT().SetTemplateDisplayText("tpl-1", gomock.Any()).Return(nil)
	image := filepath.Join(t.TempDir(), "image")
	bz, err := testimages.Bzip2(testimages.VHD(64 << 20))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(image, bz, 0o600); err != nil {
		t.Fatal(err)
	}
	var props apiv1.CloudPropsImpl
	_ = props.UnmarshalJSON([]byte(`{"name":"bosh-cloudstack-xen","version":"1.5","infrastructure":"cloudstack",` +
		`"hypervisor":"xen","disk_format":"vhdx","zones":["z1"]}`))
	cid, err := c.CreateStemcell(image, props)
	if err != nil || cid.AsString() != "tpl-1" || !strings.HasSuffix(name, ".vhd.bz2") {
		t.Fatalf("create_stemcell: %v %v, uploaded %q", cid, err, name)
	}
}
