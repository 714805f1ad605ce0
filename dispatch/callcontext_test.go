package dispatch

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testconfig"
)

// A bad cpi-config property fails every call but info, naming the property:
// a director whose info fails falls back to API v1 silently.
func TestBadContextPropertyFailsCallsButInfo(t *testing.T) {
	path := testconfig.Write(t, testconfig.Good)
	ctx := `"context":{"director_uuid":"d","request_id":"cpi-1","apikey":"ctx-key-9a8b"}`
	resp, logs := call(t, Files{ConfigPath: path}, `{"method":"has_vm","arguments":["vm-1"],`+ctx+`}`)
	if resp.Error == nil || resp.Error.Type != "Bosh::Clouds::CpiError" || !strings.Contains(resp.Error.Message, "unknown key apikey (did you mean api_key?)") {
		t.Fatalf("has_vm with a misspelt property: %+v", resp.Error)
	}
	if strings.Contains(logs, "ctx-key-9a8b") {
		t.Fatalf("a property's value reached the log:\n%s", logs)
	}
	resp, logs = call(t, Files{ConfigPath: path}, `{"method":"info","arguments":[],`+ctx+`}`)
	if resp.Error != nil || !strings.Contains(logs, "unknown key apikey") {
		t.Fatalf("info with a misspelt property: %+v\n%s", resp.Error, logs)
	}
	if strings.Contains(logs, "ctx-key-9a8b") {
		t.Fatalf("a property's value reached the log:\n%s", logs)
	}
}

// The context's keys reach the CloudStack layer: has_vm goes to the
// context's endpoint, and its failure quotes neither key.
func TestContextPropertiesReachTheCall(t *testing.T) {
	path := testconfig.Write(t, testconfig.Good)
	req := `{"method":"has_vm","arguments":["vm-1"],"context":{"director_uuid":"d","request_id":"cpi-1",
	  "endpoint":"http://127.0.0.2:9/client/api","api_key":"ctx-key-1c2d","secret_access_key":"ctx-secret-3e4f"}}`
	resp, logs := call(t, Files{ConfigPath: path}, req)
	if resp.Error == nil || !strings.Contains(resp.Error.Message+logs, "127.0.0.2") {
		t.Fatalf("has_vm did not go to the context's endpoint: %+v\n%s", resp.Error, logs)
	}
	if !strings.Contains(logs, "cpi-config properties in the call context: api_key, endpoint, secret_access_key") {
		t.Errorf("the log does not name the merged properties:\n%s", logs)
	}
	for _, secret := range []string{"ctx-key-1c2d", "ctx-secret-3e4f", "signature="} {
		if strings.Contains(logs+resp.Error.Message, secret) {
			t.Fatalf("%q reached the output:\n%s\n%s", secret, resp.Error.Message, logs)
		}
	}
}

// A context that is not an object fails every call, info included, naming
// the context (issue 24.7): no director sends one (bosh-director's
// ExternalCpi builds a Hash, bosh-cli's CPI runner a struct), so info's
// leniency, which is for a cpi-config's properties, does not cover it.
func TestContextThatIsNotAnObject(t *testing.T) {
	path := testconfig.Write(t, testconfig.Good)
	for _, method := range []string{`"has_vm","arguments":["vm-1"]`, `"info","arguments":[]`} {
		resp, _ := call(t, Files{ConfigPath: path}, `{"method":`+method+`,"context":["region-2"]}`)
		if resp.Error == nil || !strings.Contains(resp.Error.Message, "context: expected an object, got an array") {
			t.Errorf("%s with a list for context: %+v", method, resp.Error)
		}
	}
}

// Properties that replace the director's own keys with values the CPI
// cannot read still leave info answering.
func TestInfoAnswersWhateverTheContext(t *testing.T) {
	path := testconfig.Write(t, testconfig.Good)
	for _, ctx := range []string{`{"vm":"region-2"}`, `{"director_uuid":5}`, `{"vm":{"stemcell":{"api_version":"three"}}}`} {
		resp, _ := call(t, Files{ConfigPath: path}, `{"method":"info","arguments":[],"context":`+ctx+`}`)
		if resp.Error != nil {
			t.Errorf("info with context %s: %+v", ctx, resp.Error)
		}
	}
}
