package dispatch

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testconfig"
)

// A request that is not the protocol's JSON object is named by where and
// what: the position of a syntax error, the member of the wrong type.
func TestMalformedRequestsSayWhereAndWhat(t *testing.T) {
	good := testconfig.Write(t, testconfig.Good)
	for stdin, want := range map[string]string{
		"":    "stdin was empty; cloudstack-cpi reads one JSON request on stdin",
		"\n ": "stdin was empty",
		`{"method":"info",` + "\n" + `  "arguments":[,]}`:    "line 2, column 16 (byte offset 33): invalid character ',' looking for beginning of value",
		`{"method":"info","arguments":[]`:                    "line 1, column 32 (byte offset 31): unexpected end of JSON input",
		`{"method":"info","arguments":[]} {}`:                "line 1, column 34 (byte offset 33): invalid character '{' after top-level value",
		`{"method":"é","arguments":[]}x`:                     "line 1, column 30 (byte offset 30)",
		`["info"]`:                                           "the request is an array, not an object",
		`{"method":5,"arguments":[]}`:                        "method: expected a string, got a number",
		`{"method":"info","arguments":{}}`:                   "arguments: expected an array, got an object",
		`{"method":"info","arguments":[],"api_version":"2"}`: "api_version: expected an integer, got a string",
		`{"method":"info","arguments":[],"api_version":2.5}`: "api_version: expected an integer, got the number 2.5",
		`{"method":"info","arguments":[],"method":"info"}`:   "method: the key is given twice in one object",
		`{"method":"info","arguments":[],"context":{"vm":{"stemcell":{"api_version":3,"api_version":1}}}}`: "context.vm.stemcell.api_version: the key is given twice",
	} {
		resp, _ := call(t, Files{ConfigPath: good}, stdin)
		if resp.Error == nil || resp.Error.Type != "Bosh::Clouds::CpiError" ||
			!strings.Contains(resp.Error.Message, "Must provide valid JSON payload: ") || !strings.Contains(resp.Error.Message, want) {
			t.Errorf("%q: got %+v, want a CpiError containing %q", stdin, resp.Error, want)
		}
		// bosh create-env reads no answer of a CPI that exits non-zero.
		var out, errOut bytes.Buffer
		if code := Answer(Files{ConfigPath: good}, strings.NewReader(stdin), &out, &errOut); code != 0 {
			t.Errorf("%q: exit %d, want 0: the answer must reach bosh create-env", stdin, code)
		}
	}
}

// An argument of the wrong JSON type is named by its position, its name
// and its path, and the CPI's own decoding of cloud_properties and of the
// context says the same in JSON words.
func TestWrongTypesAreNamedInJSONWords(t *testing.T) {
	good := testconfig.Write(t, testconfig.Good)
	net := `{"default":{"type":"manual","ip":10,"netmask":"255.255.255.0","cloud_properties":{}}}`
	for req, want := range map[string]string{
		`{"method":"create_stemcell","arguments":["/img","x"]}`:                                      "arguments[1] (cloud_properties): expected an object, got a string",
		`{"method":"create_stemcell","arguments":["/img",{"name":5}]}`:                               "stemcell cloud_properties.name: expected a string, got a number",
		`{"method":"create_vm","arguments":["a","s",{},` + net + `,[],{}]}`:                          "arguments[3] (networks.default.ip): expected a string, got a number",
		`{"method":"create_vm","arguments":["a","s",{},{},["d-1",2],{}]}`:                            "arguments[4] (disk_cids[1]): expected a string, got a number",
		`{"method":"create_vm","arguments":["a","s",{"cpu":"two"},{},[],{}]}`:                        "VM cloud_properties.cpu: expected an integer, got a string",
		`{"method":"calculate_vm_cloud_properties","arguments":[{"ram":"1G"}]}`:                      "arguments[0] (desired_instance_size.ram): expected an integer, got a string",
		`{"method":"create_disk","arguments":[1024,{"disk_offering":["a"]},null]}`:                   "disk cloud_properties.disk_offering: expected a string, got an array",
		`{"method":"set_vm_metadata","arguments":["vm-1","job"]}`:                                    "arguments[1] (metadata): expected an object, got a string",
		`{"method":"has_vm","arguments":["vm-1"],"context":{"vm":{"stemcell":{"api_version":"2"}}}}`: "context.vm.stemcell.api_version: expected an integer, got a string",
		`{"method":"has_vm","arguments":["vm-1"],"context":{"max_retries":"five"}}`:                  "cloudstack.max_retries: expected an integer, got a string",
	} {
		resp, _ := call(t, Files{ConfigPath: good}, req)
		if resp.Error == nil || !strings.Contains(resp.Error.Message, want) {
			t.Errorf("%s: got %+v, want %q", req, resp.Error, want)
		}
	}
}

