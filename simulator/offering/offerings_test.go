package offering_test

import (
	"strings"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

func TestCreateServiceOfferingShapes(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	fixed := cs.ServiceOffering.NewCreateServiceOfferingParams("", "fixed-2x2")
	fixed.SetCpunumber(2)
	fixed.SetCpuspeed(2000)
	fixed.SetMemory(2048)
	fixed.SetHosttags(" fast , ,ssd")
	f, err := cs.ServiceOffering.CreateServiceOffering(fixed)
	if err != nil || f.Name != "fixed-2x2" || f.Displaytext != "fixed-2x2" || f.Iscustomized || f.Cpunumber != 2 ||
		f.Cpuspeed != 2000 || f.Memory != 2048 || f.Hosttags != " fast , ,ssd" || f.State != "Active" || len(f.Serviceofferingdetails) != 0 {
		t.Fatalf("fixed offering = %+v, %v", f, err)
	}
	constrained := cs.ServiceOffering.NewCreateServiceOfferingParams("Constrained", "cc")
	constrained.SetCustomized(true)
	constrained.SetCpuspeed(1500)
	constrained.SetMincpunumber(2)
	constrained.SetMaxcpunumber(8)
	constrained.SetMinmemory(1024)
	constrained.SetMaxmemory(16384)
	c, err := cs.ServiceOffering.CreateServiceOffering(constrained)
	want := map[string]string{"mincpunumber": "2", "maxcpunumber": "8", "minmemory": "1024", "maxmemory": "16384"}
	if err != nil || !c.Iscustomized || c.Cpuspeed != 1500 || c.Cpunumber != 0 || c.Memory != 0 ||
		len(c.Serviceofferingdetails) != 4 || !sameMap(c.Serviceofferingdetails, want) {
		t.Fatalf("constrained offering = %+v, %v", c, err)
	}
	free := cs.ServiceOffering.NewCreateServiceOfferingParams("Free", "free")
	u, err := cs.ServiceOffering.CreateServiceOffering(free)
	if err != nil || !u.Iscustomized || u.Cpuspeed != 0 || len(u.Serviceofferingdetails) != 0 {
		t.Fatalf("unconstrained offering = %+v, %v", u, err)
	}
	// The raw answer leaves out what the offering leaves open (Gson drops nulls).
	raw := s.Call(map[string]string{"command": "listServiceOfferings", "id": c.Id}).Inner(t, "listserviceofferingsresponse")
	row := simtesting.Items(t, raw, "serviceoffering")[0]
	if _, has := row["cpunumber"]; has || row["cpuspeed"] != float64(1500) {
		t.Fatalf("listed constrained offering = %v", row)
	}
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestCreateServiceOfferingRefusals(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	base := func(name string) *cloudstack.CreateServiceOfferingParams {
		return cs.ServiceOffering.NewCreateServiceOfferingParams("", name)
	}
	limits := func(p *cloudstack.CreateServiceOfferingParams, minCPU, maxCPU, minMem, maxMem int) {
		p.SetCustomized(true)
		p.SetMincpunumber(minCPU)
		p.SetMaxcpunumber(maxCPU)
		p.SetMinmemory(minMem)
		p.SetMaxmemory(maxMem)
	}
	cases := []struct {
		name string
		set  func(p *cloudstack.CreateServiceOfferingParams)
		text string
	}{
		{"custom-with-cpu", func(p *cloudstack.CreateServiceOfferingParams) { p.SetCustomized(true); p.SetCpunumber(2) },
			"For creating a custom compute offering cpu and memory all should be null"},
		{"partial-limits", func(p *cloudstack.CreateServiceOfferingParams) { p.SetCustomized(true); p.SetMaxcpunumber(4) },
			"For creating a custom compute offering min/max cpu and min/max memory/cpu speed should all be null or all specified"},
		{"limits-no-speed", func(p *cloudstack.CreateServiceOfferingParams) { limits(p, 1, 4, 512, 4096) },
			"For creating a custom compute offering min/max cpu and min/max memory/cpu speed should all be null or all specified"},
		{"speed-only", func(p *cloudstack.CreateServiceOfferingParams) { p.SetCustomized(true); p.SetCpuspeed(1000) },
			"For creating a custom compute offering min/max cpu and min/max memory/cpu speed should all be null or all specified"},
		{"zero-min-cpu", func(p *cloudstack.CreateServiceOfferingParams) { limits(p, 0, 4, 512, 4096); p.SetCpuspeed(1000) },
			"Failed to create service offering zero-min-cpu: specify the minimum or minimum cpu number value between 1 and 2147483647"},
		{"tiny-min-memory", func(p *cloudstack.CreateServiceOfferingParams) { limits(p, 1, 4, 16, 4096); p.SetCpuspeed(1000) },
			"Failed to create service offering tiny-min-memory: specify the memory value between 32 and 2147483647 MB"},
		{"fixed-no-speed", func(p *cloudstack.CreateServiceOfferingParams) { p.SetCpunumber(1); p.SetMemory(512) },
			"Failed to create service offering fixed-no-speed: specify the cpu speed value between 0 and 2147483647"},
		{"fixed-zero-cpu", func(p *cloudstack.CreateServiceOfferingParams) { p.SetCpunumber(0); p.SetCpuspeed(1); p.SetMemory(512) },
			"Failed to create service offering fixed-zero-cpu: specify the cpu number value between 1 and 2147483647"},
		{"fixed-tiny-memory", func(p *cloudstack.CreateServiceOfferingParams) { p.SetCpunumber(1); p.SetCpuspeed(1); p.SetMemory(16) },
			"Failed to create service offering fixed-tiny-memory: specify the memory value between 32 and 2147483647 MB"},
		{"local-ha", func(p *cloudstack.CreateServiceOfferingParams) { p.SetStoragetype("local"); p.SetOfferha(true) },
			"HA offering with local storage is not supported. "},
		{"bad-storage", func(p *cloudstack.CreateServiceOfferingParams) { p.SetStoragetype("nfs") },
			"Invalid storage type nfs specified, valid types are: 'local' and 'shared'"},
		{"bad-cache", func(p *cloudstack.CreateServiceOfferingParams) { p.SetCachemode("fast") },
			"Invalid cache mode (fast). Please specify one of the following valid cache mode parameters: none, writeback, writethrough or hypervisor_default."},
		{"bad-root", func(p *cloudstack.CreateServiceOfferingParams) { p.SetRootdisksize(0) },
			"The Root disk size is of 0 GB but it must be greater than 0."},
		{"bad-iops", func(p *cloudstack.CreateServiceOfferingParams) {
			p.SetCustomizediops(false)
			p.SetMiniops(500)
			p.SetMaxiops(100)
		}, "The min IOPS must be less than or equal to the max IOPS."},
		{"gpu-half", func(p *cloudstack.CreateServiceOfferingParams) {
			p.SetServiceofferingdetails(map[string]string{"pciDevice": "Group of NVIDIA"})
		}, "Please specify the pciDevice and vgpuType correctly."},
	}
	for _, tc := range cases {
		p := base(tc.name)
		tc.set(p)
		_, err := cs.ServiceOffering.CreateServiceOffering(p)
		simtesting.WantAPIError(t, err, 431, tc.text)
	}
	l, err := cs.ServiceOffering.ListServiceOfferings(cs.ServiceOffering.NewListServiceOfferingsParams())
	if err != nil || l.Count != 4 {
		t.Fatalf("refused creations left offerings: %+v, %v", l, err)
	}
}

func TestCreateDiskOffering(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	fixed := cs.DiskOffering.NewCreateDiskOfferingParams("", "fifty")
	fixed.SetDisksize(50)
	fixed.SetTags("gold")
	f, err := cs.DiskOffering.CreateDiskOffering(fixed)
	if err != nil || f.Disksize != 50 || f.Iscustomized || f.Displaytext != "fifty" || f.Tags != "gold" {
		t.Fatalf("fixed disk offering = %+v, %v", f, err)
	}
	custom := cs.DiskOffering.NewCreateDiskOfferingParams("any size", "anysize")
	custom.SetCustomized(true)
	c, err := cs.DiskOffering.CreateDiskOffering(custom)
	if err != nil || !c.Iscustomized || c.Disksize != 0 {
		t.Fatalf("customized disk offering = %+v, %v", c, err)
	}
	refusals := []struct {
		set  func(p *cloudstack.CreateDiskOfferingParams)
		text string
	}{
		{func(p *cloudstack.CreateDiskOfferingParams) {}, "Disksize is required for a non-customized disk offering"},
		{func(p *cloudstack.CreateDiskOfferingParams) { p.SetCustomized(true); p.SetDisksize(5) },
			"Disksize is not allowed for a customized disk offering"},
		{func(p *cloudstack.CreateDiskOfferingParams) { p.SetDisksize(0) }, "Please specify a disk size of at least 1 GB."},
		{func(p *cloudstack.CreateDiskOfferingParams) { p.SetDisksize(2001) }, "The maximum size for a disk is 2000 GB."},
		{func(p *cloudstack.CreateDiskOfferingParams) {
			p.SetDisksize(5)
			p.SetIopsreadrate(100)
			p.SetIopsreadratemax(50)
		},
			"IOPS Read rate (100) cannot be greater than IOPS Read maximum rate (50)"},
	}
	for _, r := range refusals {
		p := cs.DiskOffering.NewCreateDiskOfferingParams("", "refused")
		r.set(p)
		_, err := cs.DiskOffering.CreateDiskOffering(p)
		simtesting.WantAPIError(t, err, 431, r.text)
	}
	if l, err := cs.DiskOffering.ListDiskOfferings(cs.DiskOffering.NewListDiskOfferingsParams()); err != nil || l.Count != 6 {
		t.Fatalf("disk offerings = %+v, %v", l, err)
	}
}

// Deleting an offering makes it Inactive: gone from the default list, shown
// with state=Inactive or all.
func TestDeleteOfferings(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	l, _ := cs.ServiceOffering.ListServiceOfferings(cs.ServiceOffering.NewListServiceOfferingsParams())
	medium := l.ServiceOfferings[1].Id
	if _, err := cs.ServiceOffering.DeleteServiceOffering(cs.ServiceOffering.NewDeleteServiceOfferingParams(medium)); err != nil {
		t.Fatalf("deleteServiceOffering: %v", err)
	}
	d, _ := cs.DiskOffering.ListDiskOfferings(cs.DiskOffering.NewListDiskOfferingsParams())
	if _, err := cs.DiskOffering.DeleteDiskOffering(cs.DiskOffering.NewDeleteDiskOfferingParams(d.DiskOfferings[0].Id)); err != nil {
		t.Fatalf("deleteDiskOffering: %v", err)
	}
	active, _ := cs.ServiceOffering.ListServiceOfferings(cs.ServiceOffering.NewListServiceOfferingsParams())
	ip := cs.ServiceOffering.NewListServiceOfferingsParams()
	ip.SetState("Inactive")
	inactive, _ := cs.ServiceOffering.ListServiceOfferings(ip)
	ap := cs.ServiceOffering.NewListServiceOfferingsParams()
	ap.SetState("all")
	all, _ := cs.ServiceOffering.ListServiceOfferings(ap)
	if active.Count != 3 || inactive.Count != 1 || inactive.ServiceOfferings[0].State != "Inactive" || all.Count != 4 {
		t.Fatalf("after delete: active %d, inactive %+v, all %d", active.Count, inactive, all.Count)
	}
	if d2, _ := cs.DiskOffering.ListDiskOfferings(cs.DiskOffering.NewListDiskOfferingsParams()); d2.Count != 3 {
		t.Fatalf("disk offerings after delete = %d", d2.Count)
	}
}

// TestCLICreateOfferings: an operator's createServiceOffering with the
// cloudstack CLI, and the constrained offering's details in the answer.
func TestCLICreateOfferings(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	out, errOut, err := simtesting.RunCLI(t, s, simtesting.Secret, "createServiceOffering", "name=cc-cli", "customized=true",
		"cpuspeed=1000", "mincpunumber=1", "maxcpunumber=2", "minmemory=512", "maxmemory=2048")
	if err != nil || !strings.Contains(out, `"maxcpunumber": "2"`) || !strings.Contains(out, `"iscustomized": true`) {
		t.Fatalf("createServiceOffering: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	out, errOut, err = simtesting.RunCLI(t, s, simtesting.Secret, "createDiskOffering", "name=d-cli", "disksize=7")
	if err != nil || !strings.Contains(out, `"disksize": 7`) {
		t.Fatalf("createDiskOffering: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}

// listServiceOfferings' cpunumber and memory filters read a constrained
// offering's limits; an open value without limits fits anything.
func TestListServiceOfferingsFiltersByCompute(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	names := func(cpu, mem, speed int) string {
		t.Helper()
		p := cs.ServiceOffering.NewListServiceOfferingsParams()
		if cpu > 0 {
			p.SetCpunumber(cpu)
		}
		if mem > 0 {
			p.SetMemory(mem)
		}
		if speed > 0 {
			p.SetCpuspeed(speed)
		}
		l, err := cs.ServiceOffering.ListServiceOfferings(p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range l.ServiceOfferings {
			out = append(out, o.Name)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		cpu, mem, speed int
		want            string
	}{
		{1, 0, 0, "Small Instance,Medium Instance,Custom,Custom Constrained"},
		{2, 0, 0, "Custom,Custom Constrained"},
		{3, 0, 0, "Custom"},
		{0, 1024, 0, "Medium Instance,Custom,Custom Constrained"},
		{0, 256, 0, "Small Instance,Medium Instance,Custom"},
		{0, 0, 800, "Medium Instance,Custom,Custom Constrained"},
		{0, 0, 1200, "Custom"},
	} {
		if got := names(tc.cpu, tc.mem, tc.speed); got != tc.want {
			t.Errorf("cpunumber=%d memory=%d cpuspeed=%d: %s, want %s", tc.cpu, tc.mem, tc.speed, got, tc.want)
		}
	}
}
