package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

func withCloudStack(extra string) string {
	return strings.Replace(minimal, `}}`, `,`+extra+`}}`, 1)
}

func TestCalculateTagsAndCustomDiskOfferingDecode(t *testing.T) {
	cfg, err := config.Parse([]byte(withCloudStack(`"default_custom_disk_offering":"shared.custom",
	  "calculate":{"compute_tags":["fast","Gold Tier"],"not_compute_tags":["gpu"],"disk_tags":["ssd"],"not_disk_tags":["slow","tape"]}`)))
	if err != nil {
		t.Fatal(err)
	}
	cs := cfg.CloudStack
	k := cs.Calculate
	if cs.DefaultCustomDiskOffering != "shared.custom" || !slices.Equal(k.ComputeTags, []string{"fast", "Gold Tier"}) ||
		!slices.Equal(k.NotComputeTags, []string{"gpu"}) || !slices.Equal(k.DiskTags, []string{"ssd"}) ||
		!slices.Equal(k.NotDiskTags, []string{"slow", "tape"}) {
		t.Fatalf("got %+v", cs)
	}
}

func TestCalculateDefaultsAreEmpty(t *testing.T) {
	cfg, err := config.Parse([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	k := cfg.CloudStack.Calculate
	if k.ComputeTags != nil || k.NotComputeTags != nil || k.DiskTags != nil || k.NotDiskTags != nil ||
		cfg.CloudStack.DefaultCustomDiskOffering != "" {
		t.Fatalf("got %+v", cfg.CloudStack)
	}
}

func TestCalculateRefusals(t *testing.T) {
	calc := func(body string) string { return withCloudStack(`"calculate":{` + body + `}`) }
	cases := map[string]struct{ json, want string }{
		"unknown key":           {calc(`"service_tags":["a"]`), "unknown key cloudstack.calculate.service_tags"},
		"not a list":            {calc(`"compute_tags":"fast"`), "compute_tags"},
		"not strings":           {calc(`"disk_tags":[1]`), "disk_tags"},
		"empty compute tag":     {calc(`"compute_tags":["fast",""]`), "cloudstack.calculate.compute_tags[1] is empty"},
		"blank not-disk tag":    {calc(`"not_disk_tags":["  "]`), "cloudstack.calculate.not_disk_tags[0] is empty"},
		"empty disk tag":        {calc(`"disk_tags":[""]`), "cloudstack.calculate.disk_tags[0] is empty"},
		"empty not-compute":     {calc(`"not_compute_tags":[""]`), "cloudstack.calculate.not_compute_tags[0] is empty"},
		"comma in a tag":        {calc(`"disk_tags":["ssd,fast"]`), `cloudstack.calculate.disk_tags[0] "ssd,fast" holds a comma`},
		"spaces around a tag":   {calc(`"compute_tags":[" fast"]`), `cloudstack.calculate.compute_tags[0] " fast" has surrounding spaces`},
		"wanted and refused":    {calc(`"compute_tags":["fast"],"not_compute_tags":["FAST"]`), `cloudstack.calculate.compute_tags and cloudstack.calculate.not_compute_tags both name "fast"`},
		"disk both ways":        {calc(`"disk_tags":["ssd"],"not_disk_tags":["ssd"]`), "cloudstack.calculate.disk_tags and cloudstack.calculate.not_disk_tags"},
		"blank custom offering": {withCloudStack(`"default_custom_disk_offering":" "`), "cloudstack.default_custom_disk_offering is blank"},
		"custom offering type":  {withCloudStack(`"default_custom_disk_offering":["a"]`), "default_custom_disk_offering"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := config.Parse([]byte(c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestCalculateAcceptsEdges: a compute tag may also be a disk tag, tags may
// hold inner spaces, and empty lists mean no filter.
func TestCalculateAcceptsEdges(t *testing.T) {
	for name, body := range map[string]string{
		"same tag for compute and disk": `"compute_tags":["ssd"],"disk_tags":["ssd"]`,
		"refused compute, wanted disk":  `"not_compute_tags":["ssd"],"disk_tags":["ssd"]`,
		"inner space":                   `"compute_tags":["gold tier"]`,
		"empty lists":                   `"compute_tags":[],"not_compute_tags":[],"disk_tags":[],"not_disk_tags":[]`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := config.Parse([]byte(withCloudStack(`"calculate":{` + body + `}`))); err != nil {
				t.Fatal(err)
			}
		})
	}
}
