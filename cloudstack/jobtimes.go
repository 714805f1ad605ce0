package cloudstack

import (
	"strings"
	"time"
)

// Job polling learns, in the host's state file, how long each command's
// jobs take on each endpoint, so that the first poll of a job comes about
// when it ends instead of polling it from job_poll_interval on: with 2 s
// deploys that is one or two polls instead of eight. A command not yet
// seen is first polled when the quickest job learned on the endpoint would
// have ended (firstPoll), then on the schedule of jobPolicy.next.

// jobTimes is what the state file keeps of one command's jobs: an
// exponentially weighted mean of their durations.
type jobTimes struct {
	MeanMS float64 `json:"mean_ms"`
	N      int     `json:"n"`
}

const (
	// jobTimesWeight is the weight of the latest job in the mean: a few
	// jobs follow a changed cloud, one slow job does not move it far.
	jobTimesWeight = 0.3
	// earlyShare lowers the estimate from a job the first poll found
	// done, which may have ended well before: the mean creeps down until a
	// first poll comes early, and the bracket of that job lifts it again.
	earlyShare = 0.9
	// outlierSpan bounds a sample to this factor of the mean either way
	// before it is weighed: one job stuck behind others (a minute among
	// 2 s deploys) lifts the first poll of the next ones by 30 % at most,
	// never to the minute, so no job is noticed much after it ends; a
	// lasting change is followed within a few jobs.
	outlierSpan = 2.0
)

func (c *Client) jobKey(command string) string { return stateKey(c.endpoint) + " " + command }

// expectedJob is how long the command's jobs took so far; 0 when unknown
// (no state, or not seen).
func (c *Client) expectedJob(command string) time.Duration {
	if c.state == nil {
		return 0
	}
	var expected time.Duration
	c.state.view(func(st *sharedState) {
		if t := st.Jobs[c.jobKey(command)]; t != nil && t.N > 0 && t.MeanMS > 0 {
			expected = time.Duration(t.MeanMS * float64(time.Millisecond))
		}
	})
	return expected
}

// learnJob records a job of command that was pending at the poll at
// pending (0: none was) and done at the poll at done, both since the wait
// began: it ended between them. dated is its duration by its own dates,
// to the second (-1: none).
func (c *Client) learnJob(command string, pending, done, dated time.Duration) {
	if c.state == nil {
		return
	}
	sample := time.Duration(float64(done) * earlyShare)
	if pending > 0 {
		sample = (pending + done) / 2
	}
	// Polls that waited for the bucket's slot or the throttle find a job
	// done long after it ended (at 200 CPI processes a poll waits 9 s):
	// past what its dates allow, the dates say more (half a second for a
	// job within one).
	if dated >= 0 && sample > dated+time.Second {
		sample = max(dated, time.Second/2)
	}
	ms := float64(sample) / float64(time.Millisecond)
	c.state.update(func(st *sharedState) {
		if st.Jobs == nil {
			st.Jobs = map[string]*jobTimes{}
		}
		t := st.Jobs[c.jobKey(command)]
		if t == nil || t.N == 0 {
			st.Jobs[c.jobKey(command)] = &jobTimes{MeanMS: ms, N: 1}
			return
		}
		ms = min(max(ms, t.MeanMS/outlierSpan), t.MeanMS*outlierSpan)
		t.MeanMS += jobTimesWeight * (ms - t.MeanMS)
		t.N++
	})
}

// quickestJob is the shortest expected duration of any command's jobs on
// this endpoint; 0 when none is learned.
func (c *Client) quickestJob() time.Duration {
	if c.state == nil {
		return 0
	}
	prefix := c.jobKey("")
	var quickest float64
	c.state.view(func(st *sharedState) {
		for key, t := range st.Jobs {
			if strings.HasPrefix(key, prefix) && t != nil && t.N > 0 && t.MeanMS > 0 &&
				(quickest == 0 || t.MeanMS < quickest) {
				quickest = t.MeanMS
			}
		}
	})
	return time.Duration(quickest * float64(time.Millisecond))
}

// firstPoll is the wait before the first poll of a job of command that
// has just been sent: its command's expected duration when known.
//
// A command not yet seen waits for the quickest job learned on this
// endpoint: no command learned on this cloud takes less, so polls before
// it are mostly wasted (behind 2 s jobs, the schedule's first six of
// eight). It waits at most the schedule's longest gap
// (job_poll_max_interval), the lateness a long job is noticed with anyway:
// on a new host the first job learned is often a slow one (a deploy), and
// a quick command's first job must not wait for it. This lasts until a job
// of the command ends: it teaches the command's own time. With nothing
// learned, the schedule as is.
func (c *Client) firstPoll(command string) time.Duration {
	if expected := c.expectedJob(command); expected > 0 {
		return c.jobs.firstPoll(expected)
	}
	return c.jobs.firstPoll(min(c.quickestJob(), c.jobs.max))
}

// firstPoll is the wait before a job's first poll: expected when known
// (never past the job's bound), else the schedule's.
func (p jobPolicy) firstPoll(expected time.Duration) time.Duration {
	if expected <= p.first {
		return p.first
	}
	return min(expected, p.timeout)
}
