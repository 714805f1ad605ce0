package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// region1 is a cpi.json as the job renders it for the first CloudStack.
const region1 = `{"cloudstack":{"endpoint":"https://cs1.example.com/client/api","api_key":"key-1",
  "secret_access_key":"secret-1","default_zone":"zone-1","default_compute_offering":"Small",
  "job_timeout":"10m","calculate":{"compute_tags":["ssd"],"not_compute_tags":["gpu"]}},
  "stemcell":{"publish":"upload"}}`

// loadForCall is LoadForCall of a call's whole context.
func loadForCall(path, context string) (config.Config, error) {
	props, err := config.ContextProperties(json.RawMessage(context))
	if err != nil {
		return config.Config{}, err
	}
	return config.LoadForCall(path, props)
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cpi.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A context with only what the director sends itself, or none, changes
// nothing.
func TestLoadForCallWithoutPropertiesIsLoad(t *testing.T) {
	path := writeFile(t, region1)
	want, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, ctx := range []string{``, `null`, `{}`,
		`{"director_uuid":"d","request_id":"cpi-123456","vm":{"stemcell":{"api_version":3}}}`} {
		got, err := loadForCall(path, ctx)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("context %q: %+v, %v; want cpi.json as it is", ctx, got.CloudStack, err)
		}
	}
}

// The properties replace cpi.json's cloudstack keys of the same name for
// the call; the rest of the section and the other sections stay, and the
// director's own keys are let by.
func TestLoadForCallMergesPropertiesOverCloudStack(t *testing.T) {
	path := writeFile(t, region1)
	ctx := `{"director_uuid":"d","request_id":"cpi-123456","vm":{"stemcell":{"api_version":3}},
	  "endpoint":"https://cs2.example.com:8443/client/api","api_key":"key-2","secret_access_key":"secret-2",
	  "default_zone":"zone-2","job_timeout":"45m","max_retries":2}`
	cfg, err := loadForCall(path, ctx)
	if err != nil {
		t.Fatal(err)
	}
	cs := cfg.CloudStack
	if cs.Endpoint != "https://cs2.example.com:8443/client/api" || cs.APIKey != "key-2" ||
		cs.SecretAccessKey != "secret-2" || cs.DefaultZone != "zone-2" {
		t.Errorf("the context's keys were not merged: %+v", cs)
	}
	if cs.JobTimeout.D() != 45*time.Minute || *cs.MaxRetries != 2 {
		t.Errorf("job_timeout %s max_retries %d", cs.JobTimeout, *cs.MaxRetries)
	}
	if cs.DefaultComputeOffering != "Small" || cs.Calculate.ComputeTags[0] != "ssd" || cfg.Stemcell.Publish != "upload" {
		t.Errorf("cpi.json's other keys were lost: %+v %+v", cs, cfg.Stemcell)
	}
	if cs.JobPollInterval.D() != config.DefaultJobPollInterval {
		t.Errorf("a key neither sets lost its default: %s", cs.JobPollInterval)
	}
}

// The merge is by top-level key, as Hash#merge! in the AWS and OpenStack
// CPIs: calculate replaces cpi.json's whole, and null unsets a key, so its
// default applies.
func TestPropertiesReplaceKeysWholeAndNullUnsets(t *testing.T) {
	props := map[string]json.RawMessage{
		"calculate":   json.RawMessage(`{"disk_tags":["fast"]}`),
		"job_timeout": json.RawMessage(`null`),
	}
	cfg, err := config.ParseWithProperties([]byte(region1), props)
	if err != nil {
		t.Fatal(err)
	}
	k := cfg.CloudStack.Calculate
	if len(k.ComputeTags) != 0 || len(k.NotComputeTags) != 0 || len(k.DiskTags) != 1 || k.DiskTags[0] != "fast" {
		t.Errorf("calculate = %+v, want the context's alone", k)
	}
	if cfg.CloudStack.JobTimeout.D() != config.DefaultJobTimeout {
		t.Errorf("job_timeout null: %s, want the default", cfg.CloudStack.JobTimeout)
	}
}

