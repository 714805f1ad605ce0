package cpi_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// newConfiguredCPI is a CPI over a strict mock with the CloudStack section
// of its config edited, and its log.
func newConfiguredCPI(t *testing.T, edit func(*config.CloudStack)) (apiv1.CPI, *cloudstackmock.MockAPI, *bytes.Buffer) {
	t.Helper()
	return loggedCPI(t, apiv1.CloudPropsImpl{}, func(cfg *config.Config) { edit(&cfg.CloudStack) })
}

// expectDiskOfferingLookups answers FindDiskOffering of each ref, once, as
// CloudStack offering diskOfferings() would: an unknown one is an error.
func expectDiskOfferingLookups(cloud *cloudstackmock.MockAPI, refs ...string) {
	for _, ref := range refs {
		var found *cloudstack.DiskOffering
		for _, o := range diskOfferings() {
			if o.Is(ref) {
				found = &o
			}
		}
		if found == nil {
			cloud.EXPECT().FindDiskOffering(ref).Return(nil, &cloudstack.APIError{Command: "listDiskOfferings",
				Text: "no disk offering " + ref})
			continue
		}
		cloud.EXPECT().FindDiskOffering(ref).Return(found, nil)
	}
}

// expectCreateVolume expects create_disk's volume, of sizeGB on the
// offering, in zone z1, and its tags.
func expectCreateVolume(cloud *cloudstackmock.MockAPI, offeringID string, sizeGB int) {
	cloud.EXPECT().CreateVolume(gomock.Any(), "id-z1", offeringID, sizeGB, gomock.Any()).DoAndReturn(
		func(name, zoneID, offeringID string, _ int, _ map[string]string) (*cloudstack.Volume, error) {
			return &cloudstack.Volume{ID: "vol-new", Name: name, ZoneID: zoneID, OfferingID: offeringID}, nil
		})
}

func diskProps(raw string) apiv1.DiskCloudProps {
	return apiv1.CloudPropsImpl{RawMessage: json.RawMessage(raw)}
}

func tags(csv string) cloudstack.OfferingTags { return cloudstack.NewOfferingTags(csv) }

func fixedCompute(name string, cpus, mem int, storageTags string) cloudstack.ServiceOffering {
	return cloudstack.ServiceOffering{ID: "id-" + name, Name: name, CPUs: cpus, MemoryMB: mem, CPUsFixed: true,
		MemoryFixed: true, SpeedFixed: true, MinCPUs: 1, MinMemoryMB: 32, StorageTags: tags(storageTags)}
}

// computeOfferings carry every storagetags value CloudStack can answer:
// absent or empty (no tags), one, several, and cleanupTags' leftovers.
func computeOfferings() []cloudstack.ServiceOffering {
	return []cloudstack.ServiceOffering{
		fixedCompute("untagged", 2, 2048, ""),
		fixedCompute("ssd", 2, 4096, "ssd"),
		fixedCompute("SSD gold", 2, 8192, "SSD,Gold Tier"),
		fixedCompute("hdd", 2, 2048, "hdd,,slow"),
		fixedCompute("leading", 2, 3072, ",nvme"),
		{ID: "id-custom-ssd", Name: "custom ssd", Customized: true, MinCPUs: 1, MinMemoryMB: 32, StorageTags: tags("ssd")},
		{ID: "id-custom", Name: "custom", Customized: true, MinCPUs: 1, MinMemoryMB: 32},
	}
}

func calculate(t *testing.T, c apiv1.CPI, res apiv1.VMResources) (string, error) {
	t.Helper()
	props, err := c.CalculateVMCloudProperties(res)
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(props)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw), nil
}

func TestCalculateWithoutTagsAnswersAsBefore(t *testing.T) {
	c, cloud, _ := newConfiguredCPI(t, func(*config.CloudStack) {})
	// Without disk tags the disk offerings are not listed: the strict mock
	// fails on DiskOfferings.
	cloud.EXPECT().ServiceOfferings().Return(computeOfferings(), nil).Times(3)
	for _, tc := range []struct {
		res  apiv1.VMResources
		want string
	}{
		{apiv1.VMResources{CPU: 2, RAM: 2048, EphemeralDiskSize: 10240}, `{"compute_offering":"untagged","ephemeral_disk_size":10240}`},
		{apiv1.VMResources{CPU: 2, RAM: 3000}, `{"compute_offering":"leading","ephemeral_disk_size":0}`},
		{apiv1.VMResources{CPU: 4, RAM: 2048, EphemeralDiskSize: 5}, `{"cpu":4,"ephemeral_disk_size":5,"ram":2048}`},
	} {
		got, err := calculate(t, c, tc.res)
		if err != nil || got != tc.want {
			t.Errorf("%+v: got %s, %v; want %s", tc.res, got, err, tc.want)
		}
	}
}

