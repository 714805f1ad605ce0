package cloudstack

import (
	"strconv"
	"strings"
)

// OldestSupported is the oldest CloudStack release line the CPI supports:
// every command and parameter this layer sends is in its API and in every
// later release's (a test reads each release's listApis), so no CPI method
// behaves differently on 4.19, 4.20 or 4.22. doctor fails on an older
// cloud.
const OldestSupported = "4.19"

// CloudStackVersion is the management server's version as listCapabilities
// reports it, as "4.20.1.0" (ManagementServerImpl.getVersion); "" when the
// cloud hides it, which it may from 4.21 on
// (expose.cloudstack.version.api.list.capabilities false).
func (c *Client) CloudStackVersion() (string, error) {
	resp, err := c.cs.Configuration.ListCapabilities(c.cs.Configuration.NewListCapabilitiesParams())
	if err != nil {
		return "", c.fail("listCapabilities", err)
	}
	if resp.Capabilities == nil {
		return "", nil
	}
	return resp.Capabilities.Cloudstackversion, nil
}

// Supported says whether a version CloudStack reports is OldestSupported's
// release line or a later one; known is false for a version that names no
// release line (getVersion's "unknown" of a build without one).
func Supported(version string) (supported, known bool) {
	v, ok := releaseLine(version)
	if !ok {
		return false, false
	}
	oldest, _ := releaseLine(OldestSupported)
	return v[0] > oldest[0] || (v[0] == oldest[0] && v[1] >= oldest[1]), true
}

// releaseLine is a version's major and minor number.
func releaseLine(version string) ([2]int, bool) {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return [2]int{}, false
	}
	var line [2]int
	for i := range line {
		n, err := strconv.Atoi(strings.TrimSpace(parts[i]))
		if err != nil || n < 0 {
			return [2]int{}, false
		}
		line[i] = n
	}
	return line, true
}
