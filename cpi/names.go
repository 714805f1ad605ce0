package cpi

// The names the CPI gives in CloudStack: a template's, from stemcell.MF's
// name and version (either may reach the CPI as a number), each cut to
// what CloudStack's column or UI takes.

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
