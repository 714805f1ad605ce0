package offering_test

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// Tags as createServiceOffering and createDiskOffering keep them
// (StringUtils.cleanupTags for storage and disk tags, host tags as given)
// and the list responses answer them.
func TestOfferingTagsAsCloudStackKeepsThem(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	for i, tc := range []struct{ given, want string }{
		{"ssd", "ssd"},
		{" ssd , Fast Tier ", "ssd,Fast Tier"},
		{"a, ,b", "a,,b"},
		{",a", ",a"},
		{"a,b,,", "a,b"},
		{" , ", ","},
	} {
		so := cs.ServiceOffering.NewCreateServiceOfferingParams("", "so-"+string(rune('a'+i)))
		so.SetCpunumber(1)
		so.SetCpuspeed(500)
		so.SetMemory(512)
		so.SetTags(tc.given)
		so.SetHosttags(tc.given)
		created, err := cs.ServiceOffering.CreateServiceOffering(so)
		if err != nil || created.Storagetags != tc.want || created.Hosttags != tc.given {
			t.Errorf("service offering tags %q: got storagetags %q hosttags %q, %v; want %q and %q as given",
				tc.given, created.Storagetags, created.Hosttags, err, tc.want, tc.given)
		}
		do := cs.DiskOffering.NewCreateDiskOfferingParams("", "do-"+string(rune('a'+i)))
		do.SetDisksize(5)
		do.SetTags(tc.given)
		d, err := cs.DiskOffering.CreateDiskOffering(do)
		if err != nil || d.Tags != tc.want {
			t.Errorf("disk offering tags %q: got %q, %v; want %q", tc.given, d.Tags, err, tc.want)
		}
		l, err := cs.DiskOffering.ListDiskOfferings(cs.DiskOffering.NewListDiskOfferingsParams())
		if err != nil || l.DiskOfferings[len(l.DiskOfferings)-1].Tags != tc.want {
			t.Errorf("listDiskOfferings does not answer the tags %q: %v", tc.want, err)
		}
	}
	for _, commas := range []string{",", ",,,"} {
		so := cs.ServiceOffering.NewCreateServiceOfferingParams("", "commas")
		so.SetCpunumber(1)
		so.SetCpuspeed(500)
		so.SetMemory(512)
		so.SetTags(commas)
		if _, err := cs.ServiceOffering.CreateServiceOffering(so); err == nil || !strings.Contains(err.Error(), "530") {
			t.Errorf("service offering tags %q: %v, want cleanupTags' 530", commas, err)
		}
		do := cs.DiskOffering.NewCreateDiskOfferingParams("", "commas")
		do.SetDisksize(5)
		do.SetTags(commas)
		if _, err := cs.DiskOffering.CreateDiskOffering(do); err == nil || !strings.Contains(err.Error(), "530") {
			t.Errorf("disk offering tags %q: %v, want cleanupTags' 530", commas, err)
		}
	}
}

// An empty tags parameter is kept as an empty string, which CloudStack
// answers; without the parameter there is no tags field at all.
func TestCLIOfferingTagsPresentWhenGiven(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	for _, tc := range []struct {
		args    []string
		present []string
		absent  []string
	}{
		{[]string{"createDiskOffering", "name=d-empty", "disksize=5", "tags="}, []string{`"tags": ""`}, nil},
		{[]string{"createDiskOffering", "name=d-none", "disksize=5"}, nil, []string{`"tags"`}},
		{[]string{"createServiceOffering", "name=s-tagged", "cpunumber=1", "cpuspeed=500", "memory=512", "tags=ssd", "hosttags=h1"},
			[]string{`"storagetags": "ssd"`, `"hosttags": "h1"`}, nil},
		{[]string{"createServiceOffering", "name=s-none", "cpunumber=1", "cpuspeed=500", "memory=512"},
			nil, []string{`"storagetags"`, `"hosttags"`}},
	} {
		out, errOut, err := simtesting.RunCLI(t, s, simtesting.Secret, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, errOut)
		}
		for _, want := range tc.present {
			if !strings.Contains(out, want) {
				t.Errorf("%v: no %s in\n%s", tc.args, want, out)
			}
		}
		for _, unwanted := range tc.absent {
			if strings.Contains(out, unwanted) {
				t.Errorf("%v: %s in\n%s", tc.args, unwanted, out)
			}
		}
	}
	out, _, err := simtesting.RunCLI(t, s, simtesting.Secret, "listDiskOfferings", "name=d-empty")
	if err != nil || !strings.Contains(out, `"tags": ""`) {
		t.Errorf("listDiskOfferings: %v\n%s", err, out)
	}
}
