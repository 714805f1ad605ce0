package cpi_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/cpi"
	"github.com/bosh-cloudstack/cloudstack-cpi/registry"
)

// registryPassword is distinctive, so a test can tell it never reaches
// a log or an error.
const registryPassword = "reg-secret-5b1e"

// testRegistry is the CPI's own registry server on loopback, whose writes
// can be made to fail.
type testRegistry struct {
	url      string
	client   *registry.Client
	failPuts atomic.Bool
	dropPuts atomic.Bool // stored, then the connection drops before the answer
}

func newTestRegistry(t *testing.T) *testRegistry {
	t.Helper()
	store, err := registry.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	server, err := registry.NewServer(store, registry.ServerOptions{Username: "u", Password: registryPassword})
	if err != nil {
		t.Fatal(err)
	}
	r := &testRegistry{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPut && r.failPuts.Load() {
			http.Error(w, "store unavailable", http.StatusInternalServerError)
			return
		}
		if req.Method == http.MethodPut && r.dropPuts.Load() {
			server.ServeHTTP(httptest.NewRecorder(), req)
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		server.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	if r.client, err = registry.NewClient(srv.URL, "u", registryPassword, srv.Client()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cpi.SetRegistryBackoff(0))
	return r
}

// oldStemcellCPI serves a stemcell of api_version 1, whose agent reads its
// settings from the registry. The registry's password, which the user data
// carries, must never reach the CPI's log.
func oldStemcellCPI(t *testing.T, reg *testRegistry) (apiv1.CPI, *cloudstackmock.MockAPI) {
	t.Helper()
	c, cloud, logs := loggedCPI(t, callContext(1), func(cfg *config.Config) {
		cfg.Registry = config.Registry{Endpoint: reg.url, Username: "u", Password: registryPassword}
	})
	t.Cleanup(func() {
		if strings.Contains(logs.String(), registryPassword) {
			t.Errorf("the registry password is in the log:\n%s", logs)
		}
	})
	return c, cloud
}

func (r *testRegistry) settings(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := r.client.Get(name)
	if err != nil {
		t.Fatalf("registry settings of %s: %v", name, err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// For an old stemcell the agent settings go to the registry once
// CloudStack has accepted the deploy, and the user data only says where
// the registry is (with its credentials, the one way old agents get them)
// and carries no agent_id.
func TestOldStemcellSettingsGoToTheRegistry(t *testing.T) {
	reg := newTestRegistry(t)
	c, cloud := oldStemcellCPI(t, reg)
	expectResolve(cloud)
	d := &deployed{}
	cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
	cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(func(s cloudstack.DeploySpec) (string, *cloudstack.VM, error) {
		if _, err := reg.client.Get(s.Name); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("settings in the registry before the deploy was accepted: %v", err)
		}
		if err := s.Accepted("vm-1"); err != nil {
			return "vm-1", nil, err
		}
		return d.answer("vm-1", nil)(s)
	})
	cloud.EXPECT().SetDisplayName("vm-1", gomock.Any()).Return(nil)
	if _, err := createVM(c, `{"compute_offering":"small"}`, networks(t, manualNet)); err != nil {
		t.Fatalf("create_vm: %v", err)
	}
	if got := reg.settings(t, d.spec.Name)["agent_id"]; got != "agent-1" {
		t.Errorf("registry settings carry agent_id %v", got)
	}
	raw, err := base64.StdEncoding.DecodeString(d.spec.UserData)
	if err != nil {
		t.Fatal(err)
	}
	var envelope struct {
		AgentID  *string           `json:"agent_id"`
		Server   map[string]string `json:"server"`
		Registry map[string]string `json:"registry"`
	}
	if err := json.Unmarshal(raw, &envelope); err != nil {
		t.Fatal(err)
	}
	if envelope.AgentID != nil || envelope.Server["name"] != d.spec.Name ||
		envelope.Registry["endpoint"] != strings.Replace(reg.url, "http://", "http://u:"+registryPassword+"@", 1) {
		t.Errorf("user data %s", raw)
	}
}

// When the deploy's answer is lost and CloudStack has no VM, the settings
// written for it are deleted: no entry stays that no VM names.
func TestOldStemcellSettingsGoWithAVMThatNeverCame(t *testing.T) {
	reg := newTestRegistry(t)
	c, cloud := oldStemcellCPI(t, reg)
	expectResolve(cloud)
	var name string
	cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
	cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(func(s cloudstack.DeploySpec) (string, *cloudstack.VM, error) {
		name = s.Name
		if err := s.Accepted("vm-1"); err != nil {
			t.Fatal(err)
		}
		return "", nil, &cloudstack.UnreachableError{Endpoint: "cs", Err: errors.New("connection reset")}
	})
	cloud.EXPECT().FindVM(gomock.Any()).Return(nil, nil)
	_, err := createVM(c, `{"compute_offering":"small"}`, networks(t, manualNet))
	if err == nil || !retryable(t, err) {
		t.Fatalf("create_vm: %v, want a retryable failure", err)
	}
	if _, err := reg.client.Get(name); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("settings of %s stay in the registry: %v", name, err)
	}
}

// A write of the settings that got no answer may have stored them: the
// failed create_vm deletes them with its VM. (A write the registry
// refused, or that never reached it, stored nothing, and the VM goes
// without a registry call: spec's
// TestOldStemcellCreateVMWithoutItsRegistryLeavesNothing.)
func TestOldStemcellSettingsAWriteMayHaveStoredGoWithTheVM(t *testing.T) {
	reg := newTestRegistry(t)
	reg.dropPuts.Store(true)
	c, cloud := oldStemcellCPI(t, reg)
	expectResolve(cloud)
	d := &deployed{}
	cloud.EXPECT().IncompleteVMs("dir-1").Return(nil, nil)
	cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(func(s cloudstack.DeploySpec) (string, *cloudstack.VM, error) {
		d.spec = s
		return "vm-1", nil, s.Accepted("vm-1")
	})
	cloud.EXPECT().FindVM("vm-1").DoAndReturn(func(string) (*cloudstack.VM, error) { return d.vm(), nil })
	expectRemoval(cloud, nil)
	_, err := createVM(c, `{"compute_offering":"small"}`, networks(t, manualNet))
	if err == nil || !strings.Contains(err.Error(), "did not answer PUT") ||
		!strings.Contains(err.Error(), "removed what this create_vm had made") {
		t.Fatalf("create_vm: %v", err)
	}
	if _, err := reg.client.Get(d.spec.Name); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("the settings the write stored stay in the registry: %v", err)
	}
}

// attach_disk and detach_disk keep the registry's disks.persistent in step
// for old stemcells; when the registry cannot be written, what CloudStack
// did is undone, and the error says so.
func TestOldStemcellDisksFollowTheRegistry(t *testing.T) {
	vm := &cloudstack.VM{ID: "vm-1", Name: "vm-abc", State: "Running", ZoneID: "zone-1", Hypervisor: hypervisor.KVM}
	free := &cloudstack.Volume{ID: "disk-1", Type: "DATADISK", ZoneID: "zone-1", State: "Ready"}
	attached := &cloudstack.Volume{ID: "disk-1", Type: "DATADISK", ZoneID: "zone-1", State: "Ready", VMID: "vm-1", DeviceID: 1}
	setup := func(t *testing.T) (*testRegistry, apiv1.CPI, *cloudstackmock.MockAPI) {
		reg := newTestRegistry(t)
		if err := reg.client.Put("vm-abc", []byte(`{"agent_id":"agent-1","disks":{"system":"/dev/vda"}}`)); err != nil {
			t.Fatal(err)
		}
		c, cloud := oldStemcellCPI(t, reg)
		cloud.EXPECT().FindVM("vm-1").Return(vm, nil)
		return reg, c, cloud
	}
	persistent := func(t *testing.T, reg *testRegistry) map[string]any {
		disks, _ := reg.settings(t, "vm-abc")["disks"].(map[string]any)
		p, _ := disks["persistent"].(map[string]any)
		return p
	}
	t.Run("attach", func(t *testing.T) {
		reg, c, cloud := setup(t)
		cloud.EXPECT().FindVolume("disk-1").Return(free, nil)
		cloud.EXPECT().AttachVolume("disk-1", "vm-1").Return(attached, nil)
		if _, err := c.AttachDiskV2(apiv1.NewVMCID("vm-1"), apiv1.NewDiskCID("disk-1")); err != nil {
			t.Fatalf("attach_disk: %v", err)
		}
		if hint, ok := persistent(t, reg)["disk-1"].(map[string]any); !ok || hint["volume_id"] != "1" {
			t.Errorf("registry disks.persistent %v", persistent(t, reg))
		}
	})
	t.Run("attach, registry fails", func(t *testing.T) {
		reg, c, cloud := setup(t)
		reg.failPuts.Store(true)
		cloud.EXPECT().FindVolume("disk-1").Return(free, nil)
		cloud.EXPECT().AttachVolume("disk-1", "vm-1").Return(attached, nil)
		cloud.EXPECT().DetachVolume("disk-1").Return(nil)
		_, err := c.AttachDiskV2(apiv1.NewVMCID("vm-1"), apiv1.NewDiskCID("disk-1"))
		if got := errorType(t, err); got != "Bosh::Clouds::CloudError" || !strings.Contains(err.Error(), "detached again") ||
			strings.Contains(err.Error(), registryPassword) {
			t.Fatalf("got %s %v", got, err)
		}
	})
	t.Run("detach", func(t *testing.T) {
		reg, c, cloud := setup(t)
		if err := reg.client.Put("vm-abc", []byte(`{"disks":{"persistent":{"disk-1":{"path":"/dev/vdb"}}}}`)); err != nil {
			t.Fatal(err)
		}
		cloud.EXPECT().FindVolume("disk-1").Return(attached, nil)
		cloud.EXPECT().DetachVolume("disk-1").Return(nil)
		if err := c.DetachDisk(apiv1.NewVMCID("vm-1"), apiv1.NewDiskCID("disk-1")); err != nil {
			t.Fatalf("detach_disk: %v", err)
		}
		if _, ok := persistent(t, reg)["disk-1"]; ok {
			t.Errorf("registry still lists disk-1: %v", persistent(t, reg))
		}
	})
	t.Run("detach, registry fails", func(t *testing.T) {
		reg, c, cloud := setup(t)
		reg.failPuts.Store(true)
		cloud.EXPECT().FindVolume("disk-1").Return(attached, nil)
		cloud.EXPECT().DetachVolume("disk-1").Return(nil)
		moved := *attached
		moved.DeviceID = 2
		cloud.EXPECT().AttachVolume("disk-1", "vm-1").Return(&moved, nil)
		err := c.DetachDisk(apiv1.NewVMCID("vm-1"), apiv1.NewDiskCID("disk-1"))
		if got := errorType(t, err); got != "Bosh::Clouds::CloudError" || !strings.Contains(err.Error(), "attached again") ||
			!strings.Contains(err.Error(), "now as device 2, not 1") {
			t.Fatalf("got %s %v", got, err)
		}
	})
}

// delete_vm of an old stemcell's VM deletes its registry settings, and
// those of a VM already gone.
func TestOldStemcellDeleteVMForgetsTheSettings(t *testing.T) {
	reg := newTestRegistry(t)
	for _, name := range []string{"vm-abc", "vm-2"} {
		if err := reg.client.Put(name, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	c, cloud := oldStemcellCPI(t, reg)
	cloud.EXPECT().FindVM("vm-1").Return(&cloudstack.VM{ID: "vm-1", Name: "vm-abc", State: "Running"}, nil)
	cloud.EXPECT().VMVolumes("vm-1").Return(nil, nil)
	cloud.EXPECT().DestroyVM("vm-1", true, nil).Return(nil)
	cloud.EXPECT().FindVM("vm-2").Return(nil, nil)
	for _, cid := range []string{"vm-1", "vm-2"} {
		if err := c.DeleteVM(apiv1.NewVMCID(cid)); err != nil {
			t.Fatalf("delete_vm %s: %v", cid, err)
		}
	}
	for _, name := range []string{"vm-abc", "vm-2"} {
		if _, err := reg.client.Get(name); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("settings of %s stay in the registry: %v", name, err)
		}
	}
}
