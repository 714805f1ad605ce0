package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// taggedOfferings adds compute and disk offerings with storage tags and
// disk offering tags, through the API as an operator would.
func (e *env) taggedOfferings() {
	e.t.Helper()
	c := e.client()
	for _, o := range []struct {
		name      string
		cpus, mem int
		tags      string
	}{
		{"ssd small", 1, 512, "ssd"},
		{"ssd medium", 2, 2048, "SSD,replicated"},
		{"ssd slow", 2, 2048, "ssd,slow"},
		{"hdd big", 4, 8192, "hdd"},
	} {
		p := c.ServiceOffering.NewCreateServiceOfferingParams(o.name, o.name)
		p.SetCpunumber(o.cpus)
		p.SetCpuspeed(1000)
		p.SetMemory(o.mem)
		p.SetTags(o.tags)
		if _, err := c.ServiceOffering.CreateServiceOffering(p); err != nil {
			e.t.Fatal(err)
		}
	}
	open := c.ServiceOffering.NewCreateServiceOfferingParams("ssd any", "ssd any")
	open.SetCustomized(true)
	open.SetTags("ssd")
	if _, err := c.ServiceOffering.CreateServiceOffering(open); err != nil {
		e.t.Fatal(err)
	}
	for _, o := range []struct {
		name   string
		sizeGB int64
		tags   string
	}{
		{"ssd 10", 10, "ssd"},
		{"ssd 50", 50, "fast, ssd"},
		{"hdd 20", 20, "hdd"},
		{"ssd custom", 0, "ssd"},
	} {
		p := c.DiskOffering.NewCreateDiskOfferingParams(o.name, o.name)
		if o.sizeGB > 0 {
			p.SetDisksize(o.sizeGB)
		} else {
			p.SetCustomized(true)
		}
		p.SetTags(o.tags)
		if _, err := c.DiskOffering.CreateDiskOffering(p); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) calculate(res map[string]any) (map[string]any, response) {
	e.t.Helper()
	r := e.call("calculate_vm_cloud_properties", res)
	var props map[string]any
	if r.Error == nil {
		r.decode(e.t, &props)
	}
	return props, r
}

// TestCalculateVMCloudPropertiesHonoursTagFilters: with the earlier CPIs'
// calculate tags configured, calculate_vm_cloud_properties answers only
// offerings whose tags pass them, create_vm deploys what it answered, and
// an ephemeral disk with no offering goes on
// cloudstack.default_custom_disk_offering.
func TestCalculateVMCloudPropertiesHonoursTagFilters(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) {
		cs := section(cfg, "cloudstack")
		cs["calculate"] = map[string]any{"compute_tags": []string{"ssd"}, "not_compute_tags": []string{"slow"},
			"disk_tags": []string{"ssd"}}
		cs["default_custom_disk_offering"] = "ssd custom"
	})
	e.taggedOfferings()
	stemcell := e.stemcell()

	props, r := e.calculate(map[string]any{"cpu": 2, "ram": 1024, "ephemeral_disk_size": 20000})
	r.ok(t)
	if got := mustMarshal(t, props); got != `{"compute_offering":"ssd medium","ephemeral_disk_offering":"ssd 50","ephemeral_disk_size":20000}` {
		t.Fatalf("calculate_vm_cloud_properties = %s", got)
	}
	cid, _ := e.createCustomVM(stemcell, props, "10.1.1.71")
	if vm := e.vm(cid); vm.Serviceofferingname != "ssd medium" {
		t.Errorf("VM on %q", vm.Serviceofferingname)
	}
	if data := e.dataVolumesOf(cid); len(data) != 1 || e.diskOfferingName(data[0].Diskofferingid) != "ssd 50" {
		t.Errorf("ephemeral disks %+v", data)
	}
	e.call("delete_vm", cid).ok(t)

	// Beyond every fixed offering passing the tags: the tagged customized
	// ones, named, and create_vm takes them.
	props, r = e.calculate(map[string]any{"cpu": 4, "ram": 6144, "ephemeral_disk_size": 200000})
	r.ok(t)
	if got := mustMarshal(t, props); got != `{"compute_offering":"ssd any","cpu":4,"ephemeral_disk_offering":"ssd custom",`+
		`"ephemeral_disk_size":200000,"ram":6144}` {
		t.Fatalf("calculate_vm_cloud_properties = %s", got)
	}
	cid, _ = e.createCustomVM(stemcell, props, "10.1.1.73")
	if vm := e.vm(cid); vm.Serviceofferingname != "ssd any" || vm.Cpunumber != 4 || vm.Memory != 6144 {
		t.Errorf("VM on %q with %d CPUs and %d MiB", vm.Serviceofferingname, vm.Cpunumber, vm.Memory)
	}
	if data := e.dataVolumesOf(cid); len(data) != 1 || e.diskOfferingName(data[0].Diskofferingid) != "ssd custom" ||
		data[0].Size != 196<<30 {
		t.Errorf("ephemeral disks %+v", data)
	}
	e.call("delete_vm", cid).ok(t)

	// An ephemeral disk without an offering goes on the configured one.
	r = e.call("create_vm", "agent-eph", stemcell, map[string]any{"compute_offering": "Small Instance", "disk": 3000},
		map[string]any{"default": manualNet("10.1.1.72")}, []string{}, boshEnv).ok(t)
	var result []json.RawMessage
	r.decode(t, &result)
	var eph string
	_ = json.Unmarshal(result[0], &eph)
	if data := e.dataVolumesOf(eph); len(data) != 1 || e.diskOfferingName(data[0].Diskofferingid) != "ssd custom" {
		t.Errorf("ephemeral disk without an offering: %+v", data)
	}
	if !strings.Contains(r.Stderr, `using cloudstack.default_custom_disk_offering "ssd custom"`) {
		t.Errorf("the log does not name the offering:\n%s", r.Stderr)
	}
}

// TestCalculateVMCloudPropertiesNamesTheFilterNoOfferingPasses: nothing
// passing is an error naming the filters and the offerings seen; without
// filters the answer is what it always was.
func TestCalculateVMCloudPropertiesNamesTheFilterNoOfferingPasses(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) {
		section(cfg, "cloudstack")["calculate"] = map[string]any{"compute_tags": []string{"gpu"}}
	})
	e.taggedOfferings()
	_, r := e.calculate(map[string]any{"cpu": 1, "ram": 512, "ephemeral_disk_size": 1024})
	r.failed(t, "CloudError", `no compute offering has storage tags passing cloudstack.calculate.compute_tags ["gpu"]: `+
		`CloudStack offers "Small Instance" (no tags)`)
	r.failed(t, "CloudError", `"ssd slow" (tags ["ssd" "slow"])`)

	plain := newEnv(t, nil)
	plain.taggedOfferings()
	got := plain.call("calculate_vm_cloud_properties", map[string]any{"cpu": 1, "ram": 512, "ephemeral_disk_size": 1024}).ok(t)
	if string(got.Result) != `{"compute_offering":"Small Instance","ephemeral_disk_size":1024}` {
		t.Errorf("without filters: %s", got.Result)
	}
}
