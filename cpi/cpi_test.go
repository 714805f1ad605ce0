package cpi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/cpi"
)

// fakeCloud is the CloudStack layer as the CPI methods see it.
type fakeCloud struct {
	// A method this fake does not write panics on the nil interface; the
	// tests of VM and disk rules use cloudstackmock's strict mocks instead.
	cloudstack.API
	vms       map[string]*cloudstack.VM
	templates map[string][]cloudstack.Template
	volumes   map[string]*cloudstack.Volume
	offerings []cloudstack.ServiceOffering
	snapshots map[string]*cloudstack.Snapshot
	err       error
	deleted   []string
}

func (f *fakeCloud) UploadClient() *http.Client { return http.DefaultClient }

func (f *fakeCloud) FindVM(ref string) (*cloudstack.VM, error) { return f.vms[ref], f.err }

func (f *fakeCloud) FindVolume(ref string) (*cloudstack.Volume, error) { return f.volumes[ref], f.err }

func (f *fakeCloud) FindSnapshot(id string) (*cloudstack.Snapshot, error) {
	return f.snapshots[id], f.err
}

func (f *fakeCloud) ServiceOfferings() ([]cloudstack.ServiceOffering, error) {
	return f.offerings, f.err
}

func (f *fakeCloud) FindZones(refs []string) ([]cloudstack.Zone, error) {
	var zones []cloudstack.Zone
	for _, r := range refs {
		if r == "missing" {
			return nil, errors.New(`no zone "missing"`)
		}
		zones = append(zones, cloudstack.Zone{ID: "id-" + r, Name: r})
	}
	return zones, f.err
}

func (f *fakeCloud) FindOSType(ref string) (string, error) { return "os-" + ref, f.err }

func (f *fakeCloud) GetUploadParams(cloudstack.TemplateSpec) (*cloudstack.UploadParams, error) {
	return nil, errors.New("not in this fake")
}

func (f *fakeCloud) RegisterTemplate(cloudstack.TemplateSpec, string) (string, error) {
	return "", errors.New("not in this fake")
}

func (f *fakeCloud) Templates(id string) ([]cloudstack.Template, error) {
	return f.templates[id], f.err
}

func (f *fakeCloud) FindTemplateByName(name, zoneID string) (*cloudstack.Template, error) {
	for _, copies := range f.templates {
		for _, t := range copies {
			if t.Name == name && t.ZoneID == zoneID {
				return &t, nil
			}
		}
	}
	return nil, f.err
}

func (f *fakeCloud) WaitTemplate(string, []string, time.Duration, func(cloudstack.Template)) error {
	return nil
}

func (f *fakeCloud) CopyTemplate(string, string, []string) error { return nil }

func (f *fakeCloud) OwnTemplates(string) ([]cloudstack.Template, error) {
	var all []cloudstack.Template
	for _, copies := range f.templates {
		all = append(all, copies...)
	}
	return all, f.err
}

func (f *fakeCloud) DeleteTemplate(id string, _ bool) error {
	f.deleted = append(f.deleted, id)
	return f.err
}

