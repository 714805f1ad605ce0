// Package manifests_test checks the ops files against bosh-deployment's
// bosh.yml as an operator uses them: `bosh int … --var-errs
// --var-errs-unused` with every combination, then the CPI job's templates
// rendered from the result by bosh-cli v7.9.13's own renderer (which runs
// ruby), as the director's job and as create-env's cloud_provider, and the
// rendered bin/cpi answering `info` with the rendered cpi.json.
package manifests_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/fixtures"
)

var (
	root string // the repository
	bins string // bosh, renderjob and cloudstack-cpi, built for this run
	seed string // bosh.yml's generated variables, so certificates are generated once
	// boshDeployment is bosh-deployment's unmodified files where
	// internal/fixtures finds them; "" when nowhere: the tests needing them skip.
	boshDeployment string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if root, err = filepath.Abs(".."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// A lookup's error is each test's to report (fixtures.Require): the
	// tests without bosh-deployment run without it.
	boshDeployment, _ = fixtures.Dir()
	if _, err := exec.LookPath("ruby"); err != nil {
		fmt.Fprintln(os.Stderr, "ruby is missing: bosh-cli's template renderer runs it; install Debian's ruby (make test-deps)")
		return 1
	}
	tmp, err := os.MkdirTemp("", "manifests-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	bins, seed = filepath.Join(tmp, "bin"), filepath.Join(tmp, "creds.yml")
	if err := buildTools(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := seedVarsStore(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func buildTools() error {
	builds := []struct{ dir, out, pkg string }{
		{filepath.Join(root, "tools"), "bosh", "github.com/cloudfoundry/bosh-cli/v7"},
		{filepath.Join(root, "tools"), "renderjob", "./renderjob"},
		{root, "cloudstack-cpi", "."},
	}
	for _, b := range builds {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bins, b.out), b.pkg)
		cmd.Dir = b.dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s in %s: %w\n%s", b.pkg, b.dir, err, out)
		}
	}
	return nil
}

// seedVarsStore generates bosh.yml's passwords and certificates once;
// each interpolation starts from a copy, so --var-errs-unused sees only
// the variables of its own combination.
func seedVarsStore() error {
	if boshDeployment == "" {
		return nil
	}
	args := []string{"int", filepath.Join(boshDeployment, "bosh.yml"), "--vars-store", seed}
	for k, v := range baseVars {
		args = append(args, "-v", k+"="+v)
	}
	if out, err := exec.Command(filepath.Join(bins, "bosh"), args...).CombinedOutput(); err != nil {
		return fmt.Errorf("bosh int bosh.yml --vars-store: %w\n%s", err, out)
	}
	return nil
}

// baseVars are cpi.yml's variables, beside those bosh.yml generates.
var baseVars = map[string]string{
	"director_name":                "bosh",
	"internal_cidr":                "10.1.1.0/24",
	"internal_gw":                  "10.1.1.1",
	"internal_ip":                  "10.1.1.10",
	"network_name":                 "guest",
	"stemcell_url":                 "file:///stemcells/bosh-stemcell-cloudstack-xen.tgz",
	"stemcell_sha1":                "0123456789abcdef0123456789abcdef01234567",
	"cloudstack_cpi_release_url":   "file:///releases/cloudstack-cpi-release.tgz",
	"cloudstack_endpoint":          "https://cloudstack.example/client/api",
	"cloudstack_api_key":           "api-key",
	"cloudstack_secret_access_key": "secret-key",
	"cloudstack_zone":              "zone1",
	"cloudstack_compute_offering":  "Medium Instance",
	"cloudstack_default_key_name":  "bosh",
}

var proxyVars = map[string]string{
	"http_proxy":  "http://proxy.example:3128",
	"https_proxy": "http://proxy.example:3129",
	"no_proxy":    "127.0.0.1,10.1.1.10",
}

type combination struct {
	name string
	ops  []string // manifests/ files, or bosh-deployment: files of bosh-deployment
	vars map[string]string
	// check looks at the rendered director job and cloud_provider.
	check func(t *testing.T, director, cloudProvider rendered)
}

func combinations(ca string) []combination {
	return []combination{
		{name: "cpi", ops: []string{"cpi.yml"}, check: checkCPI},
		{name: "custom-ca", ops: []string{"cpi.yml", "custom-ca.yml"},
			vars: map[string]string{"cloudstack_ca_cert": ca},
			check: func(t *testing.T, d, c rendered) {
				want(t, d.config, "cloudstack.ca_cert", ca)
				want(t, c.config, "cloudstack.ca_cert", ca)
			}},
		{name: "auto-anti-affinity", ops: []string{"cpi.yml", "auto-anti-affinity.yml"},
			check: func(t *testing.T, d, c rendered) {
				want(t, d.config, "cloudstack.auto_anti_affinity", true)
				absent(t, c.config, "cloudstack.auto_anti_affinity")
			}},
		{name: "webdav-stemcells", ops: []string{"cpi.yml", "webdav-stemcells.yml"},
			vars:  map[string]string{"webdav_public_url": "http://203.0.113.5"},
			check: checkWebDAV},
		{name: "registry", ops: []string{"cpi.yml", "registry.yml"}, check: checkRegistry},
		{name: "webdav-stemcells+registry", ops: []string{"cpi.yml", "webdav-stemcells.yml", "registry.yml"},
			vars: map[string]string{"webdav_public_url": "http://203.0.113.5"},
			check: func(t *testing.T, d, c rendered) {
				checkRegistry(t, d, c)
				want(t, c.config, "webdav.listen", "0.0.0.0:25300-25320")
			}},
		{name: "proxy", ops: []string{"cpi.yml", "proxy.yml"}, vars: proxyVars, check: checkProxy},
		{name: "bosh-deployment misc/proxy.yml", ops: []string{"cpi.yml", "bosh-deployment:misc/proxy.yml"},
			vars: proxyVars, check: checkProxy},
		{name: "all", ops: []string{"cpi.yml", "custom-ca.yml", "auto-anti-affinity.yml", "webdav-stemcells.yml",
			"registry.yml", "proxy.yml"},
			vars: merge(proxyVars, map[string]string{"cloudstack_ca_cert": ca, "webdav_public_url": "http://203.0.113.5"}),
			check: func(t *testing.T, d, c rendered) {
				checkRegistry(t, d, c)
				checkProxy(t, d, c)
				want(t, d.config, "cloudstack.ca_cert", ca)
			}},
	}
}

func TestOpsFilesRenderConfigsTheCPIAccepts(t *testing.T) {
	fixtures.Require(t, "misc/proxy.yml")
	ca := selfSignedPEM(t)
	for _, combo := range combinations(ca) {
		t.Run(combo.name, func(t *testing.T) {
			manifest := interpolate(t, combo.ops, merge(baseVars, combo.vars))
			director := render(t, manifest, "director")
			cloudProvider := render(t, manifest, "cloud_provider")
			for _, r := range []rendered{director, cloudProvider} {
				r.accepted(t)
				checkGolden(t, combo.name, r, map[string]string{"test_ca": ca})
			}
			combo.check(t, director, cloudProvider)
		})
	}
}

func TestCloudConfigInterpolates(t *testing.T) {
	vars := map[string]string{}
	for _, k := range []string{"cloudstack_zone", "cloudstack_compute_offering", "internal_cidr", "internal_gw", "network_name"} {
		vars[k] = baseVars[k]
	}
	out := boshInt(t, filepath.Join(root, "manifests", "cloud-config.yml"), nil, vars, "")
	for _, s := range []string{"zone: zone1", "compute_offering: Medium Instance", "name: guest", "disk_offering: shared.custom"} {
		if !strings.Contains(out, s) {
			t.Errorf("cloud config lacks %q:\n%s", s, out)
		}
	}
}

func checkCPI(t *testing.T, d, c rendered) {
	for _, r := range []rendered{d, c} {
		want(t, r.config, "cloudstack.endpoint", baseVars["cloudstack_endpoint"])
		want(t, r.config, "cloudstack.default_zone", baseVars["cloudstack_zone"])
		want(t, r.config, "cloudstack.default_key_pair", baseVars["cloudstack_default_key_name"])
		for _, key := range []string{"registry", "webdav", "stemcell"} {
			absent(t, r.config, key)
		}
		if strings.TrimSpace(r.file(t, "monit")) != "" {
			t.Errorf("%s: monit runs a daemon without registry.listen or webdav.dir:\n%s", r.as, r.file(t, "monit"))
		}
	}
	// The director's agents get its TLS blobstore, by https with its CA.
	want(t, d.config, "agent.mbus", "nats://10.1.1.10:4222")
	want(t, d.config, "agent.blobstore.provider", "dav")
	want(t, d.config, "agent.blobstore.options.endpoint", "https://10.1.1.10:25250")
	want(t, d.config, "agent.blobstore.options.user", "agent")
	want(t, d.config, "agent.blobstore.options.password", d.credential(t, "blobstore_agent_password"))
	want(t, d.config, "agent.blobstore.options.tls.cert.ca", d.credential(t, "blobstore_server_tls.ca"))
	// create-env's agent: its own mbus address, the local blobstore.
	want(t, c.config, "agent.mbus", "https://mbus:"+c.credential(t, "mbus_bootstrap_password")+"@0.0.0.0:6868")
	want(t, c.config, "agent.blobstore.provider", "local")
	want(t, c.config, "agent.blobstore.options.blobstore_path", "/var/vcap/micro_bosh/data/cache")
}

func checkWebDAV(t *testing.T, d, c rendered) {
	for _, r := range []rendered{d, c} {
		want(t, r.config, "stemcell.publish", "webdav")
		want(t, r.config, "webdav.listen", "0.0.0.0:25300-25320")
	}
	want(t, d.config, "webdav.public_url", "http://10.1.1.10")
	want(t, c.config, "webdav.public_url", "http://203.0.113.5")
}

func checkRegistry(t *testing.T, d, c rendered) {
	want(t, d.config, "registry.listen", "0.0.0.0:25777")
	want(t, d.config, "registry.endpoint", "http://10.1.1.10:25777")
	want(t, d.config, "registry.store_dir", "/var/vcap/store/cloudstack_cpi/registry")
	want(t, d.config, "registry.password", d.credential(t, "registry_password"))
	want(t, d.config, "webdav.dir", "/var/vcap/store/cloudstack_cpi/webdav")
	want(t, d.config, "webdav.listen", "0.0.0.0:25301")
	want(t, d.config, "webdav.daemon_url", "http://127.0.0.1:25301")
	if _, err := config.ParseServe([]byte(d.file(t, "config/cpi.json"))); err != nil {
		t.Errorf("serve refuses the director's rendered cpi.json: %v", err)
	}
	monit := d.file(t, "monit")
	for _, s := range []string{"check process cloudstack_cpi", "/var/vcap/sys/run/cloudstack_cpi/serve.pid",
		`"/var/vcap/jobs/cloudstack_cpi/bin/cpi_ctl start"`, `"/var/vcap/jobs/cloudstack_cpi/bin/cpi_ctl stop"`} {
		if !strings.Contains(monit, s) {
			t.Errorf("monit lacks %q:\n%s", s, monit)
		}
	}
	ctl := d.file(t, "bin/cpi_ctl")
	for _, s := range []string{"/var/vcap/store/cloudstack_cpi/registry", "/var/vcap/store/cloudstack_cpi/webdav"} {
		if !strings.Contains(ctl, s) {
			t.Errorf("bin/cpi_ctl lacks %q:\n%s", s, ctl)
		}
	}
	absent(t, c.config, "registry")
	if strings.TrimSpace(c.file(t, "monit")) != "" {
		t.Errorf("cloud_provider's monit runs a daemon: %s", c.file(t, "monit"))
	}
}

// checkProxy runs each rendered bin/cpi with a stand-in binary that prints
// its environment, arguments and stdin: the proxies are exported in both
// spellings from an empty environment, as the director runs the CPI.
func checkProxy(t *testing.T, d, c rendered) {
	for _, r := range []rendered{d, c} {
		out := r.runStandIn(t, "the request")
		for name, v := range map[string]string{"HTTP_PROXY": "http_proxy", "HTTPS_PROXY": "https_proxy", "NO_PROXY": "no_proxy"} {
			for _, n := range []string{name, v} {
				if line := n + "=" + proxyVars[v]; !containsLine(out, line) {
					t.Errorf("%s: bin/cpi does not export %s:\n%s", r.as, line, out)
				}
			}
		}
		if !containsLine(out, "stdin=the request") {
			t.Errorf("%s: bin/cpi did not pass stdin through:\n%s", r.as, out)
		}
		// The shared state sits beside jobs/: /var/vcap/data/cloudstack_cpi
		// on a director, the installation's data/cloudstack_cpi for create-env.
		state := filepath.Join(filepath.Dir(r.jobsDir), "data", "cloudstack_cpi")
		if !strings.Contains(out, "-stateDir "+state) {
			t.Errorf("%s: bin/cpi does not name the state directory %s:\n%s", r.as, state, out)
		}
		// An operator's `bin/cpi orphans` gets the job's cpi.json and proxies.
		out = r.runStandIn(t, "", "orphans", "-delete")
		config := filepath.Join(r.jobsDir, "cloudstack_cpi", "config", "cpi.json")
		if !containsLine(out, "args=orphans -configPath "+config+" -delete") || !containsLine(out, "HTTPS_PROXY="+proxyVars["https_proxy"]) {
			t.Errorf("%s: bin/cpi orphans:\n%s", r.as, out)
		}
	}
}

func containsLine(out, line string) bool {
	for _, l := range strings.Split(out, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// TestRefusedPropertiesFailTheRender sets, on top of cpi.yml, properties
// the CPI would refuse: the render fails naming the property, and the CPI
// (config.Parse, or ParseServe for the daemon) refuses the same cpi.json.
func TestRefusedPropertiesFailTheRender(t *testing.T) {
	manifest := interpolate(t, []string{"cpi.yml"}, baseVars)
	good := render(t, manifest, "director")
	cases := []struct {
		name  string
		set   map[string]any // property path → value; nil removes it
		names string         // the property the error names
		serve bool           // the daemon's check refuses it
	}{
		{"endpoint not http", map[string]any{"cloudstack.endpoint": "ftp://cloudstack.example/client/api"}, "cloudstack.endpoint", false},
		{"zone missing", map[string]any{"cloudstack.default_zone": nil}, "cloudstack.default_zone", false},
		{"negative retries", map[string]any{"cloudstack.max_retries": -1}, "cloudstack.max_retries", false},
		{"a billion retries", map[string]any{"cloudstack.max_retries": 1000000000}, "cloudstack.max_retries", false},
		{"endpoint with credentials", map[string]any{"cloudstack.endpoint": "https://admin:pw@cloudstack.example/client/api"},
			"cloudstack.endpoint", false},
		{"negative rate", map[string]any{"cloudstack.api_rate_limit": -1}, "cloudstack.api_rate_limit", false},
		{"rate as text", map[string]any{"cloudstack.api_rate_limit": "20/s"}, "cloudstack.api_rate_limit", false},
		{"zero timeout", map[string]any{"cloudstack.request_timeout": "0s"}, "cloudstack.request_timeout", false},
		{"bad duration", map[string]any{"cloudstack.job_timeout": "ten minutes"}, "cloudstack.job_timeout", false},
		{"poll max below poll", map[string]any{"cloudstack.job_poll_interval": "2s", "cloudstack.job_poll_max_interval": "1s"},
			"cloudstack.job_poll_max_interval", false},
		{"ca without PEM", map[string]any{"cloudstack.ca_cert": "not a certificate"}, "cloudstack.ca_cert", false},
		{"string for a bool", map[string]any{"cloudstack.expunge_vm": "yes"}, "cloudstack.expunge_vm", false},
		{"unknown publish", map[string]any{"stemcell.publish": "ftp"}, "stemcell.publish", false},
		{"webdav without listen", map[string]any{"stemcell.publish": "webdav"}, "webdav.listen", false},
		{"bits", map[string]any{"stemcell.bits": 16}, "stemcell.bits", false},
		{"zones not a list", map[string]any{"stemcell.zones": "zone1"}, "stemcell.zones", false},
		{"registry url", map[string]any{"registry.endpoint": "10.1.1.10:25777"}, "registry.endpoint", false},
		{"endpoint with a query", map[string]any{"cloudstack.endpoint": "https://cloudstack.example/client/api?x=1"},
			"cloudstack.endpoint", false},
		{"endpoint without /client/api", map[string]any{"cloudstack.endpoint": "https://cloudstack.example:8443"},
			"cloudstack.endpoint", false},
		{"job timeout 1ns", map[string]any{"cloudstack.job_timeout": "1ns"}, "cloudstack.job_timeout", false},
		{"poll 1us", map[string]any{"cloudstack.job_poll_interval": "1us", "cloudstack.job_poll_max_interval": "1us"},
			"cloudstack.job_poll_interval", false},
		{"stemcell timeout 1ms", map[string]any{"stemcell.timeout": "1ms"}, "stemcell.timeout", false},
		{"negative cpu speed", map[string]any{"cloudstack.default_cpu_speed": -1}, "cloudstack.default_cpu_speed", false},
		{"unknown affinity type", map[string]any{"cloudstack.affinity_group_type": "anti-affinity"},
			"cloudstack.affinity_group_type", false},
		{"mbus not a URL", map[string]any{"agent.mbus": "10.1.1.10:4222"}, "agent.mbus", false},
		{"webdav reversed range", map[string]any{"stemcell.publish": "webdav", "webdav.listen": "0.0.0.0:25320-25300"},
			"webdav.listen", false},
		{"webdav listen garbage", map[string]any{"stemcell.publish": "webdav", "webdav.listen": "anywhere"},
			"webdav.listen", false},
		{"registry endpoint without password", map[string]any{"registry.endpoint": "http://10.1.1.10:25777",
			"registry.username": "r"}, "registry.password", false},
		{"registry without password", map[string]any{"registry.listen": "0.0.0.0:25777", "registry.username": "r"},
			"registry.password", true},
		{"registry listen", map[string]any{"registry.listen": "25777", "registry.username": "r", "registry.password": "p"},
			"registry.listen", true},
		{"daemon on a port range", map[string]any{"webdav.dir": "/var/vcap/store/w", "webdav.listen": "0.0.0.0:25300-25320"},
			"webdav.listen", true},
		{"daemon without listen", map[string]any{"webdav.dir": "/var/vcap/store/w"}, "webdav.listen", true},
		{"webdav user alone", map[string]any{"webdav.dir": "/w", "webdav.listen": "0.0.0.0:25301", "webdav.username": "u"},
			"webdav.username", true},
		{"tls cert alone", map[string]any{"registry.listen": "0.0.0.0:25777", "registry.username": "r",
			"registry.password": "p", "registry.tls_cert": selfSignedPEM(t)}, "registry.tls_cert", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := tryRender(t, withProperties(t, manifest, c.set), "director")
			if err == nil {
				t.Fatalf("the render accepted %v", c.set)
			}
			if !strings.Contains(err.Error(), c.names) {
				t.Errorf("the render error does not name %s: %v", c.names, err)
			}
			cpiJSON := good.configWith(t, c.set)
			parse := config.Parse
			if c.serve {
				parse = config.ParseServe
			}
			if _, err := parse(cpiJSON); err == nil {
				t.Errorf("the CPI accepts what the render refused: %s", cpiJSON)
			}
		})
	}
}

// interpolate runs bosh-deployment's bosh.yml with ops (manifests/ files,
// bosh-deployment: files of bosh-deployment, or absolute paths), failing on
// any variable missing or unused. Without bosh-deployment the test skips.
func interpolate(t *testing.T, ops []string, vars map[string]string) string {
	t.Helper()
	var paths, need []string
	for _, o := range ops {
		if f, ok := strings.CutPrefix(o, "bosh-deployment:"); ok {
			need = append(need, f)
		}
	}
	bd := fixtures.Require(t, need...)
	for _, o := range ops {
		if f, ok := strings.CutPrefix(o, "bosh-deployment:"); ok {
			paths = append(paths, filepath.Join(bd, f))
		} else if filepath.IsAbs(o) {
			paths = append(paths, o)
		} else {
			paths = append(paths, filepath.Join(root, "manifests", o))
		}
	}
	dir := t.TempDir()
	store := filepath.Join(dir, "creds.yml")
	seeded, err := os.ReadFile(seed)
	if err == nil {
		err = os.WriteFile(store, seeded, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	out := boshInt(t, filepath.Join(bd, "bosh.yml"), paths, vars, store)
	path := filepath.Join(dir, "manifest.yml")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func boshInt(t *testing.T, file string, ops []string, vars map[string]string, store string) string {
	t.Helper()
	args := []string{"int", file, "--var-errs", "--var-errs-unused"}
	for _, o := range ops {
		args = append(args, "-o", o)
	}
	if store != "" {
		args = append(args, "--vars-store", store)
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-v", k+"="+vars[k])
	}
	return bosh(t, args...)
}

func bosh(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bins, "bosh"), append([]string{"-n"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bosh %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return strings.TrimSuffix(string(out), "\n")
}

// credential is a value bosh int generated into the manifest's vars store.
func (r rendered) credential(t *testing.T, path string) string {
	t.Helper()
	return bosh(t, "int", r.creds, "--path", "/"+strings.ReplaceAll(path, ".", "/"))
}

// withProperties writes a manifest with the director's job properties
// changed (nil removes one).
func withProperties(t *testing.T, manifest string, set map[string]any) string {
	var ops []map[string]any
	for path, value := range set {
		p := "/instance_groups/name=bosh/properties/" + strings.ReplaceAll(path, ".", "?/") + "?"
		if value == nil {
			ops = append(ops, map[string]any{"type": "remove", "path": strings.TrimSuffix(p, "?")})
			continue
		}
		ops = append(ops, map[string]any{"type": "replace", "path": p, "value": value})
	}
	dir := t.TempDir()
	opsFile := filepath.Join(dir, "ops.yml")
	raw, _ := json.Marshal(ops) // JSON is YAML
	if err := os.WriteFile(opsFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "manifest.yml")
	if err := os.WriteFile(out, []byte(bosh(t, "int", manifest, "-o", opsFile)), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// rendered is the CPI job rendered as the director's job or as
// cloud_provider, laid out as the agent installs it.
type rendered struct {
	as       string
	creds    string // the vars store of its manifest
	jobsDir  string
	packages string
	config   map[string]any
}

func (r rendered) dir() string { return filepath.Join(r.jobsDir, "cloudstack_cpi") }

func render(t *testing.T, manifest, as string) rendered {
	t.Helper()
	r, err := tryRender(t, manifest, as)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func tryRender(t *testing.T, manifest, as string) (rendered, error) {
	t.Helper()
	return renderWith(t, manifest, as, "bosh")
}

// tryRenderGroup renders the job as the director's, in instance group group.
func tryRenderGroup(t *testing.T, manifest, group string) (rendered, error) {
	t.Helper()
	return renderWith(t, manifest, "director", group)
}

func renderWith(t *testing.T, manifest, as, group string) (rendered, error) {
	t.Helper()
	base := t.TempDir()
	r := rendered{as: as, creds: filepath.Join(filepath.Dir(manifest), "creds.yml"), jobsDir: filepath.Join(base, "jobs"), packages: filepath.Join(base, "packages")}
	cmd := exec.Command(filepath.Join(bins, "renderjob"), "-job", filepath.Join(root, "jobs", "cloudstack_cpi"),
		"-manifest", manifest, "-as", as, "-instance-group", group, "-out", r.dir())
	if out, err := cmd.CombinedOutput(); err != nil {
		return r, fmt.Errorf("rendering as %s: %w: %s", as, err, out)
	}
	if err := json.Unmarshal([]byte(r.file(t, "config/cpi.json")), &r.config); err != nil {
		t.Fatalf("%s: cpi.json is not JSON: %v", as, err)
	}
	return r, nil
}

func (r rendered) file(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// accepted: the CPI's own check takes the rendered cpi.json, monit runs
// serve exactly when it has something to serve, and the rendered bin/cpi,
// run with an empty environment as the director runs it, answers info
// through the CPI binary.
func (r rendered) accepted(t *testing.T) {
	t.Helper()
	cfg, err := config.Parse([]byte(r.file(t, "config/cpi.json")))
	if err != nil {
		t.Errorf("%s: the CPI refuses the rendered cpi.json: %v", r.as, err)
	}
	// monit runs serve exactly when cpi.json gives it something to serve.
	if runs, serves := strings.Contains(r.file(t, "monit"), "check process"), cfg.RegistryServed() || cfg.WebDAVServed(); runs != serves {
		t.Errorf("%s: monit runs serve: %v, cpi.json has registry.listen or webdav.dir: %v", r.as, runs, serves)
	}
	r.install(t, filepath.Join(bins, "cloudstack-cpi"))
	out := r.runCPI(t, `{"method":"info","arguments":[],"context":{"director_uuid":"d","request_id":"manifests-1"}}`)
	var resp struct {
		Result struct {
			APIVersion int `json:"api_version"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil || resp.Error != nil || resp.Result.APIVersion != 2 {
		t.Errorf("%s: info through bin/cpi answered %s (%v)", r.as, out, err)
	}
}

func (r rendered) install(t *testing.T, binary string) {
	t.Helper()
	dst := filepath.Join(r.packages, "cloudstack_cpi", "bin", "cloudstack-cpi")
	_ = os.Remove(dst)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, dst); err != nil {
		t.Fatal(err)
	}
}

func (r rendered) runCPI(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("/bin/bash", append([]string{filepath.Join(r.dir(), "bin", "cpi")}, args...)...)
	cmd.Env = []string{"BOSH_PACKAGES_DIR=" + r.packages, "BOSH_JOBS_DIR=" + r.jobsDir}
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: bin/cpi: %v\n%s", r.as, err, out)
	}
	return string(out)
}

func (r rendered) runStandIn(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	standIn := filepath.Join(t.TempDir(), "stand-in")
	script := "#!/bin/bash\nenv\necho \"args=$*\"\necho \"stdin=$(cat)\"\n"
	if err := os.WriteFile(standIn, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.install(t, standIn)
	return r.runCPI(t, stdin, args...)
}

// configWith is this rendered cpi.json with properties set or removed.
func (r rendered) configWith(t *testing.T, set map[string]any) []byte {
	var cfg map[string]any
	if err := json.Unmarshal([]byte(r.file(t, "config/cpi.json")), &cfg); err != nil {
		t.Fatal(err)
	}
	for path, value := range set {
		keys := strings.Split(path, ".")
		m := cfg
		for _, k := range keys[:len(keys)-1] {
			if _, ok := m[k].(map[string]any); !ok {
				m[k] = map[string]any{}
			}
			m = m[k].(map[string]any)
		}
		if value == nil {
			delete(m, keys[len(keys)-1])
		} else {
			m[keys[len(keys)-1]] = value
		}
	}
	b, _ := json.Marshal(cfg)
	return b
}

func lookup(cfg map[string]any, path string) (any, bool) {
	var v any = cfg
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func want(t *testing.T, cfg map[string]any, path string, value any) {
	t.Helper()
	got, ok := lookup(cfg, path)
	if !ok {
		t.Errorf("cpi.json has no %s", path)
		return
	}
	if fmt.Sprint(got) != fmt.Sprint(value) {
		t.Errorf("cpi.json %s = %v, want %v", path, got, value)
	}
}

func absent(t *testing.T, cfg map[string]any, path string) {
	t.Helper()
	if v, ok := lookup(cfg, path); ok {
		t.Errorf("cpi.json has %s = %v, which no property set", path, v)
	}
}

func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func selfSignedPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cloudstack-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestRateAndStateDirRender: cloudstack.api_rate_limit (a fraction, or 0
// for off) and cloudstack.state_dir reach cpi.json as set, and the CPI
// takes them.
func TestRateAndStateDirRender(t *testing.T) {
	manifest := interpolate(t, []string{"cpi.yml"}, baseVars)
	for _, rate := range []any{12.5, 0} {
		r := render(t, withProperties(t, manifest, map[string]any{"cloudstack.api_rate_limit": rate,
			"cloudstack.state_dir": "/var/vcap/store/cloudstack_cpi/state"}), "director")
		want(t, r.config, "cloudstack.api_rate_limit", rate)
		want(t, r.config, "cloudstack.state_dir", "/var/vcap/store/cloudstack_cpi/state")
		cfg, err := config.Parse([]byte(r.file(t, "config/cpi.json")))
		if err != nil || cfg.CloudStack.APIRateLimit == nil {
			t.Errorf("the CPI does not take the rendered rate %v: %v", rate, err)
		}
	}
}
