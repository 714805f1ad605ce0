package cpi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/configdrive"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

const configDriveCID = "configdrive-" + stemcellID

// CloudStack's refusals of deleteIso (TemplateManagerImpl.deleteIso,
// TemplateAdapterBase.prepareDelete) and a vanished entity.
var (
	errISOBusy = &cloudstack.APIError{Command: "deleteIso", ErrorCode: 431,
		Text: "The iso is either getting uploaded or it may be initiated shortly, please wait for it to be completed"}
	errISOGone = &cloudstack.APIError{Command: "deleteIso", ErrorCode: 431,
		Text: "Unable to execute API command deleteiso due to invalid value. Invalid parameter id value=iso-1 due to " +
			"incorrect long value format, or entity does not exist or due to incorrect parameter annotation"}
	errISOInUse = &cloudstack.APIError{Command: "deleteIso", ErrorCode: 431,
		Text: "Unable to delete ISO, as it's used by other instances"}
)

// isoSSVM is the secondary storage VM's upload endpoint: it keeps the file
// part of each POST and answers with status.
type isoSSVM struct {
	mu       sync.Mutex
	filename string
	body     []byte
}

func (s *isoSSVM) serve(t *testing.T, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		part, err := multipart.NewReader(r.Body, params["boundary"]).NextPart()
		if err != nil {
			t.Errorf("upload without a file part: %v", err)
			return
		}
		body, _ := io.ReadAll(part)
		s.mu.Lock()
		s.filename, s.body = part.FileName(), body
		s.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func configDriveCPI(t *testing.T) (apiv1.CPI, *cloudstackmock.MockAPI) {
	t.Helper()
	c, cloud, _ := loggedConfigDriveCPI(t)
	return c, cloud
}

func loggedConfigDriveCPI(t *testing.T) (apiv1.CPI, *cloudstackmock.MockAPI, *bytes.Buffer) {
	t.Helper()
	return loggedCPI(t, callContext(3), func(cfg *config.Config) {
		cfg.Stemcell.ConfigDriveTimeout = config.Duration(time.Minute)
		cfg.Stemcell.ConfigDrivePublish = config.PublishUpload
		cfg.CloudStack.JobTimeout = config.Duration(time.Minute)
		cfg.Agent.MBus = "nats://nats:secret-mbus-password@10.0.0.6:4222"
	})
}

func createConfigDriveVM(c apiv1.CPI, env apiv1.VMEnv) (apiv1.VMCID, error) {
	return c.CreateVM(apiv1.NewAgentID("agent-1"), apiv1.NewStemcellCID(configDriveCID), vmProps(`{"compute_offering":"small"}`),
		nets(manualNet), nil, env)
}

func nets(raw string) apiv1.Networks {
	var n apiv1.Networks
	_ = json.Unmarshal([]byte(raw), &n)
	return n
}

// expectISOCreated is the config drive ISO's creation by upload, checking
// its name and mark; the spec it was created with is recorded.
func expectISOCreated(t *testing.T, cloud *cloudstackmock.MockAPI, srv *httptest.Server, got *cloudstack.ISOSpec) *gomock.Call {
	return cloud.EXPECT().ISOUploadParams(gomock.Any()).DoAndReturn(func(s cloudstack.ISOSpec) (*cloudstack.UploadParams, error) {
		*got = s
		m, ok := cloudstack.ISO{DisplayText: s.DisplayText}.Mark()
		if !ok || !m.Incomplete || m.Director != "dir-1" || m.Agent != "agent-1" || s.ZoneID != "zone-1" ||
			!strings.HasPrefix(s.Name, "vm-") {
			t.Errorf("ISO spec %+v (mark %+v)", s, m)
		}
		return &cloudstack.UploadParams{TemplateID: "iso-1", PostURL: srv.URL, Signature: "sig"}, nil
	})
}

// expectUploadStarts is create_vm of a config drive stemcell up to the
// ISO's upload: resolve, the sweeps of leftover VMs and ISOs, the ISO's
// creation. The calls that must come in order are returned.
func expectUploadStarts(t *testing.T, cloud *cloudstackmock.MockAPI, srv *httptest.Server, iso *cloudstack.ISOSpec) []any {
	expectResolve(cloud)
	cloud.EXPECT().UploadClient().Return(srv.Client())
	return []any{cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil), cloud.EXPECT().OwnISOs("").Return(nil, nil),
		expectISOCreated(t, cloud, srv, iso)}
}