func newCPI(t *testing.T, cloud cloudstack.API, context string) apiv1.CPI {
	t.Helper()
	var ctx apiv1.CloudPropsImpl
	if err := json.Unmarshal([]byte(context), &ctx); err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{}
	cfg.CloudStack.DefaultZone = "z1"
	c, err := cpi.NewFactory(cfg, cloud, boshlog.NewLogger(boshlog.LevelNone)).New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestInfoAdvertisesStemcellFormats(t *testing.T) {
	info, err := newCPI(t, &fakeCloud{}, `{}`).Info()
	if err != nil || len(info.StemcellFormats) == 0 || info.StemcellFormats[0] != "cloudstack-vhdx" {
		t.Fatalf("%+v %v", info, err)
	}
}

func TestHasVM(t *testing.T) {
	cloud := &fakeCloud{vms: map[string]*cloudstack.VM{
		"running":   {ID: "running", State: "Running"},
		"stopped":   {ID: "stopped", State: "Stopped"},
		"destroyed": {ID: "destroyed", State: "Destroyed"},
		"expunging": {ID: "expunging", State: "Expunging"},
	}}
	c := newCPI(t, cloud, `{"director_uuid":"d"}`)
	for cid, want := range map[string]bool{"running": true, "stopped": true, "destroyed": false, "expunging": false, "absent": false} {
		got, err := c.HasVM(apiv1.NewVMCID(cid))
		if err != nil || got != want {
			t.Errorf("has_vm(%s) = %v, %v; want %v", cid, got, err, want)
		}
	}
}

// TestDisksAndSnapshotsOnTheirWayOut: every Volume.State and
// Snapshot.State past a delete reads as gone, so has_disk is false and
// delete_disk / delete_snapshot succeed without asking CloudStack again.
func TestDisksAndSnapshotsOnTheirWayOut(t *testing.T) {
	cloud := &fakeCloud{volumes: map[string]*cloudstack.Volume{}, snapshots: map[string]*cloudstack.Snapshot{}}
	for _, state := range []string{"Ready", "Allocated", "Destroy", "Destroying", "Expunging", "Expunged"} {
		cloud.volumes[state] = &cloudstack.Volume{ID: state, State: state}
	}
	for _, state := range []string{"BackedUp", "Destroying", "Destroyed"} {
		cloud.snapshots[state] = &cloudstack.Snapshot{ID: state, State: state}
	}
	c := newCPI(t, cloud, `{"director_uuid":"d"}`)
	for cid, want := range map[string]bool{"Ready": true, "Allocated": true, "Destroy": false, "Destroying": false,
		"Expunging": false, "Expunged": false, "absent": false} {
		got, err := c.HasDisk(apiv1.NewDiskCID(cid))
		if err != nil || got != want {
			t.Errorf("has_disk of a %s volume = %v, %v; want %v", cid, got, err, want)
		}
		if !want {
			// A gone volume is not asked about again: DeleteVolume would
			// panic on the fake.
			if err := c.DeleteDisk(apiv1.NewDiskCID(cid)); err != nil {
				t.Errorf("delete_disk of a %s volume: %v", cid, err)
			}
		}
	}
	for _, cid := range []string{"Destroying", "Destroyed", "absent"} {
		if err := c.DeleteSnapshot(apiv1.NewSnapshotCID(cid)); err != nil {
			t.Errorf("delete_snapshot of a %s snapshot: %v", cid, err)
		}
	}
}

// TestCalculatedSizesFitACustomizedOffering: calculate_vm_cloud_properties
// answers cpu and ram only when a customized offering's limits take them,
// and otherwise names those limits rather than leaving create_vm to fail.
func TestCalculatedSizesFitACustomizedOffering(t *testing.T) {
	small := cloudstack.ServiceOffering{Name: "Small", CPUs: 1, MemoryMB: 512, CPUsFixed: true, MemoryFixed: true, SpeedFixed: true}
	constrained := cloudstack.ServiceOffering{Name: "Custom Constrained", Customized: true, Constrained: true,
		SpeedFixed: true, CPUSpeed: 1000, MinCPUs: 1, MaxCPUs: 2, MinMemoryMB: 512, MaxMemoryMB: 4096}
	c := newCPI(t, &fakeCloud{offerings: []cloudstack.ServiceOffering{small, constrained}}, `{"director_uuid":"d"}`)
	props, err := c.CalculateVMCloudProperties(apiv1.VMResources{CPU: 2, RAM: 2048})
	if err != nil {
		t.Fatalf("2 CPUs and 2048 MiB fit the constrained offering: %v", err)
	}
	var got map[string]any
	if raw, _ := json.Marshal(props); json.Unmarshal(raw, &got) != nil || got["cpu"] != float64(2) || got["ram"] != float64(2048) {
		t.Fatalf("calculate_vm_cloud_properties = %s", mustJSON(props))
	}
	_, err = c.CalculateVMCloudProperties(apiv1.VMResources{CPU: 8, RAM: 65536})
	if err == nil || !strings.Contains(err.Error(), `"Custom Constrained" takes 1 to 2 CPUs and 512 to 4096 MiB of memory`) {
		t.Fatalf("8 CPUs fit no offering: %v", err)
	}
}

func mustJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

func TestHasVMErrorIsACloudErrorNamingTheVM(t *testing.T) {
	cloud := &fakeCloud{err: &cloudstack.UnreachableError{Endpoint: "http://cs/client/api", Err: errors.New("refused")}}
	_, err := newCPI(t, cloud, `{}`).HasVM(apiv1.NewVMCID("vm-1"))
	var typed interface{ Type() string }
	if !errors.As(err, &typed) || typed.Type() != "Bosh::Clouds::CloudError" ||
		!strings.Contains(err.Error(), "vm-1") || !strings.Contains(err.Error(), "http://cs/client/api") {
		t.Fatalf("got %v", err)
	}
}

func TestMalformedContextIsRefused(t *testing.T) {
	var ctx apiv1.CloudPropsImpl
	_ = json.Unmarshal([]byte(`{"vm":{"stemcell":{"api_version":"three"}}}`), &ctx)
	if _, err := cpi.NewFactory(config.Config{}, &fakeCloud{}, boshlog.NewLogger(boshlog.LevelNone)).New(ctx); err == nil {
		t.Fatal("a stemcell api_version that is not a number must not pass")
	}
}
