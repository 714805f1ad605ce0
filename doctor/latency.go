package doctor

import (
	"fmt"
	"slices"
	"time"
)

// latencySamples is how many answers of listZones the latency check times:
// the earlier checks' calls are not timed, as the first pays for the TLS
// handshake and some read far more than others.
const latencySamples = 5

// checkLatency measures CloudStack's answers to a cheap read and sets them
// against cloudstack.job_poll_interval, job_poll_max_interval and
// request_timeout: the CPI polls a job first after the interval, then after
// a fifth of the job's age, kept between the interval and the maximum, so a
// poll that takes longer than the maximum pause keeps the management server
// answering polls all the time,
// and an answer near request_timeout times calls out.
func (r *run) checkLatency() {
	for range latencySamples {
		if err := r.timed(func() error { _, err := r.cloud.Zones(); return err }); err != nil {
			r.fail(CheckPolling, "listZones failed: "+err.Error(), "give the account a role that may call listZones")
			return
		}
	}
	samples := slices.Clone(r.latency)
	slices.Sort(samples)
	median, worst := samples[len(samples)/2], samples[len(samples)-1]
	cs := r.cfg.CloudStack
	first, most, timeout := cs.JobPollInterval.D(), cs.JobPollMaxInterval.D(), cs.RequestTimeout.D()
	result := fmt.Sprintf("API answers in %s (median of %d; slowest %s); jobs are polled after %s, then every fifth of their age, at most %s",
		round(median), len(samples), round(worst), first, most)
	if r.waited > 0 {
		result += fmt.Sprintf("; %s of waiting on CloudStack's API throttle left out", round(r.waited))
	}
	switch {
	case worst*4 > timeout:
		r.fail(CheckPolling, result+fmt.Sprintf("; the slowest answer is over a quarter of request_timeout %s", timeout),
			fmt.Sprintf("raise cloudstack.request_timeout to at least %s", round(worst*8)))
	case median > most:
		r.fail(CheckPolling, result+"; every poll takes longer than the longest pause between polls",
			fmt.Sprintf("raise cloudstack.job_poll_max_interval to at least %s (and job_poll_interval with it)", round(median*2)))
	default:
		r.pass(CheckPolling, result)
	}
}

func round(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