// Each property is held to the rule of the key it replaces, and the merged
// section to Validate's; every refusal names the property.
func TestBadPropertiesAreRefusedByName(t *testing.T) {
	cases := map[string]struct{ props, want string }{
		"unknown key":         {`{"apikey":"x"}`, "unknown key apikey (did you mean api_key?)"},
		"unknown nested key":  {`{"calculate":{"disk_tag":["x"]}}`, "unknown key calculate.disk_tag (did you mean calculate.disk_tags?)"},
		"job property names":  {`{"cloudstack.endpoint":"https://cs2/client/api"}`, "not nested under cloudstack nor named as the job's"},
		"nested section":      {`{"cloudstack":{"endpoint":"https://cs2/client/api"}}`, "not nested under cloudstack"},
		"another section":     {`{"stemcell":{"publish":"webdav"}}`, "unknown key stemcell"},
		"bad duration":        {`{"job_timeout":"soon"}`, "job_timeout"},
		"wrong type":          {`{"max_retries":"two"}`, "max_retries"},
		"not an object":       {`{"calculate":"ssd"}`, "calculate must be an object"},
		"endpoint shape":      {`{"endpoint":"https://cs2.example.com/"}`, "cloudstack.endpoint"},
		"blank required key":  {`{"api_key":" "}`, "cloudstack.api_key is required"},
		"rule across keys":    {`{"job_poll_interval":"5s"}`, "cloudstack.job_poll_max_interval"},
		"enum":                {`{"affinity_group_type":"spread"}`, "cloudstack.affinity_group_type"},
		"merged names listed": {`{"api_key":"","default_zone":"z2"}`, "(api_key, default_zone)"},
	}
	for name, c := range cases {
		var props map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.props), &props); err != nil {
			t.Fatal(err)
		}
		_, err := config.ParseWithProperties([]byte(region1), props)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
	}
}

// A context that is not an object is refused, and so is a property the
// director could not have sent; the file's own faults stay the file's.
func TestLoadForCallRefusals(t *testing.T) {
	path := writeFile(t, region1)
	if _, err := loadForCall(path, `"region-2"`); err == nil ||
		!strings.Contains(err.Error(), "context must be a JSON object") {
		t.Errorf("a string context: %v", err)
	}
	_, err := loadForCall(path, `{"director_uuid":"d","endpont":"https://cs2/client/api"}`)
	if err == nil || !strings.Contains(err.Error(), "unknown key endpont") || strings.Contains(err.Error(), path) {
		t.Errorf("a misspelt property: %v (it is the context's fault, not cpi.json's)", err)
	}
	for content, want := range map[string]string{
		`{"cloudstack":`:   "not valid JSON",
		`{"cloudstack":1}`: "cloudstack must be an object",
		`null`:             "cloudstack.endpoint is required",
		`{"agent":{}}`:     "cloudstack.endpoint is required",
	} {
		_, err := loadForCall(writeFile(t, content), `{"api_key":"k2"}`)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("cpi.json %s: %v, want %q", content, err, want)
		}
	}
}

// The properties carry API keys: no refusal quotes them, nor credentials
// in a URL.
func TestRefusalsKeepPropertyValuesOut(t *testing.T) {
	props := map[string]json.RawMessage{
		"api_key":           json.RawMessage(`"ctx-key-a1b2"`),
		"secret_access_key": json.RawMessage(`"ctx-secret-c3d4"`),
		"endpoint":          json.RawMessage(`"https://user:pass-e5f6@cs2.example.com/nope"`),
	}
	_, err := config.ParseWithProperties([]byte(region1), props)
	if err == nil {
		t.Fatal("an endpoint without /client/api was accepted")
	}
	for _, secret := range []string{"ctx-key-a1b2", "ctx-secret-c3d4", "pass-e5f6", "key-1", "secret-1"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the refusal quotes %q: %v", secret, err)
		}
	}
}

func TestPropertyNamesAreSortedKeys(t *testing.T) {
	props, err := config.ContextProperties(json.RawMessage(`{"request_id":"r","secret_access_key":"s","api_key":"k"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := config.PropertyNames(props); !reflect.DeepEqual(got, []string{"api_key", "secret_access_key"}) {
		t.Errorf("names %v", got)
	}
}
