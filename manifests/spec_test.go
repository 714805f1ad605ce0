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
	described := describedProperties(string(spec))
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

// describedProperties are the job spec's properties that have a description.
func describedProperties(spec string) map[string]bool {
	described := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z_.-]+):\n    description: "?\S`).FindAllStringSubmatch(spec, -1) {
		described[m[1]] = true
	}
	return described
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

// The earlier CPIs' job properties: every property of the Java CPI's
// release spec (bosh-cloudstack-cpi-release @aea807f, plus the
// calculate_vm_cloud_properties tags cpi-core reads) and of the Go CPI's
// (bosh-go-cpi-cloudstack @fb81df8), and bosh-deployment's proxy_*.
var earlierProperties = map[string][]string{
	"Java": {"cloudstack.endpoint", "cloudstack.api_key", "cloudstack.secret_access_key", "cloudstack.default_key_name",
		"cloudstack.private_key", "cloudstack.state_timeout", "cloudstack.state_timeout_volume",
		"cloudstack.stemcell_public_visibility", "cloudstack.stemcell_requires_hvm", "cloudstack.stemcell_os_type",
		"cloudstack.stemcell_publish_timeout", "cloudstack.default_zone", "cloudstack.proxy_host", "cloudstack.proxy_port",
		"cloudstack.proxy_user", "cloudstack.proxy_password", "cpi.heap_size", "cpi.host", "cpi.port", "cpi.core.user",
		"cpi.core.password", "cpi.webdav_host", "cpi.webdav_port", "cpi.webdav_directory", "cpi.default_disk_offering",
		"cpi.default_ephemeral_disk_offering", "cpi.vm_create_delay", "cpi.vm_expunge_delay", "cpi.force_expunge",
		"cpi.registry.endpoint", "cpi.registry.user", "cpi.registry.password", "cpi.blobstore.provider",
		"cpi.blobstore.path", "cpi.blobstore.address", "cpi.blobstore.port", "cpi.blobstore.agent.user",
		"cpi.blobstore.agent.password", "cpi.ntp", "cpi.use_dhcp", "cpi.agent.mbus", "cpi.lightstemcell.network_name",
		"cpi.lightstemcell.instance_type", "cpi.zipkin.enabled", "cpi.zipkin.sampler-percentage", "cpi.zipkin.base-url",
		"cpi.calculate_vm_cloud_properties.disk.tags", "cpi.calculate_vm_cloud_properties.compute.tags"},
	"Go": {"cloudstack.endpoint", "cloudstack.api_key", "cloudstack.secret_access_key", "cloudstack.default_zone",
		"cloudstack.skip_verify_ssl", "cloudstack.expunge_vm", "cloudstack.timeout.global", "cloudstack.timeout.reboot_vm",
		"cloudstack.timeout.create_vm", "cloudstack.timeout.delete_vm", "cloudstack.timeout.stop_vm",
		"cloudstack.timeout.create_volume", "cloudstack.timeout.delete_volume", "cloudstack.timeout.resize_volume",
		"cloudstack.timeout.poll_template", "cloudstack.timeout.snapshot_volume", "cloudstack.timeout.delete_snapshot_volume",
		"cloudstack.timeout.attach_volume", "cloudstack.timeout.detach_volume", "director.name", "cloudstack.clean_disk",
		"cloudstack.interval_clean_disk", "cloudstack.calculate.disk_tags", "cloudstack.calculate.not_disk_tags",
		"cloudstack.calculate.compute_tags", "cloudstack.calculate.not_compute_tags", "cloudstack.enable_auto_anti_affinity",
		"cloudstack.auto_anti_affinity_type", "cloudstack.default_key_name", "cloudstack.private_key",
		"cloudstack.default_offer.disk", "cloudstack.default_offer.ephemeral_disk", "cloudstack.default_offer.custom_disk",
		"cloudstack.stemcell.public_visibility", "cloudstack.stemcell.requires_hvm", "cloudstack.stemcell.os_type", "ntp",
		"agent.mbus", "agent.env_service", "agent.blobstore.provider", "agent.blobstore.options", "registry.host",
		"registry.port", "registry.username", "registry.password", "env.http_proxy", "env.https_proxy", "env.no_proxy",
		"cloudstack.proxy_host", "cloudstack.proxy_port", "cloudstack.proxy_user", "cloudstack.proxy_password"},
}

// TestEarlierPropertiesAreDescribedAndDocumented: each earlier property is
// a described property of the job (so BOSH takes it and the spec says what
// it becomes) and a row of docs/operators/migration.md's table for its CPI.
func TestEarlierPropertiesAreDescribedAndDocumented(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join(root, "jobs", "cloudstack_cpi", "spec"))
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile(filepath.Join(root, "docs", "operators", "migration.md"))
	if err != nil {
		t.Fatal(err)
	}
	described := describedProperties(string(spec))
	for cpi, properties := range earlierProperties {
		table := section(string(guide), "### From the "+cpi+" CPI")
		if table == "" {
			t.Fatalf("docs/operators/migration.md has no section \"From the %s CPI\"", cpi)
		}
		for _, p := range properties {
			if !described[p] {
				t.Errorf("the %s CPI's %s is not a described property of jobs/cloudstack_cpi/spec", cpi, p)
			}
			if !documented(table, p) {
				t.Errorf("docs/operators/migration.md's table for the %s CPI has no row for %s", cpi, p)
			}
		}
	}
}

// section is the text from heading to the next heading of its level or above.
func section(doc, heading string) string {
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		return ""
	}
	if i := regexp.MustCompile(`\n#{1,3} `).FindStringIndex(rest); i != nil {
		rest = rest[:i[0]]
	}
	return rest
}

// documented: a table row's first cell names the property, in full
// (`cloudstack.proxy_host`) or, without a dot, under the section of the
// full name before it (`cloudstack.proxy_host`, `proxy_port`).
func documented(table, property string) bool {
	quoted := regexp.MustCompile("`([^`:]+)")
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		parent := ""
		for _, m := range quoted.FindAllStringSubmatch(cells[1], -1) {
			name := strings.TrimSpace(m[1])
			if i := strings.LastIndex(name, "."); i >= 0 {
				parent = name[:i+1]
			} else {
				name = parent + name
			}
			if name == property {
				return true
			}
		}
	}
	return false
}
