package dispatch

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testconfig"
)

// goWords are what a Go type name looks like in a message: the director's
// operator reads JSON, never the CPI's Go types. namesGoType applies it to
// a message without its file names (cpi.json is no Go type).
var goWords = regexp.MustCompile(`map\[|interface ?\{|\[\][\w*]|\bstruct\b|Go value|Go struct|\*?\bcpi\.|\bapiv1\.|\brpc\.|\bconfig\.[A-Z]|` +
	`(^|[\s(])json[.:]|\b(u?int|float)(8|16|32|64)?\b|\bbool\b|\breflect\b|\bunmarshal`)

// validArguments are well-typed arguments of every method the CPI serves:
// each test below breaks one thing of them.
var validArguments = map[string][]any{
	"info":            {},
	"create_stemcell": {"/nonexistent/image", map[string]any{"name": "s", "version": "1"}},
	"delete_stemcell": {"st-1"},
	"create_vm": {"agent-1", "st-1", map[string]any{"compute_offering": "small"},
		map[string]any{"default": map[string]any{"type": "manual", "ip": "10.0.0.5", "netmask": "255.255.255.0",
			"gateway": "10.0.0.1", "dns": []any{"10.0.0.2"}, "default": []any{"dns", "gateway"},
			"cloud_properties": map[string]any{"name": "net"}}},
		[]any{"disk-1"}, map[string]any{"bosh": map[string]any{"group": "g"}}},
	"delete_vm":                     {"vm-1"},
	"calculate_vm_cloud_properties": {map[string]any{"cpu": 1, "ram": 1024, "ephemeral_disk_size": 2048}},
	"set_vm_metadata":               {"vm-1", map[string]any{"job": "web"}},
	"has_vm":                        {"vm-1"},
	"reboot_vm":                     {"vm-1"},
	"get_disks":                     {"vm-1"},
	"create_disk":                   {1024, map[string]any{"disk_offering": "fast"}, "vm-1"},
	"delete_disk":                   {"disk-1"},
	"attach_disk":                   {"vm-1", "disk-1"},
	"detach_disk":                   {"vm-1", "disk-1"},
	"has_disk":                      {"disk-1"},
	"resize_disk":                   {"disk-1", 2048},
	"set_disk_metadata":             {"disk-1", map[string]any{"job": "web"}},
	"snapshot_disk":                 {"disk-1", map[string]any{"job": "web"}},
	"delete_snapshot":               {"snap-1"},
	"update_disk":                   {"disk-1", 2048, map[string]any{"disk_offering": "fast"}},
}

// wrongValues are one of each JSON type, and the empty ones.
var wrongValues = []any{"text", "", 42, -1, 4.5, 1e30, true, nil, map[string]any{}, map[string]any{"a": 1}, []any{}, []any{1, "x"}}

// wrongObjects are objects whose known keys hold the wrong JSON type, for
// every argument that is an object.
var wrongObjects = func() []any {
	keys := []string{"name", "version", "zones", "bits", "public", "requires_hvm", "compute_offering", "cpu", "ram",
		"disk", "ephemeral_disk_offering", "lbs", "routes", "affinity_group", "disk_offering", "type", "ip", "netmask",
		"gateway", "dns", "default", "cloud_properties", "bosh", "group", "groups", "ephemeral_disk_size", "job",
		"template_id", "template_name", "light_template", "security_groups", "nic", "size"}
	var out []any
	for _, k := range keys {
		for _, v := range []any{"x", 5, 2.5, true, map[string]any{"a": 1}, []any{2}} {
			out = append(out, map[string]any{k: v})
			out = append(out, map[string]any{"default": map[string]any{k: v}})
		}
	}
	return out
}()

