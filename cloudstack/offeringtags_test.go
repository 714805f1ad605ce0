package cloudstack_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// Every tags value ServiceOfferingJoinDaoImpl and DiskOfferingJoinDaoImpl
// can answer: absent (null is not serialized), empty (a blank tags
// parameter), one tag, several, and what cleanupTags keeps of "a, ,b"
// (an empty entry between two commas) and of ",a" (a leading one); and,
// though cleanupTags trims storage tags, spaces around tags.
var tagValues = []struct {
	json string
	want []string
}{
	{``, nil},
	{`,"%s":""`, nil},
	{`,"%s":"ssd"`, []string{"ssd"}},
	{`,"%s":"ssd,Fast Tier"`, []string{"ssd", "Fast Tier"}},
	{`,"%s":"a,,b"`, []string{"a", "b"}},
	{`,"%s":",a"`, []string{"a"}},
	{`,"%s":" gold , silver "`, []string{"gold", "silver"}},
}

func taggedOfferingsServer(t *testing.T) *cloudstack.Client {
	t.Helper()
	list := func(key, field string, extra string) string {
		body := ""
		for i, v := range tagValues {
			if i > 0 {
				body += ","
			}
			tags := v.json
			if tags != "" {
				tags = fmt.Sprintf(tags, field)
			}
			body += fmt.Sprintf(`{"id":"o%d","name":"O%d"%s%s}`, i, i, extra, tags)
		}
		return fmt.Sprintf(`{"list%ssresponse":{"count":%d,"%s":[%s]}}`, key, len(tagValues), key, body)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		switch r.Form.Get("command") {
		case "listServiceOfferings":
			fmt.Fprint(w, list("serviceoffering", "storagetags", `,"cpunumber":1,"cpuspeed":500,"memory":512,"hosttags":"not-this"`))
		case "listDiskOfferings":
			fmt.Fprint(w, list("diskoffering", "tags", `,"disksize":5`))
		default:
			http.Error(w, "unexpected request", http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	return c
}

func TestOfferingTagsAsCloudStackAnswersThem(t *testing.T) {
	c := taggedOfferingsServer(t)
	compute, err := c.ServiceOfferings()
	if err != nil || len(compute) != len(tagValues) {
		t.Fatalf("compute offerings %+v, %v", compute, err)
	}
	disks, err := c.DiskOfferings()
	if err != nil || len(disks) != len(tagValues) {
		t.Fatalf("disk offerings %+v, %v", disks, err)
	}
	for i, v := range tagValues {
		if got := compute[i].StorageTags.List(); !slices.Equal(got, v.want) {
			t.Errorf("storagetags %q: got %q, want %q", v.json, got, v.want)
		}
		if got := disks[i].Tags.List(); !slices.Equal(got, v.want) {
			t.Errorf("disk offering tags %q: got %q, want %q", v.json, got, v.want)
		}
	}
	found, err := c.FindDiskOffering("O3")
	if err != nil || !found.Tags.Has("fast tier") {
		t.Fatalf("FindDiskOffering keeps the tags: %+v, %v", found, err)
	}
}

func TestOfferingTagsCompareWholeTagsWithoutCase(t *testing.T) {
	tags := cloudstack.NewOfferingTags("SSD,fast tier")
	for tag, want := range map[string]bool{"ssd": true, "SSD": true, "Fast Tier": true, "fast": false, "ss": false, "tier": false} {
		if tags.Has(tag) != want {
			t.Errorf("Has(%q) = %v", tag, !want)
		}
	}
	if cloudstack.NewOfferingTags("").Has("") || cloudstack.NewOfferingTags("a,,b").Has("") {
		t.Error("no offering carries an empty tag")
	}
	if s := cloudstack.NewOfferingTags("").String(); s != "no tags" {
		t.Errorf("String of none = %q", s)
	}
	if s := tags.String(); s != `tags ["SSD" "fast tier"]` {
		t.Errorf("String = %q", s)
	}
}

func TestPickCustomDiskOffering(t *testing.T) {
	fixed := cloudstack.DiskOffering{Name: "Small", SizeGB: 5}
	a := cloudstack.DiskOffering{Name: "a", Customized: true}
	custom := cloudstack.DiskOffering{Name: "Custom", Customized: true}
	if o, err := cloudstack.PickCustomDiskOffering([]cloudstack.DiskOffering{fixed, a}); err != nil || o.Name != "a" {
		t.Errorf("the only customized one: %+v, %v", o, err)
	}
	if o, err := cloudstack.PickCustomDiskOffering([]cloudstack.DiskOffering{a, custom, fixed}); err != nil || o.Name != "Custom" {
		t.Errorf("Custom among several: %+v, %v", o, err)
	}
	b := cloudstack.DiskOffering{Name: "b", Customized: true}
	if _, err := cloudstack.PickCustomDiskOffering([]cloudstack.DiskOffering{a, b}); err == nil {
		t.Error("two customized ones, none named Custom, must be an error")
	}
	if _, err := cloudstack.PickCustomDiskOffering([]cloudstack.DiskOffering{fixed}); err == nil {
		t.Error("no customized one must be an error")
	}
}
