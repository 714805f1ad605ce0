package manifests_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// The earlier CPIs' deployments, rendered as their operators wrote them:
// the Java CPI's micro-bosh manifest (a v1 manifest, in the form of that
// CPI's README: the project's own ../testdata/java-cpi) and
// bosh-deployment's bosh.yml with its cloudstack ops files, with only the
// release swapped.

var javaVars = map[string]string{
	"director_ip":                  "10.0.0.140",
	"bootstrap_ip":                 "10.0.0.5",
	"cloudstack_api_key":           "api-key",
	"cloudstack_secret_access_key": "secret-key",
	"cloudstack_zone":              "zone1",
}

func TestJavaCPIMicroBoshRenders(t *testing.T) {
	fixture := filepath.Join(root, "testdata", "java-cpi", "micro-bosh.yml")
	manifest := filepath.Join(t.TempDir(), "manifest.yml")
	if err := os.WriteFile(manifest, []byte(boshInt(t, fixture, nil, javaVars, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	d, c := render(t, manifest, "director"), render(t, manifest, "cloud_provider")
	for _, r := range []rendered{d, c} {
		r.accepted(t)
		want(t, r.config, "cloudstack.endpoint", "http://192.0.2.10:8080/client/api")
		want(t, r.config, "cloudstack.default_zone", "zone1")
		want(t, r.config, "cloudstack.default_key_pair", "bosh-keypair")
		want(t, r.config, "cloudstack.default_ephemeral_disk_offering", "DO4 - Small SSD")
		want(t, r.config, "agent.ntp", []any{"10.20.0.123", "10.20.0.124"}) // ntp; cpi.ntp "" is none
		want(t, r.config, "registry.username", "admin")
		want(t, r.config, "registry.password", "admin")
		want(t, r.config, "stemcell.publish", "webdav")
		want(t, r.config, "webdav.listen", "0.0.0.0:8080")
		// proxy_host "" is no proxy; private_key, state_timeout* and
		// stemcell_public_visibility: true are ignored.
		for _, key := range []string{"cloudstack.http_proxy", "stemcell.public", "cloudstack.job_timeout", "stemcell.timeout"} {
			absent(t, r.config, key)
		}
	}
	want(t, d.config, "cloudstack.default_disk_offering", "DO3n - 20 GiB")
	want(t, d.config, "agent.mbus", "nats://nats:nats-secret@10.0.0.140:4222")
	want(t, d.config, "agent.blobstore", map[string]any{"provider": "dav", "options": map[string]any{
		"endpoint": "http://10.0.0.140:25250", "user": "agent", "password": "agent-secret"}})
	want(t, d.config, "registry.endpoint", "http://10.0.0.140:8080")
	want(t, d.config, "registry.listen", "0.0.0.0:8080")
	want(t, d.config, "webdav.public_url", "http://10.0.0.140:8080")
	want(t, d.config, "webdav.dir", "/var/vcap/store/cloudstack_cpi/webdav")
	want(t, d.config, "webdav.daemon_url", "http://127.0.0.1:8080")
	// The Java CPI served its registry and WebDAV on one port: serve does too.
	cfg, err := config.ParseServe([]byte(d.file(t, "config/cpi.json")))
	if err != nil {
		t.Fatalf("serve refuses the director's cpi.json: %v", err)
	}
	if !cfg.SharedListener() {
		t.Errorf("serve would not share one listener between registry.listen %s and webdav.listen %s",
			cfg.Registry.Listen, cfg.WebDAV.Listen)
	}
	if !strings.Contains(d.file(t, "monit"), "check process cloudstack_cpi") {
		t.Errorf("monit does not run serve for the Java CPI's registry and WebDAV:\n%s", d.file(t, "monit"))
	}
	for _, dir := range []string{"/var/vcap/store/cloudstack_cpi/registry", "/var/vcap/store/cloudstack_cpi/webdav"} {
		if !strings.Contains(d.file(t, "bin/cpi_ctl"), dir) {
			t.Errorf("bin/cpi_ctl does not make %s:\n%s", dir, d.file(t, "bin/cpi_ctl"))
		}
	}

	// create-env: create-env's agent blobstore from bosh-init's
	// blobstore.{provider: local, path}, WebDAV served by each call.
	want(t, c.config, "cloudstack.default_disk_offering", "DOC - custom size")
	want(t, c.config, "agent.mbus", "https://mbus:mbus-secret@10.0.0.140:6868")
	want(t, c.config, "agent.blobstore", map[string]any{"provider": "local",
		"options": map[string]any{"blobstore_path": "/var/vcap/micro_bosh/data/cache"}})
	want(t, c.config, "registry.endpoint", "http://10.0.0.5:8080")
	want(t, c.config, "webdav.public_url", "http://10.0.0.5:8080")
	absent(t, c.config, "webdav.dir")
	absent(t, c.config, "registry.listen") // 8080 is create_stemcell's
}

// TestJavaCPIDirectorDeploymentRenders: the Java CPI's README's director
// deployment, which relies on that CPI's defaults for the WebDAV port and
// directory and the registry's credentials.
func TestJavaCPIDirectorDeploymentRenders(t *testing.T) {
	fixture := filepath.Join(root, "testdata", "java-cpi", "director-deployment.yml")
	vars := map[string]string{"cloudstack_endpoint": "https://cloudstack.example/client/api", "cloudstack_api_key": "k",
		"cloudstack_secret_access_key": "s", "default_key_name": "bosh", "private_key_path": "/root/.ssh/id_rsa",
		"cloudstack_zone": "zone1", "proxy_host": "proxy.example", "proxy_port": "3128", "proxy_user": "ops",
		"proxy_password": "p@ss", "director_static_ip": "10.0.0.141", "director_ip": "10.0.0.140"}
	manifest := filepath.Join(t.TempDir(), "manifest.yml")
	if err := os.WriteFile(manifest, []byte(boshInt(t, fixture, nil, vars, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := tryRenderGroup(t, manifest, "bosh_apidata")
	if err != nil {
		t.Fatal(err)
	}
	r.accepted(t)
	for key, value := range map[string]any{
		"cloudstack.default_key_pair": "bosh", "cloudstack.http_proxy": "http://ops:p%40ss@proxy.example:3128",
		"cloudstack.default_disk_offering": "DO4 - Small SSD", "stemcell.publish": "webdav",
		"webdav.public_url": "http://10.0.0.141:8080", "webdav.listen": "0.0.0.0:8080",
		"registry.endpoint": "http://10.0.0.140:8080", "registry.username": "admin", "registry.password": "admin",
		"agent.mbus": "nats://nats:nats-secret@10.0.0.140:4222", "agent.blobstore.options.endpoint": "http://10.0.0.141:25251",
	} {
		want(t, r.config, key, value)
	}
	for _, key := range []string{"registry.listen", "webdav.dir", "agent.ntp", "cloudstack.job_timeout"} {
		absent(t, r.config, key)
	}
}

// swapRelease is the only change an operator of the Go CPI makes to
// bosh-deployment's manifest: the release, and the release of the
// cloudstack_cpi job and of cloud_provider.template.
const swapRelease = `
- type: replace
  path: /releases/name=bosh-go-cpi-cloudstack
  value: {name: bosh-cloudstack-cpi, url: ((cloudstack_cpi_release_url))}
- type: replace
  path: /instance_groups/name=bosh/jobs/name=cloudstack_cpi/release
  value: bosh-cloudstack-cpi
- type: replace
  path: /cloud_provider/template/release
  value: bosh-cloudstack-cpi
`

func TestGoCPIBoshDeploymentRenders(t *testing.T) {
	swap := filepath.Join(t.TempDir(), "swap-release.yml")
	if err := os.WriteFile(swap, []byte(swapRelease), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := interpolate(t, []string{"bosh-deployment:cloudstack/cpi.yml", swap, "bosh-deployment:cloudstack/auto-anti-affinity.yml",
		"bosh-deployment:misc/proxy.yml"}, merge(baseVars, proxyVars))
	if got := bosh(t, "int", manifest, "--path", "/cloud_provider/template/release"); got != "bosh-cloudstack-cpi" {
		t.Fatalf("cloud_provider.template.release is %s", got)
	}
	d, c := render(t, manifest, "director"), render(t, manifest, "cloud_provider")
	for _, r := range []rendered{d, c} {
		r.accepted(t)
		want(t, r.config, "cloudstack.endpoint", baseVars["cloudstack_endpoint"])
		want(t, r.config, "cloudstack.default_zone", baseVars["cloudstack_zone"])
		want(t, r.config, "cloudstack.default_key_pair", baseVars["cloudstack_default_key_name"])
		for _, key := range []string{"registry", "webdav", "stemcell"} {
			absent(t, r.config, key)
		}
	}
	checkProxy(t, d, c)
	want(t, d.config, "cloudstack.auto_anti_affinity", true) // enable_auto_anti_affinity
	absent(t, c.config, "cloudstack.auto_anti_affinity")
	// The ops file's agent.blobstore, as given, over bosh.yml's blobstore.*.
	want(t, d.config, "agent.blobstore.provider", "dav")
	want(t, d.config, "agent.blobstore.options.endpoint", "http://10.1.1.10:25250")
	want(t, d.config, "agent.blobstore.options.password", d.credential(t, "blobstore_agent_password"))
	want(t, d.config, "agent.blobstore.options.tls.cert.ca", d.credential(t, "blobstore_ca.certificate"))
	want(t, d.config, "agent.mbus", "nats://10.1.1.10:4222")
	want(t, c.config, "agent.blobstore.provider", "local")
	want(t, c.config, "agent.blobstore.options.blobstore_path", "/var/vcap/micro_bosh/data/cache")
}

// TestEarlierPropertiesRenderOntoTheirKeys sets, on top of cpi.yml, the
// earlier CPIs' properties whose rendering is more than a rename.
func TestEarlierPropertiesRenderOntoTheirKeys(t *testing.T) {
	manifest := interpolate(t, []string{"cpi.yml"}, baseVars)
	cases := []struct {
		name string
		set  map[string]any
		want map[string]any // cpi.json key → value; nil: absent
	}{
		{"renames", map[string]any{
			"cloudstack.default_key_pair":                    nil,
			"cloudstack.default_key_name":                    "bosh-key",
			"cloudstack.default_offer.disk":                  "DO 10G",
			"cloudstack.default_offer.ephemeral_disk":        "DO small",
			"cloudstack.default_offer.custom_disk":           "shared.custom",
			"cloudstack.stemcell.requires_hvm":               false,
			"cloudstack.stemcell_os_type":                    "Other PV (64-bit)",
			"cloudstack.enable_auto_anti_affinity":           true,
			"cloudstack.auto_anti_affinity_type":             "non-strict host anti-affinity",
			"cpi.force_expunge":                              false,
			"ntp":                                            []string{"10.0.0.1"},
			"cpi.calculate_vm_cloud_properties.compute.tags": "fast, ssd",
			"cpi.calculate_vm_cloud_properties.disk.tags":    []string{"gold"},
			"cloudstack.calculate.not_disk_tags":             []string{"slow"},
		}, map[string]any{
			"cloudstack.default_key_pair":                "bosh-key",
			"cloudstack.default_disk_offering":           "DO 10G",
			"cloudstack.default_ephemeral_disk_offering": "DO small",
			"cloudstack.default_custom_disk_offering":    "shared.custom",
			"stemcell.requires_hvm":                      false,
			"stemcell.os_type":                           "Other PV (64-bit)",
			"cloudstack.auto_anti_affinity":              true,
			"cloudstack.affinity_group_type":             "non-strict host anti-affinity",
			"cloudstack.expunge_vm":                      false,
			"agent.ntp":                                  []any{"10.0.0.1"},
			"cloudstack.calculate.compute_tags":          []any{"fast", "ssd"},
			"cloudstack.calculate.disk_tags":             []any{"gold"},
			"cloudstack.calculate.not_disk_tags":         []any{"slow"},
		}},
		{"timeouts lengthen the bounds", map[string]any{
			"cloudstack.timeout.create_vm": 600, "cloudstack.timeout.attach_volume": 36000,
			"cloudstack.timeout.poll_template": 7200, "cloudstack.stemcell_publish_timeout": 30,
		}, map[string]any{"cloudstack.job_timeout": "36000s", "stemcell.timeout": "7200s"}},
		{"java publish timeout in minutes", map[string]any{"cloudstack.stemcell_publish_timeout": 90},
			map[string]any{"stemcell.timeout": "5400s"}},
		{"timeouts never shorten the bounds", map[string]any{
			"cloudstack.timeout.global": 60, "cloudstack.timeout.delete_vm": 1800, "cloudstack.timeout.poll_template": 300,
		}, map[string]any{"cloudstack.job_timeout": nil, "stemcell.timeout": nil}},
		{"own bound as long as the earlier ones", map[string]any{
			"cloudstack.job_timeout": "2h", "cloudstack.timeout.create_vm": 7200,
		}, map[string]any{"cloudstack.job_timeout": "2h"}},
		{"proxy with escaped user info", map[string]any{
			"cloudstack.proxy_host": "proxy.example", "cloudstack.proxy_port": 3128,
			"cloudstack.proxy_user": "ops@corp", "cloudstack.proxy_password": "p:w/d%",
		}, map[string]any{"cloudstack.http_proxy": "http://ops%40corp:p%3Aw%2Fd%25@proxy.example:3128"}},
		{"proxy port defaults as the Java CPI's", map[string]any{"cloudstack.proxy_host": "10.0.0.3"},
			map[string]any{"cloudstack.http_proxy": "http://10.0.0.3:8080"}},
		{"empty proxy host is no proxy", map[string]any{
			"cloudstack.proxy_host": "", "cloudstack.proxy_port": 8080, "cloudstack.proxy_user": "xx",
		}, map[string]any{"cloudstack.http_proxy": nil}},
		{"go registry", map[string]any{"registry.host": "10.1.1.10", "registry.username": "r", "registry.password": "p"},
			map[string]any{"registry.endpoint": "http://10.1.1.10:6901", "registry.listen": nil}},
		{"java registry with its credentials in the URL", map[string]any{"cpi.registry.endpoint": "http://admin:s%3Acret@10.1.1.10:8080"},
			map[string]any{"registry.endpoint": "http://admin:s%3Acret@10.1.1.10:8080", "registry.username": "admin",
				"registry.password": "s:cret", "registry.listen": "0.0.0.0:8080"}},
		{"java registry with its release's default credentials", map[string]any{"cpi.registry.endpoint": "http://10.1.1.10:8080"},
			map[string]any{"registry.username": "admin", "registry.password": "admin", "registry.listen": "0.0.0.0:8080"}},
		{"java registry on the port create_stemcell serves on", map[string]any{"cpi.registry.endpoint": "http://10.1.1.10:8080",
			"cpi.webdav_host": "10.1.1.10"}, map[string]any{"registry.endpoint": "http://10.1.1.10:8080",
			"webdav.listen": "0.0.0.0:8080", "registry.listen": nil}},
		{"java webdav without a directory", map[string]any{"cpi.webdav_host": "203.0.113.5", "cpi.webdav_port": "8081"},
			map[string]any{"stemcell.publish": "webdav", "webdav.public_url": "http://203.0.113.5:8081",
				"webdav.listen": "0.0.0.0:8081", "webdav.dir": nil, "webdav.daemon_url": nil}},
		{"java server port", map[string]any{"cpi.port": 8080, "cpi.webdav_host": "203.0.113.5", "cpi.webdav_port": 80,
			"cpi.webdav_directory": "/var/vcap/store/w", "cpi.registry.endpoint": "http://a:b@203.0.113.5:80"},
			map[string]any{"webdav.public_url": "http://203.0.113.5:80", "webdav.listen": "0.0.0.0:8080",
				"webdav.daemon_url": "http://127.0.0.1:8080", "registry.listen": "0.0.0.0:8080"}},
		{"java local blobstore", map[string]any{"cpi.blobstore.provider": "local", "cpi.blobstore.path": "/var/vcap/cache"},
			map[string]any{"agent.blobstore": map[string]any{"provider": "local",
				"options": map[string]any{"blobstore_path": "/var/vcap/cache"}}}},
		{"go agent blobstore equal to the java one", map[string]any{
			"cpi.blobstore.provider": "dav", "cpi.blobstore.address": "10.1.1.10", "cpi.blobstore.port": 25250,
			"agent.blobstore.provider": "dav", "agent.blobstore.options": map[string]any{"endpoint": "http://10.1.1.10:25250"},
		}, map[string]any{"agent.blobstore.options": map[string]any{"endpoint": "http://10.1.1.10:25250"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := render(t, withProperties(t, manifest, c.set), "director")
			r.accepted(t)
			for key, value := range c.want {
				if value == nil {
					absent(t, r.config, key)
				} else {
					want(t, r.config, key, value)
				}
			}
		})
	}
}

// TestProxyURLKeepsItsUserInfo: the escaped user info reads back as given.
func TestProxyURLKeepsItsUserInfo(t *testing.T) {
	manifest := withProperties(t, interpolate(t, []string{"cpi.yml"}, baseVars), map[string]any{
		"cloudstack.proxy_host": "proxy.example", "cloudstack.proxy_user": "ops@corp", "cloudstack.proxy_password": "p:w/d%"})
	cfg, err := config.Parse([]byte(render(t, manifest, "director").file(t, "config/cpi.json")))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(cfg.CloudStack.HTTPProxy)
	if err != nil {
		t.Fatal(err)
	}
	if password, _ := u.User.Password(); u.User.Username() != "ops@corp" || password != "p:w/d%" || u.Host != "proxy.example:8080" {
		t.Errorf("the proxy URL reads back as user %q password %q host %q", u.User.Username(), password, u.Host)
	}
}

// TestIgnoredEarlierPropertiesChangeNothing: every property documented as
// ignored, set, renders the same cpi.json byte for byte.
func TestIgnoredEarlierPropertiesChangeNothing(t *testing.T) {
	manifest := interpolate(t, []string{"cpi.yml"}, baseVars)
	before := render(t, manifest, "director").file(t, "config/cpi.json")
	ignored := map[string]any{
		"cloudstack.private_key": "-----BEGIN RSA PRIVATE KEY-----", "cloudstack.state_timeout": 600,
		"cloudstack.state_timeout_volume": 600, "cloudstack.stemcell_public_visibility": true,
		"cloudstack.stemcell.public_visibility": true, "cpi.heap_size": "512M", "cpi.host": "127.0.0.1", "cpi.port": 8080,
		"cpi.core.user": "cpi", "cpi.core.password": "cpi", "cpi.vm_create_delay": 10, "cpi.vm_expunge_delay": 30,
		"cpi.use_dhcp": false, "cpi.lightstemcell.network_name": "net", "cpi.lightstemcell.instance_type": "CO1",
		"cpi.zipkin.enabled": true, "cpi.zipkin.sampler-percentage": 0.1, "cpi.zipkin.base-url": "http://127.0.0.1:9441",
		"cloudstack.clean_disk": true, "cloudstack.interval_clean_disk": 1, "director.name": "bosh",
		"agent.env_service": "registry", "registry.port": 6901, "cloudstack.proxy_port": 3128,
		"cloudstack.proxy_user": "u", "cloudstack.proxy_password": "p", "cpi.ntp": "", "ntp": []string{},
	}
	after := render(t, withProperties(t, manifest, ignored), "director").file(t, "config/cpi.json")
	if after != before {
		t.Errorf("ignored properties changed cpi.json:\n--- with them\n%s\n--- without\n%s", after, before)
	}
}

// TestEarlierPropertyConflictsFailTheRender: two properties naming the same
// thing with different values, and what cannot be honoured, fail the
// render naming the properties, and never showing a password.
func TestEarlierPropertyConflictsFailTheRender(t *testing.T) {
	manifest := interpolate(t, []string{"cpi.yml"}, baseVars)
	cases := []struct {
		name  string
		set   map[string]any
		names []string
	}{
		{"key pair", map[string]any{"cloudstack.default_key_name": "other"},
			[]string{"cloudstack.default_key_pair", "cloudstack.default_key_name"}},
		{"both earlier ntp", map[string]any{"ntp": []string{"10.0.0.1"}, "cpi.ntp": "10.0.0.2"}, []string{"ntp", "cpi.ntp"}},
		{"os types", map[string]any{"cloudstack.stemcell.os_type": "Other PV (64-bit)", "cloudstack.stemcell_os_type": "Ubuntu"},
			[]string{"cloudstack.stemcell_os_type", "cloudstack.stemcell.os_type"}},
		{"mbus", map[string]any{"cpi.agent.mbus": "nats://nats:s3cret@10.1.1.10:4222"}, []string{"agent.mbus", "cpi.agent.mbus"}},
		{"expunge", map[string]any{"cloudstack.expunge_vm": true, "cpi.force_expunge": false},
			[]string{"cloudstack.expunge_vm", "cpi.force_expunge"}},
		{"offering", map[string]any{"cloudstack.default_offer.disk": "A", "cpi.default_disk_offering": "B"},
			[]string{"cpi.default_disk_offering", "cloudstack.default_offer.disk"}},
		{"job timeout shorter than an operation's", map[string]any{"cloudstack.job_timeout": "10m", "cloudstack.timeout.create_vm": 3600},
			[]string{"cloudstack.job_timeout", "cloudstack.timeout.create_vm"}},
		{"stemcell timeout shorter", map[string]any{"stemcell.timeout": "1h", "cloudstack.stemcell_publish_timeout": 120},
			[]string{"stemcell.timeout", "cloudstack.stemcell_publish_timeout"}},
		{"registry user in the URL", map[string]any{"cpi.registry.endpoint": "http://admin:admin@10.1.1.10:8080",
			"cpi.registry.user": "registry", "cpi.registry.password": "admin"}, []string{"cpi.registry.user", "cpi.registry.endpoint"}},
		{"registry endpoints", map[string]any{"registry.host": "10.1.1.10", "registry.endpoint": "http://10.1.1.10:25777",
			"registry.username": "r", "registry.password": "p"}, []string{"registry.endpoint", "registry.host"}},
		{"blobstores", map[string]any{"cpi.blobstore.provider": "local", "cpi.blobstore.path": "/a",
			"agent.blobstore.provider": "local", "agent.blobstore.options": map[string]any{"blobstore_path": "/b"}},
			[]string{"agent.blobstore.options", "cpi.blobstore"}},
		{"webdav against upload", map[string]any{"cpi.webdav_host": "10.1.1.10", "stemcell.publish": "upload"},
			[]string{"stemcell.publish", "cpi.webdav_host"}},
		{"proxies", map[string]any{"cloudstack.proxy_host": "a.example", "cloudstack.proxy_user": "u",
			"cloudstack.proxy_password": "s3cret", "cloudstack.http_proxy": "http://u:s3cret@b.example:3128"},
			[]string{"cloudstack.http_proxy", "cloudstack.proxy_host"}},
		{"dhcp", map[string]any{"cpi.use_dhcp": true}, []string{"cpi.use_dhcp"}},
		{"java blobstore provider", map[string]any{"cpi.blobstore.provider": "s3"}, []string{"cpi.blobstore.provider"}},
		{"java blobstore without provider", map[string]any{"cpi.blobstore.address": "10.1.1.10"}, []string{"cpi.blobstore.provider"}},
		{"webdav port without host", map[string]any{"cpi.webdav_port": 8080}, []string{"cpi.webdav_port", "cpi.webdav_host"}},
		{"timeout not seconds", map[string]any{"cloudstack.timeout.global": "30m"}, []string{"cloudstack.timeout.global"}},
		{"hvm not a bool", map[string]any{"cloudstack.stemcell_requires_hvm": "yes"}, []string{"cloudstack.stemcell_requires_hvm"}},
		{"affinity type", map[string]any{"cloudstack.auto_anti_affinity_type": "anti-affinity"}, []string{"cloudstack.affinity_group_type"}},
		{"one listener, TLS for one", map[string]any{"registry.listen": "0.0.0.0:8080", "registry.username": "r",
			"registry.password": "p", "registry.tls_cert": selfSignedPEM(t), "registry.tls_key": "key",
			"webdav.dir": "/var/vcap/store/w", "webdav.listen": "0.0.0.0:8080"}, []string{"registry.tls_cert", "webdav.tls_cert"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := tryRender(t, withProperties(t, manifest, c.set), "director")
			if err == nil {
				t.Fatalf("the render accepted %v", c.set)
			}
			for _, name := range c.names {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("the render error does not name %s: %v", name, err)
				}
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the render error shows a password: %v", err)
			}
		})
	}
}
