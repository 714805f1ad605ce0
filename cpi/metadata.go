package cpi

import (
	"encoding/json"
	"strings"
)

// metadataTags turns director metadata into tag values: strings as they
// are, numbers and booleans as their JSON text, nested objects and arrays
// JSON-encoded, null left out. Empty values stay here; the CloudStack layer
// drops them, since createTags refuses them.
func metadataTags(meta json.Marshaler) map[string]string {
	raw, err := meta.MarshalJSON()
	tags := map[string]string{}
	var m map[string]json.RawMessage
	if err != nil || json.Unmarshal(raw, &m) != nil {
		return tags
	}
	for k, v := range m {
		var s string
		switch {
		case string(v) == "null":
		case json.Unmarshal(v, &s) == nil:
			tags[k] = s
		default:
			tags[k] = compactJSON(v)
		}
	}
	return tags
}

func compactJSON(raw json.RawMessage) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	var v any
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if d.Decode(&v) != nil || enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
