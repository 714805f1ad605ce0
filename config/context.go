package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// DirectorContextKeys are the keys a director puts in a call's context
// itself: bosh-director's ExternalCpi#invoke_cpi_method
// (lib/cloud/external_cpi.rb) builds {director_uuid, request_id}, adds
// {vm: {stemcell: {api_version}}} when it knows the stemcell, then merges
// the cpi-config's properties over them; bosh create-env sends director_uuid
// and vm. They are not cloudstack keys, and the strict check lets them by.
var DirectorContextKeys = []string{"director_uuid", "request_id", "vm"}

// ContextProperties picks the cpi-config properties out of a call's context:
// every key but DirectorContextKeys. The director merges a CPI's properties
// flat into the context (external_cpi.rb: context.merge!(properties)); they
// are the CPI's "Global Configuration" (docs-bosh cpi-config.md), i.e. its
// own configuration section, as the AWS and OpenStack CPIs read them
// (bosh-aws-cpi-release bin/aws_cpi: cloud_properties['aws'].merge!(context);
// bosh-openstack-cpi-release CpiLambda.create:
// cloud_properties['openstack'].merge!(context)): here the keys of cpi.json's
// cloudstack section. An absent or null context has none.
func ContextProperties(context json.RawMessage) (map[string]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(context)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &all); err != nil {
		return nil, fmt.Errorf("the call context must be a JSON object")
	}
	props := map[string]json.RawMessage{}
	for k, v := range all {
		if !slices.Contains(DirectorContextKeys, k) {
			props[k] = v
		}
	}
	return props, nil
}

// PropertyNames are props' keys, sorted: what may be logged of them, never
// their values (they carry API keys).
func PropertyNames(props map[string]json.RawMessage) []string {
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// LoadForCall is Load for one call: the cpi-config properties of its
// context (ContextProperties), if any, replace the keys of the same name in
// cpi.json's cloudstack section before the file is defaulted and validated.
func LoadForCall(path string, props map[string]json.RawMessage) (Config, error) {
	if len(props) == 0 {
		return Load(path)
	}
	if err := checkProperties(props); err != nil {
		return Config{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading CPI config: %w", err)
	}
	cfg, err := parseMerged(data, props)
	if err != nil {
		return Config{}, fmt.Errorf("CPI config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseWithProperties is Parse with props merged over the cloudstack
// section. The merge is by top-level key, as Ruby's Hash#merge! in the AWS
// and OpenStack CPIs: a property replaces cpi.json's key of that name
// whole (calculate included), and null removes it, so its default applies.
// Each property is held to the rules of the key it replaces (an unknown one
// is named), and the merged file to Validate's.
func ParseWithProperties(data []byte, props map[string]json.RawMessage) (Config, error) {
	if err := checkProperties(props); err != nil {
		return Config{}, err
	}
	return parseMerged(data, props)
}

func parseMerged(data []byte, props map[string]json.RawMessage) (Config, error) {
	merged, err := mergeCloudStack(data, props)
	if err != nil {
		return Config{}, err
	}
	cfg, err := Parse(merged)
	if err != nil {
		return Config{}, fmt.Errorf("the call context's cpi-config properties (%s) merged over cloudstack: %w",
			strings.Join(PropertyNames(props), ", "), err)
	}
	return cfg, nil
}

// checkProperties names the first property cpi.json's cloudstack section has
// no key for, or whose value that key could not take.
func checkProperties(props map[string]json.RawMessage) error {
	for _, k := range PropertyNames(props) {
		if k == "cloudstack" || strings.HasPrefix(k, "cloudstack.") {
			return fmt.Errorf("the call context has a key %s: a cpi-config's properties are the cloudstack "+
				"section's keys themselves (endpoint, api_key, secret_access_key, default_zone, …), which the director "+
				"merges flat into the context, not nested under cloudstack nor named as the job's properties", k)
		}
	}
	raw := map[string]any{}
	for k, v := range props {
		var value any
		if err := json.Unmarshal(v, &value); err != nil {
			return fmt.Errorf("the call context's %s is not valid JSON", k)
		}
		if value != nil { // null unsets the key: nothing to check
			raw[k] = value
		}
	}
	if err := walkKeys(raw, reflect.TypeOf(CloudStack{}), ""); err != nil {
		return fmt.Errorf("the call context's cpi-config properties: %w (they may be cloudstack keys of cpi.json, "+
			"besides the director's own %s)", err, strings.Join(DirectorContextKeys, ", "))
	}
	return nil
}

// mergeCloudStack writes props over the cloudstack section of cpi.json's
// content. Content that is not an object of objects is returned as it is,
// for Parse to name what is wrong with it.
func mergeCloudStack(data []byte, props map[string]json.RawMessage) ([]byte, error) {
	file, section, ok := sections(data)
	if !ok {
		return data, nil
	}
	for k, v := range props {
		if string(bytes.TrimSpace(v)) == "null" {
			delete(section, k)
		} else {
			section[k] = v
		}
	}
	cs, err := json.Marshal(section)
	if err != nil {
		return nil, fmt.Errorf("merging the call context's cpi-config properties: %w", err)
	}
	file["cloudstack"] = cs
	return json.Marshal(file)
}

// sections splits cpi.json's content into its sections and the keys of its
// cloudstack section; ok is false when either is not an object.
func sections(data []byte) (file, cloudstack map[string]json.RawMessage, ok bool) {
	if json.Unmarshal(data, &file) != nil || file == nil {
		return nil, nil, false
	}
	cloudstack = map[string]json.RawMessage{}
	if cs, has := file["cloudstack"]; has && json.Unmarshal(cs, &cloudstack) != nil {
		return nil, nil, false
	}
	if cloudstack == nil { // "cloudstack": null
		cloudstack = map[string]json.RawMessage{}
	}
	return file, cloudstack, true
}
