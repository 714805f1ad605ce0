package manifests_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// TestEveryConfigKeyIsAJobProperty: each cpi.json key the CPI knows (the
// leaves of config.Config) is a described property of the same path in the
// job's spec, and cpi.json.erb writes it.
func TestEveryConfigKeyIsAJobProperty(t *testing.T) {
	job := filepath.Join(root, "jobs", "cloudstack_cpi")
	spec, err := os.ReadFile(filepath.Join(job, "spec"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join(job, "templates", "cpi.json.erb"))
	if err != nil {
		t.Fatal(err)
	}
	described := map[string]bool{}
	property := regexp.MustCompile(`(?m)^  ([a-z_.]+):\n    description: "?\S`)
	for _, m := range property.FindAllStringSubmatch(string(spec), -1) {
		described[m[1]] = true
	}
	keys := configKeys(reflect.TypeOf(config.Config{}), "")
	if len(keys) < 40 {
		t.Fatalf("found only %d config keys: %v", len(keys), keys)
	}
	for _, key := range keys {
		if !described[key] {
			t.Errorf("cpi.json key %s is not a described property of jobs/cloudstack_cpi/spec", key)
		}
		if !strings.Contains(string(tmpl), "'"+key+"' =>") {
			t.Errorf("cpi.json.erb does not write %s", key)
		}
	}
}

// configKeys lists the JSON paths of a config struct's leaves.
func configKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		path := prefix + name
		if ft := f.Type; ft.Kind() == reflect.Struct {
			keys = append(keys, configKeys(ft, path+".")...)
			continue
		}
		keys = append(keys, path)
	}
	return keys
}