func TestCalculateFiltersComputeOfferingsByStorageTags(t *testing.T) {
	cases := []struct {
		name         string
		want, refuse []string
		res          apiv1.VMResources
		answer       string
	}{
		{"one tag", []string{"ssd"}, nil, apiv1.VMResources{CPU: 2, RAM: 2048},
			`{"compute_offering":"ssd","ephemeral_disk_size":0}`},
		{"case and several tags", []string{"gold tier"}, nil, apiv1.VMResources{CPU: 1, RAM: 512},
			`{"compute_offering":"SSD gold","ephemeral_disk_size":0}`},
		{"any of the wanted", []string{"nvme", "gold tier"}, nil, apiv1.VMResources{CPU: 1, RAM: 512},
			`{"compute_offering":"leading","ephemeral_disk_size":0}`},
		{"empty entries do not hide a tag", []string{"slow"}, nil, apiv1.VMResources{CPU: 1, RAM: 512},
			`{"compute_offering":"hdd","ephemeral_disk_size":0}`},
		{"whole tags only", []string{"ss"}, nil, apiv1.VMResources{CPU: 1, RAM: 512}, ""},
		{"refused tags", nil, []string{"SSD", "slow", "nvme"}, apiv1.VMResources{CPU: 1, RAM: 512},
			`{"compute_offering":"untagged","ephemeral_disk_size":0}`},
		{"refused and wanted", []string{"ssd"}, []string{"gold tier"}, apiv1.VMResources{CPU: 2, RAM: 5000},
			`{"compute_offering":"custom ssd","cpu":2,"ephemeral_disk_size":0,"ram":5000}`},
		{"customized named when tags filter", []string{"ssd"}, nil, apiv1.VMResources{CPU: 16, RAM: 65536},
			`{"compute_offering":"custom ssd","cpu":16,"ephemeral_disk_size":0,"ram":65536}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, cloud, _ := newConfiguredCPI(t, func(cs *config.CloudStack) {
				cs.Calculate.ComputeTags, cs.Calculate.NotComputeTags = tc.want, tc.refuse
			})
			cloud.EXPECT().ServiceOfferings().Return(computeOfferings(), nil)
			got, err := calculate(t, c, tc.res)
			if tc.answer == "" {
				if err == nil {
					t.Fatalf("answered %s; no offering passes", got)
				}
				return
			}
			if err != nil || got != tc.answer {
				t.Fatalf("got %s, %v; want %s", got, err, tc.answer)
			}
		})
	}
}

func TestCalculateNamesTheFiltersAndOfferingsWhenNonePass(t *testing.T) {
	c, cloud, _ := newConfiguredCPI(t, func(cs *config.CloudStack) {
		cs.Calculate.ComputeTags, cs.Calculate.NotComputeTags = []string{"gpu"}, []string{"slow"}
	})
	cloud.EXPECT().ServiceOfferings().Return(computeOfferings(), nil)
	_, err := calculate(t, c, apiv1.VMResources{CPU: 1, RAM: 512})
	for _, want := range []string{`cloudstack.calculate.compute_tags ["gpu"]`, `cloudstack.calculate.not_compute_tags ["slow"]`,
		`"untagged" (no tags)`, `"SSD gold" (tags ["SSD" "Gold Tier"])`, `"hdd" (tags ["hdd" "slow"])`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
	c, cloud, _ = newConfiguredCPI(t, func(cs *config.CloudStack) { cs.Calculate.ComputeTags = []string{"hdd"} })
	cloud.EXPECT().ServiceOfferings().Return(computeOfferings(), nil)
	_, err = calculate(t, c, apiv1.VMResources{CPU: 8, RAM: 512})
	if err == nil || !strings.Contains(err.Error(), `among those passing cloudstack.calculate.compute_tags ["hdd"]`) {
		t.Errorf("a passing offering too small: %v", err)
	}
}

func diskOfferings() []cloudstack.DiskOffering {
	return []cloudstack.DiskOffering{
		{ID: "d-small-ssd", Name: "small ssd", SizeGB: 5, Tags: tags("ssd")},
		{ID: "d-big-ssd", Name: "big ssd", SizeGB: 100, Tags: tags("SSD,replicated")},
		{ID: "d-mid-hdd", Name: "mid hdd", SizeGB: 20, Tags: tags("hdd")},
		{ID: "d-mid", Name: "mid", SizeGB: 20},
		{ID: "d-custom-ssd", Name: "custom ssd", Customized: true, Tags: tags("ssd")},
		{ID: "d-custom", Name: "Custom", Customized: true, Tags: tags("")},
	}
}

func TestCalculateAnswersAnEphemeralOfferingPassingDiskTags(t *testing.T) {
	cases := []struct {
		name         string
		want, refuse []string
		custom       string
		sizeMiB      int
		offering     string // "" for an error
	}{
		{"smallest that holds it", []string{"ssd"}, nil, "", 5 * 1024, "small ssd"},
		{"bigger when the small is too small", []string{"ssd"}, nil, "", 5*1024 + 1, "big ssd"},
		{"customized beyond the largest", []string{"ssd"}, nil, "", 200 * 1024, "custom ssd"},
		{"refused only", nil, []string{"ssd", "hdd"}, "", 1024, "mid"},
		{"refused keeps Custom", nil, []string{"ssd"}, "", 50 * 1024, "Custom"},
		{"configured customized one", nil, []string{"hdd"}, "custom ssd", 500 * 1024, "custom ssd"},
		{"configured one refused: another passing", nil, []string{"ssd"}, "d-custom-ssd", 500 * 1024, "Custom"},
		{"too big for the passing fixed ones", []string{"hdd"}, nil, "", 500 * 1024, ""},
		{"none passes", []string{"tape"}, nil, "", 1024, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, cloud, _ := newConfiguredCPI(t, func(cs *config.CloudStack) {
				cs.Calculate.DiskTags, cs.Calculate.NotDiskTags, cs.DefaultCustomDiskOffering = tc.want, tc.refuse, tc.custom
			})
			cloud.EXPECT().ServiceOfferings().Return(computeOfferings(), nil)
			cloud.EXPECT().DiskOfferings().Return(diskOfferings(), nil)
			props, err := c.CalculateVMCloudProperties(apiv1.VMResources{CPU: 1, RAM: 512, EphemeralDiskSize: tc.sizeMiB})
			if tc.offering == "" {
				if err == nil || !strings.Contains(err.Error(), "disk") {
					t.Fatalf("got %s, %v; want an error", mustJSON(props), err)
				}
				return
			}
			var got map[string]any
			if err != nil || json.Unmarshal([]byte(mustJSON(props)), &got) != nil ||
				got["ephemeral_disk_offering"] != tc.offering || got["ephemeral_disk_size"] != float64(tc.sizeMiB) ||
				got["compute_offering"] != "untagged" {
				t.Fatalf("got %s, %v; want ephemeral_disk_offering %q", mustJSON(props), err, tc.offering)
			}
		})
	}
}

func TestCalculateDiskTagsErrorNamesOfferings(t *testing.T) {
	c, cloud, _ := newConfiguredCPI(t, func(cs *config.CloudStack) { cs.Calculate.DiskTags = []string{"tape"} })
	cloud.EXPECT().ServiceOfferings().Return(computeOfferings(), nil).Times(2)
	cloud.EXPECT().DiskOfferings().Return(diskOfferings(), nil) // not for size 0
	_, err := c.CalculateVMCloudProperties(apiv1.VMResources{CPU: 1, RAM: 512, EphemeralDiskSize: 1024})
	for _, want := range []string{`cloudstack.calculate.disk_tags ["tape"]`, `"mid" (no tags)`, `"big ssd" (tags ["SSD" "replicated"])`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
	// No ephemeral disk asked for: nothing to choose.
	props, err := c.CalculateVMCloudProperties(apiv1.VMResources{CPU: 1, RAM: 512})
	if err != nil || strings.Contains(mustJSON(props), "ephemeral_disk_offering") {
		t.Errorf("size 0: %s, %v", mustJSON(props), err)
	}
}

func TestCreateDiskUsesTheConfiguredCustomOffering(t *testing.T) {
	c, cloud, logs := newConfiguredCPI(t, func(cs *config.CloudStack) { cs.DefaultCustomDiskOffering = "custom ssd" })
	expectZones(cloud, "z1")
	expectDiskOfferingLookups(cloud, "custom ssd")
	expectCreateVolume(cloud, "d-custom-ssd", 3)
	if _, err := c.CreateDisk(3000, diskProps(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `using cloudstack.default_custom_disk_offering "custom ssd" (d-custom-ssd)`) {
		t.Errorf("the log does not name the offering:\n%s", logs)
	}
	// Without it: Custom, as before, and the log says so.
	c, cloud, logs = newConfiguredCPI(t, func(*config.CloudStack) {})
	expectZones(cloud, "z1")
	cloud.EXPECT().CustomDiskOffering().Return(cloudstack.PickCustomDiskOffering(diskOfferings()))
	expectCreateVolume(cloud, "d-custom", 3)
	if _, err := c.CreateDisk(3000, diskProps(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `using customized disk offering "Custom" (d-custom)`) {
		t.Errorf("the log does not name the offering:\n%s", logs)
	}
}

// A configured custom offering that is fixed or missing refuses create_disk
// before a volume is created (the strict mock fails on CreateVolume).
func TestConfiguredCustomOfferingMustBeCustomized(t *testing.T) {
	for ref, want := range map[string]string{
		"mid":     `cloudstack.default_custom_disk_offering "mid" is not a customized disk offering (it has a fixed 20 GiB)`,
		"missing": `cloudstack.default_custom_disk_offering: `,
	} {
		c, cloud, _ := newConfiguredCPI(t, func(cs *config.CloudStack) { cs.DefaultCustomDiskOffering = ref })
		expectZones(cloud, "z1")
		expectDiskOfferingLookups(cloud, ref)
		_, err := c.CreateDisk(3000, diskProps(`{}`), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", ref, err, want)
		}
		// A named offering does not need it.
		expectZones(cloud, "z1")
		expectDiskOfferingLookups(cloud, "Custom")
		expectCreateVolume(cloud, "d-custom", 3)
		if _, err := c.CreateDisk(3000, diskProps(`{"disk_offering":"Custom"}`), nil); err != nil {
			t.Errorf("%s: create_disk naming its offering: %v", ref, err)
		}
	}
}

// resize_disk off a fixed offering moves onto the configured customized
// one, else Custom; a configured one that is fixed refuses before any
// resize (the strict mock fails on ResizeVolume).
func TestResizeOffAFixedOfferingUsesTheConfiguredCustomOne(t *testing.T) {
	for _, tc := range []struct{ custom, target, refusal string }{
		{"custom ssd", "d-custom-ssd", ""},
		{"", "d-custom", ""},
		{"mid", "", `cloudstack.default_custom_disk_offering "mid" is not a customized disk offering`},
	} {
		c, cloud, logs := newConfiguredCPI(t, func(cs *config.CloudStack) { cs.DefaultCustomDiskOffering = tc.custom })
		cloud.EXPECT().FindVolume("vol-1").Return(&cloudstack.Volume{ID: "vol-1", SizeGB: 20, OfferingID: "d-mid", State: "Ready"}, nil)
		expectDiskOfferingLookups(cloud, "d-mid", firstNonEmpty(tc.custom, "Custom"))
		if tc.target != "" {
			cloud.EXPECT().ResizeVolume("vol-1", 40, tc.target).Return(nil)
		}
		err := c.ResizeDisk(apiv1.NewDiskCID("vol-1"), 40*1024)
		if tc.refusal != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refusal) {
				t.Errorf("%q: got %v", tc.custom, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.custom, err)
		}
		if tc.custom != "" && !strings.Contains(logs.String(), `resize_disk of disk vol-1 off its fixed offering "mid": using cloudstack.default_custom_disk_offering "custom ssd"`) {
			t.Errorf("the log does not name the offering:\n%s", logs)
		}
	}
}