// create_vm of an OpenStack KVM stemcell: the settings go into the ISO,
// never into user data; the ISO is uploaded before the VM is deployed
// stopped, and the VM starts only once the ISO is ready and attached;
// the ISO's and the VM's marks are cleared last.
func TestCreateVMWithConfigDriveDeploysStoppedAttachesThenStarts(t *testing.T) {
	c, cloud, logs := loggedConfigDriveCPI(t)
	ssvm := &isoSSVM{}
	srv := ssvm.serve(t, http.StatusOK)
	d := &deployed{}
	var iso cloudstack.ISOSpec
	gomock.InOrder(append(expectUploadStarts(t, cloud, srv, &iso),
		cloud.EXPECT().DeployVM(taggedWith(map[string]string{marks.DirectorTag: "dir-1",
			marks.AgentTag: "agent-1", marks.ConfigDriveTag: "true"})).DoAndReturn(d.answer("vm-1", nil)),
		cloud.EXPECT().WaitISO("iso-1", time.Minute).Return(nil),
		cloud.EXPECT().AttachISO("iso-1", "vm-1").Return(nil),
		cloud.EXPECT().StartVM("vm-1").Return(nil),
		cloud.EXPECT().SetISODisplayText("iso-1", gomock.Any()).DoAndReturn(func(_, text string) error {
			if m, ok := (cloudstack.ISO{DisplayText: text}).Mark(); !ok || m.Incomplete || m.Agent != "agent-1" {
				t.Errorf("ISO completed with %q", text)
			}
			return nil
		}),
		cloud.EXPECT().SetDisplayName("vm-1", gomock.Any()).Return(nil),
	)...)
	cid, err := createConfigDriveVM(c, apiv1.NewVMEnv(map[string]any{"bosh": map[string]any{
		"authorized_keys": []string{"ssh-ed25519 AAAA test"}}}))
	if err != nil || cid.AsString() != "vm-1" {
		t.Fatalf("create_vm: %v %v", cid, err)
	}
	if !d.spec.Stopped || d.spec.UserData != "" || d.spec.TemplateID != stemcellID || iso.Name != d.spec.Name {
		t.Errorf("deployed %+v with ISO %q", d.spec, iso.Name)
	}
	ssvm.mu.Lock()
	defer ssvm.mu.Unlock()
	if !strings.HasSuffix(ssvm.filename, ".iso") || !strings.Contains(string(ssvm.body), configdrive.Label) ||
		!strings.Contains(string(ssvm.body), `"agent_id":"agent-1"`) ||
		!strings.Contains(string(ssvm.body), `"authorized_keys":["ssh-ed25519 AAAA test"]`) {
		t.Errorf("uploaded %q (%d bytes) is not the config drive of the settings", ssvm.filename, len(ssvm.body))
	}
	if !strings.Contains(string(ssvm.body), "secret-mbus-password") {
		t.Error("the ISO lacks the mbus URL")
	}
	if strings.Contains(logs.String(), "secret-mbus-password") || strings.Contains(logs.String(), "agent_id") {
		t.Errorf("the settings reached the log:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "upload.monitoring.interval") || !strings.Contains(logs.String(), "webdav.listen") {
		t.Errorf("create_vm by upload does not say what it waits for and what makes it faster:\n%s", logs)
	}
}

// An ISO not ready in time: the VM (deployed stopped) goes with its ISO,
// and the director may retry.
func TestCreateVMWithConfigDriveTimeoutRemovesVMAndISO(t *testing.T) {
	c, cloud := configDriveCPI(t)
	srv := (&isoSSVM{}).serve(t, http.StatusOK)
	d := &deployed{}
	var iso cloudstack.ISOSpec
	gomock.InOrder(append(expectUploadStarts(t, cloud, srv, &iso),
		cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer("vm-1", nil)),
		cloud.EXPECT().WaitISO("iso-1", time.Minute).Return(&cloudstack.ISOTimeoutError{ID: "iso-1", Status: "NotUploaded"}),
		cloud.EXPECT().FindVM("vm-1").DoAndReturn(func(string) (*cloudstack.VM, error) {
			vm := d.vm()
			vm.State, vm.Tags = "Stopped", map[string]string{marks.ConfigDriveTag: "true"}
			return vm, nil
		}),
	)...)
	expectRemoval(cloud, nil)
	cloud.EXPECT().OwnISOs(gomock.Any()).DoAndReturn(func(name string) ([]cloudstack.ISO, error) {
		if name != iso.Name {
			t.Errorf("ISOs of VM looked up as %q, want %q", name, iso.Name)
		}
		return []cloudstack.ISO{{ID: "iso-1", Name: name, DisplayText: iso.DisplayText}}, nil
	})
	cloud.EXPECT().DeleteISO("iso-1").Return(nil)
	_, err := createConfigDriveVM(c, apiv1.NewVMEnv(nil))
	if errorType(t, err) != "Bosh::Clouds::VMCreationFailed" || !retryable(t, err) || !strings.Contains(err.Error(), "not ready") {
		t.Fatalf("got %v", err)
	}
}

