package doctor

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// throttleFix is what to do about a check whose calls CloudStack's API
// throttle refused until request_timeout ran out.
const throttleFix = "run doctor again when the account's other clients (CPI processes, directors, scripts) are " +
	"quieter, raise cloudstack.request_timeout so that calls wait longer, or run doctor with a root admin's keys, " +
	"which the throttle exempts; the CPI's calls wait on the throttle the same way"

// markThrottled makes each failed row whose call the throttle refused say
// so first and give throttleFix: the check's own fix would send the
// operator after a fault nobody saw.
func (r *run) markThrottled() {
	for i := range r.results {
		res := &r.results[i]
		if !res.OK && strings.Contains(res.Result, cloudstack.ThrottledText) {
			res.Result = "throttled, not checked: " + res.Result
			res.Fix = throttleFix
		}
	}
}
