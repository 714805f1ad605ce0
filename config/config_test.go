package config_test

import (
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

func TestRefusals(t *testing.T) {
	cases := map[string]struct{ json, want string }{
		"unknown top-level key": {`{"cloudstak":{}}`, "unknown key cloudstak"},
		"unknown nested key": {strings.Replace(minimal, `"default_zone"`, `"defualt_zone":"x","default_zone"`, 1),
			"unknown key cloudstack.defualt_zone"},
		"unknown deep key": {strings.Replace(minimal, `}}`, `},"agent":{"blobstore":{"provder":"dav"}}}`, 1),
			"unknown key agent.blobstore.provder"},
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
		"wrong type":            {strings.Replace(minimal, `}}`, `,"skip_verify_ssl":"yes"}}`, 1), "skip_verify_ssl"},
		"section not object":    {`{"cloudstack":"x"}`, "cloudstack must be an object"},
		"not json":              {`{"cloudstack":`, "not valid JSON"},
		"poll max below start":  {strings.Replace(minimal, `}}`, `,"job_poll_interval":"3s","job_poll_max_interval":"1s"}}`, 1), "job_poll_max_interval"},
		"registry url":          {strings.Replace(minimal, `}}`, `},"registry":{"endpoint":"http://user:pw@"}}`, 1), "registry.endpoint has no host"},
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
	_, err := config.Parse([]byte(strings.Replace(minimal, `}}`, `},"registry":{"endpoint":"ftp://admin:hunter2@reg"}}`, 1)))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error %v must exist and not show the password", err)
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