// Settings the config drive cannot take are refused before anything is
// made.
func TestCreateVMWithConfigDriveRefusesSettingsOverTheBound(t *testing.T) {
	c, cloud := configDriveCPI(t)
	expectResolve(cloud)
	cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
	cloud.EXPECT().OwnISOs("").Return(nil, nil)
	huge := strings.Repeat("x", configdrive.MaxSettingsSize)
	_, err := createConfigDriveVM(c, apiv1.NewVMEnv(map[string]any{"bosh": map[string]any{"blob": huge}}))
	if errorType(t, err) != "Bosh::Clouds::VMCreationFailed" || retryable(t, err) || !strings.Contains(err.Error(), "1 MiB") ||
		strings.Contains(err.Error(), "xxxx") {
		t.Fatalf("got %v", err)
	}
}

// The sweep deletes this director's incomplete ISOs of the same agent and
// of calls that no longer run, and leaves those of running calls, complete
// ones and other directors'.
func TestCreateVMWithConfigDriveSweepsLeftoverISOs(t *testing.T) {
	c, cloud := configDriveCPI(t)
	expectResolve(cloud)
	mark := func(agent string, incomplete bool, until time.Time, director string) string {
		return marks.Template{Director: director, Agent: agent, Incomplete: incomplete, Owner: "1@elsewhere",
			Until: until}.Apply("x")
	}
	later, past := time.Now().Add(time.Hour), time.Now().Add(-time.Minute)
	cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
	cloud.EXPECT().OwnISOs("").Return([]cloudstack.ISO{
		{ID: "same-agent", DisplayText: mark("agent-1", true, later, "dir-1")},
		{ID: "expired", DisplayText: mark("agent-2", true, past, "dir-1")},
		{ID: "running", DisplayText: mark("agent-3", true, later, "dir-1")},
		{ID: "complete", DisplayText: mark("agent-4", false, past, "dir-1")},
		{ID: "other-director", DisplayText: mark("agent-1", true, past, "dir-2")},
		{ID: "operator's", DisplayText: "an ISO"},
	}, nil)
	cloud.EXPECT().DeleteISO("same-agent").Return(nil)
	cloud.EXPECT().DeleteISO("expired").Return(errISOBusy)
	_, err := createConfigDriveVM(c, apiv1.NewVMEnv(map[string]any{"bosh": map[string]any{
		"blob": strings.Repeat("x", configdrive.MaxSettingsSize)}}))
	if err == nil {
		t.Fatal("settings over the bound were taken")
	}
}

// delete_vm detaches the ISO first (CloudStack refuses to delete an ISO
// any unexpunged VM has attached, and to detach from a Destroyed VM), then
// destroys the VM and deletes the ISO; a Destroyed VM is expunged instead,
// which takes it out of deleteIso's in-use check. An ISO deleted by hand,
// or kept by a VM this account may not expunge, does not fail delete_vm.
func TestDeleteVMRemovesTheConfigDrive(t *testing.T) {
	live := func(cloud *cloudstackmock.MockAPI) []any {
		return []any{cloud.EXPECT().DetachISO("vm-1").Return(nil), cloud.EXPECT().VMVolumes("vm-1").Return(nil, nil),
			cloud.EXPECT().DestroyVM("vm-1", true, nil).Return(nil)}
	}
	destroyed := func(cloud *cloudstackmock.MockAPI) []any { return []any{cloud.EXPECT().ExpungeVM("vm-1").Return(nil)} }
	for name, tc := range map[string]struct {
		state     cloudstack.VMState
		end       func(*cloudstackmock.MockAPI) []any
		deleteErr error
	}{
		"running": {"Running", live, nil}, "deleted by hand": {"Running", live, errISOGone},
		"in use": {"Running", live, errISOInUse}, "destroyed": {"Destroyed", destroyed, nil},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := mockedCPI(t, true)
			vm := &cloudstack.VM{ID: "vm-1", Name: "vm-abc", State: tc.state, ISOID: "iso-1",
				Tags: map[string]string{marks.ConfigDriveTag: "true"}}
			cloud.EXPECT().FindVM("vm-1").Return(vm, nil)
			calls := append(tc.end(cloud), cloud.EXPECT().OwnISOs("vm-abc").Return(nil, nil),
				cloud.EXPECT().DeleteISO("iso-1").Return(tc.deleteErr))
			gomock.InOrder(calls...)
			if err := c.DeleteVM(apiv1.NewVMCID("vm-1")); err != nil {
				t.Fatalf("delete_vm: %v", err)
			}
		})
	}
}