// Every method of the table is served with as many arguments as the table
// names (the count in the answer is the action's own, the names the
// table's), and an unknown method is answered with the whole table.
func TestEveryMethodIsServed(t *testing.T) {
	good := testconfig.Write(t, testconfig.Good)
	for method, names := range methodArguments {
		resp, _ := call(t, Files{ConfigPath: good}, fmt.Sprintf(`{"method":%q,"arguments":[]}`, method))
		if len(names) == 0 {
			if resp.Error != nil {
				t.Errorf("%s: %+v", method, resp.Error)
			}
			continue
		}
		want := fmt.Sprintf("not enough arguments: %s takes %d (%s), got 0", method, len(names), strings.Join(names, ", "))
		if resp.Error == nil || resp.Error.Type != "Bosh::Clouds::CloudError" || resp.Error.Message != want {
			t.Errorf("%s: got %+v, want %q", method, resp.Error, want)
		}
	}
	resp, _ := call(t, Files{ConfigPath: good}, `{"method":"update_disks","arguments":[]}`)
	if resp.Error == nil || resp.Error.Type != "Bosh::Clouds::NotImplemented" ||
		!strings.Contains(resp.Error.Message, "unknown method 'update_disks'; the CloudStack CPI serves attach_disk, ") {
		t.Fatalf("unknown method: %+v", resp.Error)
	}
	for method := range methodArguments {
		if !strings.Contains(resp.Error.Message, " "+method) {
			t.Errorf("the unknown method's answer does not list %s: %s", method, resp.Error.Message)
		}
	}
}

// Arguments beyond a method's are ignored, as bosh-cpi-go ignores them,
// and the log says so.
func TestExtraArgumentsAreLogged(t *testing.T) {
	resp, logs := call(t, Files{ConfigPath: testconfig.Write(t, testconfig.Good)}, `{"method":"info","arguments":["x",5]}`)
	if resp.Error != nil || !strings.Contains(logs, "info takes 0 arguments; the 2 after them are ignored") {
		t.Fatalf("%+v\n%s", resp.Error, logs)
	}
}

// The context a director sends is an object, and its own keys are of the
// types and values it gives them (issue 24.7): a context that is a string
// is refused for every method; a wrong stemcell api_version, which decides
// where agent settings go, for every method that reads it (all but info).
func TestTheDirectorsContextIsChecked(t *testing.T) {
	good := testconfig.Write(t, testconfig.Good)
	for req, want := range map[string]string{
		`{"method":"has_vm","arguments":["vm-1"],"context":"cpi-1"}`:                                 "Must provide valid JSON payload: context: expected an object, got a string",
		`{"method":"info","arguments":[],"context":"cpi-1"}`:                                         "Must provide valid JSON payload: context: expected an object, got a string",
		`{"method":"has_vm","arguments":["vm-1"],"context":[]}`:                                      "context: expected an object, got an array",
		`{"method":"has_vm","arguments":["vm-1"],"context":{"vm":{"stemcell":{"api_version":-5}}}}`:  "context.vm.stemcell.api_version is -5; a stemcell's api_version is a whole number from 1",
		`{"method":"has_vm","arguments":["vm-1"],"context":{"vm":{"stemcell":{"api_version":0}}}}`:   "context.vm.stemcell.api_version is 0",
		`{"method":"has_vm","arguments":["vm-1"],"context":{"vm":{"stemcell":{"api_version":"3"}}}}`: "context.vm.stemcell.api_version: expected an integer, got a string",
		`{"method":"has_vm","arguments":["vm-1"],"context":{"vm":{"stemcell":{"api_version":1.5}}}}`: "context.vm.stemcell.api_version: expected an integer, got the number 1.5",
		`{"method":"has_vm","arguments":["vm-1"],"context":{"vm":"old"}}`:                            "context.vm: expected an object, got a string",
		`{"method":"has_vm","arguments":["vm-1"],"context":{"request_id":7}}`:                        "context.request_id: expected a string, got a number",
	} {
		resp, _ := call(t, Files{ConfigPath: good}, req)
		if resp.Error == nil || resp.Error.Type != "Bosh::Clouds::CpiError" || !strings.Contains(resp.Error.Message, want) {
			t.Errorf("%s: got %+v, want a CpiError containing %q", req, resp.Error, want)
		}
	}
	// info answers whatever the director's keys say (the director falls
	// back to CPI API v1 without a word when info fails), and an absent or
	// null context is an operator's request by hand.
	for _, req := range []string{
		`{"method":"info","arguments":[],"context":{"vm":{"stemcell":{"api_version":-5}}}}`,
		`{"method":"info","arguments":[],"context":null}`,
		`{"method":"info","arguments":[]}`,
	} {
		if resp, _ := call(t, Files{ConfigPath: good}, req); resp.Error != nil {
			t.Errorf("%s: %+v", req, resp.Error)
		}
	}
}