// badContexts are contexts of every wrong shape: not objects, and objects
// whose director keys or cpi-config properties hold the wrong JSON type.
var badContexts = []string{`"ctx"`, `["a"]`, `5`, `true`, `{"director_uuid":5}`, `{"request_id":{}}`, `{"vm":"x"}`,
	`{"vm":{"stemcell":"x"}}`, `{"vm":{"stemcell":{"api_version":"two"}}}`, `{"vm":{"stemcell":{"api_version":1.5}}}`,
	`{"max_retries":"five"}`, `{"default_zone":5}`, `{"calculate":"x"}`, `{"calculate":{"disk_tags":"x"}}`,
	`{"calculate":{"disk_tags":[5]}}`, `{"request_timeout":{}}`, `{"skip_verify_ssl":"yes"}`, `{"expunge_vm":"no"}`,
	`{"endpoint":["x"]}`, `{"default_cpu_speed":1.5}`, `{"cloudstack":{"api_key":5}}`}

// malformedRequests are every method fed wrong types at each argument
// position, missing and extra arguments, and bad contexts.
func malformedRequests() []string {
	var reqs []string
	add := func(method string, args []any, context string) {
		a, _ := json.Marshal(args)
		reqs = append(reqs, fmt.Sprintf(`{"method":%q,"arguments":%s,"context":%s,"api_version":2}`, method, a, context))
	}
	const ctx = `{"director_uuid":"d","request_id":"cpi-1"}`
	for method, valid := range validArguments {
		for i := range valid {
			values := wrongValues
			if _, isObject := valid[i].(map[string]any); isObject {
				values = append(slices.Clone(values), wrongObjects...)
			}
			for _, v := range values {
				args := slices.Clone(valid)
				args[i] = v
				add(method, args, ctx)
			}
			add(method, valid[:i], ctx)
		}
		add(method, append(slices.Clone(valid), "extra", 5), ctx)
		for _, c := range badContexts {
			add(method, valid, c)
		}
	}
	return append(reqs, `{"method":5,"arguments":[]}`, `{"method":"info","arguments":"x"}`,
		`{"method":"info","arguments":{}}`, `{"method":"info","arguments":[],"api_version":"2"}`,
		`{"method":"info","arguments":[],"api_version":2.5}`, `{"method":null,"arguments":[]}`, `[]`, `"info"`, `5`,
		`{"method":"info","arguments":[]} {}`, `{"method":["info"],"arguments":{}}`)
}

// TestNoAnswerNamesAGoType feeds every method every kind of wrong input and
// fails on an answer whose message names a Go type.
func TestNoAnswerNamesAGoType(t *testing.T) {
	good := testconfig.Write(t, testconfig.Good)
	reqs := malformedRequests()
	bad := 0
	for _, req := range reqs {
		resp, _ := call(t, Files{ConfigPath: good}, req)
		if resp.Error == nil {
			continue // well typed after all: an extra argument, a null where null is fine
		}
		if m := resp.Error.Message; namesGoType(m) {
			bad++
			if bad <= 40 {
				t.Errorf("%s\n  answered %q", req, m)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d malformed requests got a message naming a Go type", bad, len(reqs))
	}
}

func namesGoType(message string) bool {
	return goWords.MatchString(strings.ReplaceAll(message, "cpi.json", "cpi-json"))
}

// TestGoWordsCatchGoTypeNames: the test above can fail.
func TestGoWordsCatchGoTypeNames(t *testing.T) {
	for _, m := range []string{"json: cannot unmarshal string into Go value of type map[string]interface {}",
		"cannot unmarshal number into Go struct field cpi.stemcellProps.name of type string", "[]apiv1.DiskCID",
		"of type int", "of type float64"} {
		if !namesGoType(m) {
			t.Errorf("%q not caught", m)
		}
	}
	for _, m := range []string{"arguments[1] (cloud_properties): expected an object, got a string",
		"stemcell cloud_properties.name: expected a string, got a number", "expected an integer, got true or false",
		"CPI config /tmp/x/cpi.json: decoding: cloudstack.max_retries: expected an integer, got a string"} {
		if namesGoType(m) {
			t.Errorf("%q caught", m)
		}
	}
}
