package cpi

import (
	"encoding/json"
	"regexp"
	"strings"
)

// flexString takes a string or a number: a stemcell.MF version may reach
// the CPI as either.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexString(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*f = flexString(n.String())
	return nil
}

var notNameChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// maxTemplateName keeps names readable in CloudStack's UI and well inside
// its column, while carrying the stemcell's name and version.
const maxTemplateName = 64

func templateName(name, version string) string {
	name = strings.Trim(notNameChars.ReplaceAllString(name, "-"), "-")
	version = strings.Trim(notNameChars.ReplaceAllString(version, "-"), "-")
	if name == "" {
		name = "bosh-stemcell"
	}
	version = truncate(version, maxTemplateName/2)
	if version == "" {
		return truncate(name, maxTemplateName)
	}
	room := maxTemplateName - len(version) - 1
	return strings.TrimRight(truncate(name, room), "-.") + "-" + version
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstInt(values ...int) int {
	for _, v := range values {
		if v != 0 {
			return v
		}
	}
	return 0
}

func boolOr(v *bool, def bool) bool {
	if v != nil {
		return *v
	}
	return def
}

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
