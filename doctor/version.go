package doctor

import (
	"fmt"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// checkVersion reports the version listCapabilities gives and fails a
// cloud older than the oldest release the CPI supports. A cloud that hides
// its version (from 4.21 it may) or names none is not failed: doctor says
// it could not check.
func (r *run) checkVersion() {
	version, err := r.cloud.CloudStackVersion()
	if err != nil {
		r.fail(CheckVersion, "listCapabilities failed: "+err.Error(), "give the account a role that may call listCapabilities")
		return
	}
	supported, known := cloudstack.Supported(version)
	switch {
	case version == "":
		r.unchecked(CheckVersion, "CloudStack hides its version (listCapabilities reports none: "+
			"expose.cloudstack.version.api.list.capabilities is false)", "check by hand that CloudStack is "+
			cloudstack.OldestSupported+" or later, or have an admin set that setting to true")
	case !known:
		r.unchecked(CheckVersion, fmt.Sprintf("CloudStack reports its version as %q", version),
			"check by hand that CloudStack is "+cloudstack.OldestSupported+" or later")
	case !supported:
		r.fail(CheckVersion, fmt.Sprintf("CloudStack %s is older than %s, the oldest release the CPI supports",
			version, cloudstack.OldestSupported), "upgrade CloudStack to "+cloudstack.OldestSupported+" or later")
	default:
		r.pass(CheckVersion, "CloudStack "+version)
	}
}