// reboot_vm keeps the ISO: a reboot, no ISO call.
func TestRebootVMKeepsTheConfigDrive(t *testing.T) {
	c, cloud := mockedCPI(t, true)
	vm := &cloudstack.VM{ID: "vm-1", State: "Running", ISOID: "iso-1"}
	cloud.EXPECT().FindVM("vm-1").Return(vm, nil)
	cloud.EXPECT().RebootVM(vm).Return(nil)
	if err := c.RebootVM(apiv1.NewVMCID("vm-1")); err != nil {
		t.Fatal(err)
	}
}

func configDriveStemcellCPI(t *testing.T) (apiv1.CPI, *cloudstackmock.MockAPI) {
	t.Helper()
	return mockedCPIIn(t, callContext(3), func(cfg *config.Config) {
		cfg.Stemcell.Timeout = config.Duration(time.Minute)
		cfg.Stemcell.ConfigDriveOSType = "Ubuntu 22.04 LTS"
	})
}

// bosh.io's OpenStack KVM stemcell becomes a KVM QCOW2 template of an
// Ubuntu OS type (virtio disks), marked as needing a config drive, with a
// CID that tells create_vm so without a lookup.
func TestCreateStemcellOpenStackKVMNeedsAConfigDrive(t *testing.T) {
	c, cloud := configDriveStemcellCPI(t)
	srv := ssvm(t, http.StatusOK)
	cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1", Name: "z1"}}, nil)
	cloud.EXPECT().ZoneHypervisors("zone-1").Return([]cloudstack.Hypervisor{hypervisor.XenServer, hypervisor.KVM}, nil)
	cloud.EXPECT().FindOSType("Ubuntu 22.04 LTS").Return("os-ubuntu", nil)
	cloud.EXPECT().OwnTemplates("").Return(nil, nil)
	cloud.EXPECT().GetUploadParams(gomock.Any()).DoAndReturn(func(s cloudstack.TemplateSpec) (*cloudstack.UploadParams, error) {
		m, ok := cloudstack.Template{DisplayText: s.DisplayText}.Mark()
		if !ok || !m.ConfigDrive || !m.Incomplete || s.Format != "QCOW2" || s.Hypervisor != "KVM" || s.OSTypeID != "os-ubuntu" {
			t.Errorf("template spec %+v", s)
		}
		return &cloudstack.UploadParams{TemplateID: "tpl-1", PostURL: srv.URL, Signature: "sig"}, nil
	})
	cloud.EXPECT().UploadClient().Return(srv.Client())
	cloud.EXPECT().WaitTemplate("tpl-1", []string{"zone-1"}, gomock.Any(), gomock.Any()).Return(nil)
	cloud.EXPECT().SetTemplateDisplayText("tpl-1", gomock.Any()).DoAndReturn(func(_, text string) error {
		if m, ok := (cloudstack.Template{DisplayText: text}).Mark(); !ok || !m.ConfigDrive || m.Incomplete {
			t.Errorf("completed with %q", text)
		}
		return nil
	})
	cid, err := c.CreateStemcell(qcow2Image(t), kvmStemcell(`["z1"]`))
	if err != nil || cid.AsString() != "configdrive-tpl-1" {
		t.Fatalf("create_stemcell: %v %v", cid, err)
	}
}

