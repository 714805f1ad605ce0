package cpi_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/cpi"
)

// newCPI is a CPI over a strict mock serving a request with the call
// context given as JSON; the default zone is z1.
func newCPI(t *testing.T, context string) (apiv1.CPI, *cloudstackmock.MockAPI) {
	t.Helper()
	var ctx apiv1.CloudPropsImpl
	if err := json.Unmarshal([]byte(context), &ctx); err != nil {
		t.Fatal(err)
	}
	return mockedCPIIn(t, ctx, func(*config.Config) {})
}

// expectZones answers FindZones for refs as a CloudStack whose zone r has
// id id-r.
func expectZones(cloud *cloudstackmock.MockAPI, refs ...string) *gomock.Call {
	zones := make([]cloudstack.Zone, len(refs))
	for i, r := range refs {
		zones[i] = cloudstack.Zone{ID: "id-" + r, Name: r}
	}
	return cloud.EXPECT().FindZones(refs).Return(zones, nil)
}

// info asks nothing of CloudStack (the strict mock fails on any call) and
// advertises only the formats this configuration serves end to end: all
// by default; without config_drive, only the CloudStack stemcell (the
// OpenStack and vSphere stemcells' agents read no user data); with
// stemcell.hypervisor, the formats that hypervisor boots; the Simulator
// boots anything.
func TestInfoAdvertisesStemcellFormats(t *testing.T) {
	no := false
	for _, c := range []struct {
		name string
		set  func(*config.Config)
		want string
	}{
		{"default", func(*config.Config) {}, "cloudstack-vhdx openstack-qcow2 openstack-raw vsphere-ova vsphere-ovf"},
		{"no config drive", func(c *config.Config) { c.Stemcell.ConfigDrive = &no }, "cloudstack-vhdx"},
		{"KVM", func(c *config.Config) { c.Stemcell.Hypervisor = "KVM" }, "openstack-qcow2 openstack-raw"},
		{"XenServer", func(c *config.Config) { c.Stemcell.Hypervisor = "XenServer" }, "cloudstack-vhdx openstack-qcow2 openstack-raw"},
		{"VMware", func(c *config.Config) { c.Stemcell.Hypervisor = "VMware" }, "vsphere-ova vsphere-ovf"},
		{"VMware without config drive", func(c *config.Config) {
			c.Stemcell.Hypervisor, c.Stemcell.ConfigDrive = "VMware", &no
		}, ""},
		{"Simulator", func(c *config.Config) { c.Stemcell.Hypervisor, c.Stemcell.ConfigDrive = "Simulator", &no },
			"cloudstack-vhdx openstack-qcow2 openstack-raw vsphere-ova vsphere-ovf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cpi, _ := mockedCPIIn(t, apiv1.CloudPropsImpl{}, c.set)
			info, err := cpi.Info()
			if got := strings.Join(info.StemcellFormats, " "); err != nil || got != c.want {
				t.Fatalf("formats %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// has_vm: a VM CloudStack is destroying counts as gone, so cloudcheck
// recreates it.
func TestHasVM(t *testing.T) {
	c, cloud := newCPI(t, `{"director_uuid":"d"}`)
	for cid, want := range map[string]bool{"Running": true, "Stopped": true, "Starting": true, "Destroyed": false,
		"Expunging": false, "absent": false} {
		var vm *cloudstack.VM
		if cid != "absent" {
			vm = &cloudstack.VM{ID: cid, State: cloudstack.VMState(cid)}
		}
		cloud.EXPECT().FindVM(cid).Return(vm, nil)
		got, err := c.HasVM(apiv1.NewVMCID(cid))
		if err != nil || got != want {
			t.Errorf("has_vm of a %s VM = %v, %v; want %v", cid, got, err, want)
		}
	}
}

// TestDisksAndSnapshotsOnTheirWayOut: every Volume.State and
// Snapshot.State past a delete reads as gone, so has_disk is false and
// delete_disk / delete_snapshot succeed without asking CloudStack to
// delete (the strict mock fails on a DeleteVolume or DeleteSnapshot).
func TestDisksAndSnapshotsOnTheirWayOut(t *testing.T) {
	c, cloud := newCPI(t, `{"director_uuid":"d"}`)
	for cid, want := range map[string]bool{"Ready": true, "Allocated": true, "Destroy": false, "Destroying": false,
		"Expunging": false, "Expunged": false, "absent": false} {
		var vol *cloudstack.Volume
		if cid != "absent" {
			vol = &cloudstack.Volume{ID: cid, State: cid}
		}
		cloud.EXPECT().FindVolume(cid).Return(vol, nil)
		got, err := c.HasDisk(apiv1.NewDiskCID(cid))
		if err != nil || got != want {
			t.Errorf("has_disk of a %s volume = %v, %v; want %v", cid, got, err, want)
		}
		if !want {
			cloud.EXPECT().FindVolume(cid).Return(vol, nil)
			if err := c.DeleteDisk(apiv1.NewDiskCID(cid)); err != nil {
				t.Errorf("delete_disk of a %s volume: %v", cid, err)
			}
		}
	}
	for _, cid := range []string{"Destroying", "Destroyed", "absent"} {
		var snap *cloudstack.Snapshot
		if cid != "absent" {
			snap = &cloudstack.Snapshot{ID: cid, State: cid}
		}
		cloud.EXPECT().FindSnapshot(cid).Return(snap, nil)
		if err := c.DeleteSnapshot(apiv1.NewSnapshotCID(cid)); err != nil {
			t.Errorf("delete_snapshot of a %s snapshot: %v", cid, err)
		}
	}
}

// A disk or snapshot still there is deleted, once.
func TestDeleteDiskAndSnapshotDeleteWhatIsThere(t *testing.T) {
	c, cloud := newCPI(t, `{"director_uuid":"d"}`)
	cloud.EXPECT().FindVolume("vol-1").Return(&cloudstack.Volume{ID: "vol-1", State: "Ready"}, nil)
	cloud.EXPECT().DeleteVolume("vol-1").Return(nil)
	if err := c.DeleteDisk(apiv1.NewDiskCID("vol-1")); err != nil {
		t.Errorf("delete_disk: %v", err)
	}
	cloud.EXPECT().FindSnapshot("snap-1").Return(&cloudstack.Snapshot{ID: "snap-1", State: "BackedUp"}, nil)
	cloud.EXPECT().DeleteSnapshot("snap-1").Return(nil)
	if err := c.DeleteSnapshot(apiv1.NewSnapshotCID("snap-1")); err != nil {
		t.Errorf("delete_snapshot: %v", err)
	}
}

// TestCalculatedSizesFitACustomizedOffering: calculate_vm_cloud_properties
// answers cpu and ram only when a customized offering's limits take them,
// and otherwise names those limits rather than leaving create_vm to fail.
func TestCalculatedSizesFitACustomizedOffering(t *testing.T) {
	small := cloudstack.ServiceOffering{Name: "Small", CPUs: 1, MemoryMB: 512, CPUsFixed: true, MemoryFixed: true, SpeedFixed: true}
	constrained := cloudstack.ServiceOffering{Name: "Custom Constrained", Customized: true, Constrained: true,
		SpeedFixed: true, CPUSpeed: 1000, MinCPUs: 1, MaxCPUs: 2, MinMemoryMB: 512, MaxMemoryMB: 4096}
	c, cloud := newCPI(t, `{"director_uuid":"d"}`)
	cloud.EXPECT().ServiceOfferings().Return([]cloudstack.ServiceOffering{small, constrained}, nil).Times(2)
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
	c, cloud := newCPI(t, `{}`)
	cloud.EXPECT().FindVM("vm-1").Return(nil, &cloudstack.UnreachableError{Endpoint: "http://cs/client/api", Err: errors.New("refused")})
	_, err := c.HasVM(apiv1.NewVMCID("vm-1"))
	if errorType(t, err) != "Bosh::Clouds::CloudError" ||
		!strings.Contains(err.Error(), "vm-1") || !strings.Contains(err.Error(), "http://cs/client/api") {
		t.Fatalf("got %v", err)
	}
}

func TestMalformedContextIsRefused(t *testing.T) {
	var ctx apiv1.CloudPropsImpl
	_ = json.Unmarshal([]byte(`{"vm":{"stemcell":{"api_version":"three"}}}`), &ctx)
	cloud := cloudstackmock.NewMockAPI(gomock.NewController(t))
	if _, err := cpi.NewFactory(config.Config{}, cloud, boshlog.NewLogger(boshlog.LevelNone)).New(ctx); err == nil {
		t.Fatal("a stemcell api_version that is not a number must not pass")
	}
}
