package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

const minimal = `{"cloudstack":{"endpoint":"https://cs.example.com/client/api","api_key":"k",
  "secret_access_key":"s","default_zone":"z1"}}`

func TestDefaultsForAMinimalConfig(t *testing.T) {
	cfg, err := config.Parse([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	cs := cfg.CloudStack
	if cs.SkipVerifySSL {
		t.Error("TLS verification must be on by default")
	}
	checks := map[string][2]time.Duration{
		"request_timeout":       {cs.RequestTimeout.D(), config.DefaultRequestTimeout},
		"job_timeout":           {cs.JobTimeout.D(), config.DefaultJobTimeout},
		"job_poll_interval":     {cs.JobPollInterval.D(), config.DefaultJobPollInterval},
		"job_poll_max_interval": {cs.JobPollMaxInterval.D(), config.DefaultJobPollMaxInterval},
	}
	for key, got := range checks {
		if got[0] != got[1] {
			t.Errorf("%s = %s, want %s", key, got[0], got[1])
		}
	}
	if *cs.MaxRetries != config.DefaultMaxRetries || !*cs.ExpungeVM {
		t.Errorf("max_retries %d expunge_vm %v", *cs.MaxRetries, *cs.ExpungeVM)
	}
	if cfg.Stemcell.Publish != config.PublishUpload {
		t.Errorf("stemcell.publish = %q", cfg.Stemcell.Publish)
	}
	if st := cfg.Stemcell; !st.ConfigDriveOn() || st.ConfigDrivePublish != config.PublishUpload ||
		st.ConfigDriveOSType != "Ubuntu 22.04 LTS" || st.ConfigDriveTimeout.D() != 10*time.Minute {
		t.Errorf("config drive defaults: %v %q %q %s", st.ConfigDriveOn(), st.ConfigDrivePublish, st.ConfigDriveOSType,
			st.ConfigDriveTimeout.D())
	}
}

// config_drive false keeps OpenStack KVM stemcells on user data.
func TestConfigDriveOff(t *testing.T) {
	cfg, err := config.Parse([]byte(strings.Replace(minimal, `}}`, `},"stemcell":{"config_drive":false}}`, 1)))
	if err != nil || cfg.Stemcell.ConfigDriveOn() {
		t.Fatalf("config_drive false: on %v, %v", cfg.Stemcell.ConfigDriveOn(), err)
	}
	if !(config.Stemcell{}).ConfigDriveOn() {
		t.Error("a Stemcell nobody defaulted has the config drive off")
	}
}

// config_drive_publish auto (or left out) is webdav where the CPI serves
// its own WebDAV server, else upload; an explicit choice stays.
func TestConfigDrivePublishAuto(t *testing.T) {
	for name, c := range map[string]struct{ sections, want string }{
		"nothing":                 {``, config.PublishUpload},
		"auto":                    {`"stemcell":{"config_drive_publish":"auto"}`, config.PublishUpload},
		"webdav.listen":           {`"webdav":{"listen":"0.0.0.0:25300-25310"}`, config.PublishWebDAV},
		"auto with webdav.listen": {`"stemcell":{"config_drive_publish":"auto"},"webdav":{"listen":"0.0.0.0:25300"}`, config.PublishWebDAV},
		"upload with webdav.listen": {`"stemcell":{"config_drive_publish":"upload"},"webdav":{"listen":"0.0.0.0:25300"}`,
			config.PublishUpload},
		"the serve daemon on webdav.listen": {`"webdav":{"listen":"0.0.0.0:25300","dir":"/var/vcap/store/webdav"}`,
			config.PublishUpload},
		"a serve daemon elsewhere": {`"webdav":{"listen":"0.0.0.0:25300","daemon_url":"http://10.0.0.6:25300"}`,
			config.PublishUpload},
		"the registry on webdav.listen": {`"webdav":{"listen":"0.0.0.0:25777"},"registry":{"listen":"0.0.0.0:25777",` +
			`"store_dir":"/s","username":"u","password":"p"}`, config.PublishUpload},
	} {
		t.Run(name, func(t *testing.T) {
			body := minimal
			if c.sections != "" {
				body = strings.Replace(minimal, `}}`, `},`+c.sections+`}`, 1)
			}
			cfg, err := config.Parse([]byte(body))
			if err != nil || cfg.Stemcell.ConfigDrivePublish != c.want {
				t.Fatalf("config_drive_publish %q (%v), want %q", cfg.Stemcell.ConfigDrivePublish, err, c.want)
			}
		})
	}
}

func TestDurationsAcceptStringsAndSeconds(t *testing.T) {
	cfg, err := config.Parse([]byte(`{"cloudstack":{"endpoint":"http://h/client/api","api_key":"k",
	  "secret_access_key":"s","default_zone":"z","request_timeout":"90s","job_timeout":120,
	  "job_poll_interval":"100ms","job_poll_max_interval":"1s","max_retries":0}}`))
	if err != nil {
		t.Fatal(err)
	}
	cs := cfg.CloudStack
	if cs.RequestTimeout.D() != 90*time.Second || cs.JobTimeout.D() != 120*time.Second ||
		cs.JobPollInterval.D() != 100*time.Millisecond || *cs.MaxRetries != 0 {
		t.Errorf("got %+v", cs)
	}
}

// TestRateAndStateDir: api_rate_limit unset is nil (listCapabilities
// decides), 0 is kept (off), a fraction is a rate; state_dir is a path.
func TestRateAndStateDir(t *testing.T) {
	cfg, err := config.Parse([]byte(minimal))
	if err != nil || cfg.CloudStack.APIRateLimit != nil || cfg.CloudStack.StateDir != "" {
		t.Fatalf("unset: %+v (%v)", cfg.CloudStack, err)
	}
	for _, want := range []float64{0, 2.5} {
		cfg, err = config.Parse([]byte(strings.Replace(minimal, `}}`,
			fmt.Sprintf(`,"api_rate_limit":%g,"state_dir":"/var/vcap/data/x"}}`, want), 1)))
		if err != nil || cfg.CloudStack.APIRateLimit == nil || *cfg.CloudStack.APIRateLimit != want ||
			cfg.CloudStack.StateDir != "/var/vcap/data/x" {
			t.Errorf("api_rate_limit %g: %+v (%v)", want, cfg.CloudStack, err)
		}
	}
}

func TestRefusals(t *testing.T) {
	cases := map[string]struct{ json, want string }{
		"unknown top-level key": {`{"cloudstak":{}}`, "unknown key cloudstak (did you mean cloudstack?)"},
		"unknown nested key": {strings.Replace(minimal, `"default_zone"`, `"defualt_zone":"x","default_zone"`, 1), //nolint:misspell // the typo is the input
			"unknown key cloudstack.defualt_zone (did you mean cloudstack.default_zone?)"},
		"unknown deep key": {strings.Replace(minimal, `}}`, `},"agent":{"blobstore":{"provder":"dav"}}}`, 1),
			"unknown key agent.blobstore.provder (did you mean agent.blobstore.provider?)"},
		"missing endpoint":      {`{"cloudstack":{"api_key":"k","secret_access_key":"s","default_zone":"z"}}`, "cloudstack.endpoint is required"},
		"missing api key":       {`{"cloudstack":{"endpoint":"http://h","secret_access_key":"s","default_zone":"z"}}`, "cloudstack.api_key is required"},
		"missing secret":        {`{"cloudstack":{"endpoint":"http://h","api_key":"k","default_zone":"z"}}`, "cloudstack.secret_access_key is required"},
		"missing zone":          {`{"cloudstack":{"endpoint":"http://h","api_key":"k","secret_access_key":"s"}}`, "cloudstack.default_zone is required"},
		"endpoint not http":     {strings.Replace(minimal, "https://cs.example.com", "ftp://cs.example.com", 1), "cloudstack.endpoint must be an http:// or https:// URL"},
		"endpoint without host": {strings.Replace(minimal, "https://cs.example.com/client/api", "https:///client/api", 1), "cloudstack.endpoint has no host"},
		"endpoint garbage":      {strings.Replace(minimal, "https://cs.example.com/client/api", "::nope", 1), "cloudstack.endpoint is not a URL"},
		"bad duration":          {strings.Replace(minimal, `}}`, `,"request_timeout":"soon"}}`, 1), "cloudstack.request_timeout"},
		"negative duration":     {strings.Replace(minimal, `}}`, `,"job_timeout":-5}}`, 1), "cloudstack.job_timeout"},
		"bad ca cert":           {strings.Replace(minimal, `}}`, `,"ca_cert":"not a pem"}}`, 1), "cloudstack.ca_cert holds no PEM certificate"},
		"bad publish":           {strings.Replace(minimal, `}}`, `},"stemcell":{"publish":"ftp"}}`, 1), `stemcell.publish is "ftp"`},
		"bad config drive publish": {strings.Replace(minimal, `}}`, `},"stemcell":{"config_drive_publish":"nfs"}}`, 1),
			`stemcell.config_drive_publish is "nfs"`},
		"config drive webdav without listen": {strings.Replace(minimal, `}}`, `},"stemcell":{"config_drive_publish":"webdav"}}`, 1),
			"config_drive_publish is webdav, so webdav.listen"},
		"wrong type":           {strings.Replace(minimal, `}}`, `,"skip_verify_ssl":"yes"}}`, 1), "skip_verify_ssl"},
		"section not object":   {`{"cloudstack":"x"}`, "cloudstack must be an object"},
		"section null":         {strings.Replace(minimal, `}}`, `},"registry":null}`, 1), "registry is null: give it an object or leave the key out"},
		"nested section null":  {strings.Replace(minimal, `}}`, `},"agent":{"blobstore":null}}`, 1), "agent.blobstore is null"},
		"not json":             {`{"cloudstack":`, "not valid JSON"},
		"poll max below start": {strings.Replace(minimal, `}}`, `,"job_poll_interval":"3s","job_poll_max_interval":"1s"}}`, 1), "job_poll_max_interval"},
		"registry url":         {strings.Replace(minimal, `}}`, `},"registry":{"endpoint":"http://user:pw@"}}`, 1), "registry.endpoint has no host"},
		"negative rate":        {strings.Replace(minimal, `}}`, `,"api_rate_limit":-1}}`, 1), "cloudstack.api_rate_limit is -1"},
		"rate past the bound":  {strings.Replace(minimal, `}}`, `,"api_rate_limit":1e6}}`, 1), "cloudstack.api_rate_limit is 1e+06"},
		"rate as text":         {strings.Replace(minimal, `}}`, `,"api_rate_limit":"20/s"}}`, 1), "api_rate_limit"},
		// Issue 24.7: what decoded silently into something else.
		"duplicate key": {strings.Replace(minimal, `"api_key"`, `"api_key":"old","api_key"`, 1),
			"cloudstack.api_key: the key is given twice"},
		"duplicate section": {strings.Replace(minimal, `}}`, `},"cloudstack":{}}`, 1), "cloudstack: the key is given twice"},
		"a billion retries": {strings.Replace(minimal, `}}`, `,"max_retries":1000000000}}`, 1),
			"cloudstack.max_retries is 1000000000; want retries from 0 to 100"},
		"negative retries": {strings.Replace(minimal, `}}`, `,"max_retries":-1}}`, 1), "cloudstack.max_retries is -1; want retries from 0 to 100"},
		"endpoint with credentials": {strings.Replace(minimal, "https://cs.example.com", "https://admin:hunter2@cs.example.com", 1),
			"cloudstack.endpoint \"https://REDACTED@cs.example.com/client/api\" must not carry a user or a password"},
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

func TestURLCredentialsNeverInErrors(t *testing.T) {
	for _, c := range []string{
		strings.Replace(minimal, `}}`, `},"registry":{"endpoint":"ftp://admin:hunter2@reg"}}`, 1),
		strings.Replace(minimal, "https://cs.example.com", "https://admin:hunter2@cs.example.com", 1),
	} {
		_, err := config.Parse([]byte(c))
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error %v must exist and not show the password", err)
		}
	}
}

// TestRetriesWithinTheBound: 0 and 100 are retries the CPI takes.
func TestRetriesWithinTheBound(t *testing.T) {
	for _, n := range []int{0, config.MaxMaxRetries} {
		cfg, err := config.Parse([]byte(strings.Replace(minimal, `}}`, fmt.Sprintf(`,"max_retries":%d}}`, n), 1)))
		if err != nil || *cfg.CloudStack.MaxRetries != n {
			t.Errorf("max_retries %d: %v", n, err)
		}
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	if _, err := config.Load(filepath.Join(t.TempDir(), "absent.json")); err == nil ||
		!strings.Contains(err.Error(), "absent.json") {
		t.Fatalf("got %v", err)
	}
	path := filepath.Join(t.TempDir(), "cpi.json")
	if err := os.WriteFile(path, []byte(minimal), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(path); err != nil {
		t.Fatal(err)
	}
}

func TestServeConfigNeedsNoCloudStackSection(t *testing.T) {
	cfg, err := config.ParseServe([]byte(`{"registry":{"listen":"127.0.0.1:25777","store_dir":"/var/vcap/store/registry",
	  "username":"u","password":"p","open_get":true},"webdav":{"listen":"0.0.0.0:25300","dir":"/var/vcap/store/webdav"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.RegistryServed() || !cfg.WebDAVServed() || !cfg.Registry.OpenGet {
		t.Fatalf("%+v", cfg)
	}
	if cfg.WebDAV.MaxAge.D() != config.DefaultWebDAVMaxAge {
		t.Errorf("webdav.max_age = %s", cfg.WebDAV.MaxAge)
	}
	// The CPI's own check still wants CloudStack.
	if _, err := config.Parse([]byte(`{"registry":{"listen":"127.0.0.1:25777"}}`)); err == nil {
		t.Error("the CPI accepted a config without cloudstack")
	}
}

// TestRefusesWhatCannotWork: values that decode but could only fail later
// are refused, naming the key.
func TestRefusesWhatCannotWork(t *testing.T) {
	cs := func(extra string) string { return strings.Replace(minimal, `}}`, `,`+extra+`}}`, 1) }
	section := func(extra string) string { return strings.Replace(minimal, `}}`, `},`+extra+`}`, 1) }
	endpoint := func(u string) string { return strings.Replace(minimal, "https://cs.example.com/client/api", u, 1) }
	cases := map[string]struct{ json, want string }{
		"endpoint with a query":      {endpoint("https://cs.example.com/client/api?apiKey=x"), "cloudstack.endpoint"},
		"endpoint with an empty ?":   {endpoint("https://cs.example.com/client/api?"), "must not have a query string"},
		"endpoint with a fragment":   {endpoint("https://cs.example.com/client/api#x"), "cloudstack.endpoint"},
		"endpoint without a path":    {endpoint("https://cs.example.com:8443"), "ending in /client/api"},
		"endpoint with another path": {endpoint("https://cs.example.com/client"), "ending in /client/api"},
		"webdav listen garbage":      {section(`"webdav":{"listen":"nowhere"}`), "webdav.listen"},
		"webdav listen bad port":     {section(`"webdav":{"listen":"0.0.0.0:http"}`), "webdav.listen"},
		"webdav listen port too big": {section(`"webdav":{"listen":"0.0.0.0:70000"}`), "webdav.listen"},
		"webdav reversed range":      {section(`"webdav":{"listen":"0.0.0.0:25310-25300"}`), "webdav.listen \"0.0.0.0:25310-25300\": the port range runs backwards"},
		"unknown affinity type":      {cs(`"affinity_group_type":"anti-affinity"`), "cloudstack.affinity_group_type"},
		"explicit dedication":        {cs(`"affinity_group_type":"ExplicitDedication"`), "cloudstack.affinity_group_type"},
		"mbus not a URL":             {section(`"agent":{"mbus":"10.0.0.6:4222"}`), "agent.mbus"},
		"mbus without a host":        {section(`"agent":{"mbus":"nats://"}`), "agent.mbus"},
		"job timeout 1ns":            {cs(`"job_timeout":"1ns"`), "cloudstack.job_timeout is 1ns; it must be at least 1s"},
		"request timeout 10ms":       {cs(`"request_timeout":"10ms"`), "cloudstack.request_timeout"},
		"poll interval 1µs":          {cs(`"job_poll_interval":"1us","job_poll_max_interval":"1us"`), "cloudstack.job_poll_interval"},
		"stemcell timeout 1ms":       {section(`"stemcell":{"timeout":"1ms"}`), "stemcell.timeout"},
		"webdav max age 1ms":         {section(`"webdav":{"max_age":"1ms"}`), "webdav.max_age"},
		"negative cpu speed":         {cs(`"default_cpu_speed":-1`), "cloudstack.default_cpu_speed"},
		"registry without password":  {section(`"registry":{"endpoint":"http://reg:25777","username":"u"}`), "registry.password"},
		"registry without any auth":  {section(`"registry":{"endpoint":"http://reg:25777"}`), "registry.username"},
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

// TestAcceptsWhatWorks: the edges of the refusals above still pass.
func TestAcceptsWhatWorks(t *testing.T) {
	cs := func(extra string) string { return strings.Replace(minimal, `}}`, `,`+extra+`}}`, 1) }
	section := func(extra string) string { return strings.Replace(minimal, `}}`, `},`+extra+`}`, 1) }
	for name, body := range map[string]string{
		"endpoint with a trailing slash": strings.Replace(minimal, "/client/api", "/client/api/", 1),
		"webdav one port":                section(`"webdav":{"listen":"0.0.0.0:25300"}`),
		"webdav range":                   section(`"webdav":{"listen":"[::1]:25300-25310"}`),
		"non-strict affinity":            cs(`"affinity_group_type":"non-strict host anti-affinity"`),
		"host affinity":                  cs(`"affinity_group_type":"host affinity"`),
		"create-env mbus":                section(`"agent":{"mbus":"https://mbus:pw@0.0.0.0:6868"}`),
		"director mbus":                  section(`"agent":{"mbus":"nats://nats:pw@10.0.0.6:4222"}`),
		"minimum durations":              cs(`"job_timeout":"1s","request_timeout":1,"job_poll_interval":"10ms","job_poll_max_interval":"10ms"`),
		"registry password in the URL":   section(`"registry":{"endpoint":"http://u:pw@reg:25777"}`),
		"registry credentials":           section(`"registry":{"endpoint":"http://reg:25777","username":"u","password":"p"}`),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := config.Parse([]byte(body)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// cloudstack.project is kept as given; surrounding spaces, which no
// CloudStack name has, are refused naming the setting.
func TestProject(t *testing.T) {
	cfg, err := config.Parse([]byte(strings.Replace(minimal, `"z1"}`, `"z1","project":"bosh"}`, 1)))
	if err != nil || cfg.CloudStack.Project != "bosh" || cfg.Validate() != nil {
		t.Fatalf("project: %q, %v, %v", cfg.CloudStack.Project, err, cfg.Validate())
	}
	_, err = config.Parse([]byte(strings.Replace(minimal, `"z1"}`, `"z1","project":"bosh "}`, 1)))
	if err == nil || !strings.Contains(err.Error(), "cloudstack.project") {
		t.Fatalf("a project with a trailing space: %v", err)
	}
}