// A zone with neither KVM nor XenServer is refused before anything is
// uploaded, naming its hypervisors; so is a zone without the hypervisor
// the operator named.
func TestCreateStemcellOpenStackRefusesZonesItCannotRun(t *testing.T) {
	c, cloud := configDriveStemcellCPI(t)
	cloud.EXPECT().FindZones([]string{"z1", "z2"}).Return([]cloudstack.Zone{{ID: "zone-1", Name: "z1"}, {ID: "zone-2", Name: "z2"}}, nil)
	cloud.EXPECT().ZoneHypervisors("zone-1").Return([]cloudstack.Hypervisor{hypervisor.XenServer}, nil)
	cloud.EXPECT().ZoneHypervisors("zone-2").Return([]cloudstack.Hypervisor{hypervisor.KVM, hypervisor.VMware}, nil)
	_, err := c.CreateStemcell(qcow2Image(t), kvmStemcell(`["z1","z2"]`))
	if err == nil || !strings.Contains(err.Error(), "do not all have one of them: z1 (XenServer), z2 (KVM, VMware)") {
		t.Fatalf("got %v", err)
	}
	cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1", Name: "z1"}}, nil)
	cloud.EXPECT().ZoneHypervisors("zone-1").Return([]cloudstack.Hypervisor{hypervisor.XenServer}, nil)
	var named apiv1.CloudPropsImpl
	_ = named.UnmarshalJSON([]byte(`{"name":"bosh-kvm","version":"1.5","infrastructure":"openstack","hypervisor":"kvm",` +
		`"disk_format":"qcow2","zones":["z1"],"cloudstack_hypervisor":"KVM"}`))
	_, err = c.CreateStemcell(qcow2Image(t), named)
	if err == nil || !strings.Contains(err.Error(), "zone z1 has no KVM cluster (its hypervisors: XenServer;") {
		t.Fatalf("got %v", err)
	}
}

// delete_stemcell takes the config drive mark off the CID.
func TestDeleteStemcellOfAConfigDriveStemcell(t *testing.T) {
	c, cloud := configDriveStemcellCPI(t)
	cloud.EXPECT().OwnTemplates("").Return(nil, nil)
	cloud.EXPECT().Templates("tpl-1").Return([]cloudstack.Template{{ID: "tpl-1"}}, nil)
	cloud.EXPECT().DeleteTemplate("tpl-1", false).Return(nil)
	if err := c.DeleteStemcell(apiv1.NewStemcellCID("configdrive-tpl-1")); err != nil {
		t.Fatal(err)
	}
}

// By WebDAV, CloudStack downloads the ISO this call serves (registerIso),
// and the serving ends once the ISO is ready.
func TestCreateVMWithConfigDriveByWebDAV(t *testing.T) {
	c, cloud, logs := loggedCPI(t, callContext(3), func(cfg *config.Config) {
		cfg.Stemcell.ConfigDriveTimeout = config.Duration(time.Minute)
		cfg.Stemcell.ConfigDrivePublish = config.PublishWebDAV
		cfg.WebDAV.Listen = "127.0.0.1:0"
		cfg.CloudStack.JobTimeout = config.Duration(time.Minute)
	})
	expectResolve(cloud)
	d := &deployed{}
	var url string
	gomock.InOrder(
		cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil),
		cloud.EXPECT().OwnISOs("").Return(nil, nil),
		cloud.EXPECT().RegisterISO(gomock.Any(), gomock.Any()).DoAndReturn(func(s cloudstack.ISOSpec, u string) (string, error) {
			url = u
			resp, err := http.Get(u)
			if err != nil {
				t.Fatalf("downloading %s: %v", u, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), configdrive.Label) ||
				!strings.HasSuffix(u, s.Name+".iso") {
				t.Errorf("GET %s: %d, %d bytes", u, resp.StatusCode, len(body))
			}
			return "iso-1", nil
		}),
		cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer("vm-1", nil)),
		cloud.EXPECT().WaitISO("iso-1", time.Minute).Return(nil),
		cloud.EXPECT().AttachISO("iso-1", "vm-1").DoAndReturn(func(string, string) error {
			if resp, err := http.Get(url); err == nil {
				resp.Body.Close()
				t.Error("the ISO is still served once CloudStack has it")
			}
			return nil
		}),
		cloud.EXPECT().StartVM("vm-1").Return(nil),
		cloud.EXPECT().SetISODisplayText("iso-1", gomock.Any()).Return(nil),
		cloud.EXPECT().SetDisplayName("vm-1", gomock.Any()).Return(nil),
	)
	if _, err := createConfigDriveVM(c, apiv1.NewVMEnv(nil)); err != nil {
		t.Fatalf("create_vm: %v", err)
	}
	if strings.Contains(logs.String(), "upload.monitoring.interval") {
		t.Errorf("create_vm by WebDAV speaks of the upload monitor:\n%s", logs)
	}
}
