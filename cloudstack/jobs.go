package cloudstack

import (
	"encoding/json"
	"errors"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
)

// jobPolicy is our own async-job wait. cloudstack-go's sleeps 1 s, 2 s … 15 s
// between polls, which costs up to 15 s of dead time per job. Ours waits a
// fifth of the time the job has taken so far, at least 250 ms and at most
// 2 s: a job is never noticed more than 20 % (or 250 ms) late, and a long
// one costs a poll every 2 s.
type jobPolicy struct {
	first, max, timeout time.Duration
}

// next is the wait before the next poll of something elapsed old.
func (p jobPolicy) next(elapsed time.Duration) time.Duration {
	return min(max(elapsed/5, p.first), p.max)
}

type jobStatus struct {
	JobID         string          `json:"jobid"`
	JobStatus     int             `json:"jobstatus"`
	JobResultCode int             `json:"jobresultcode"`
	JobResultType string          `json:"jobresulttype"`
	JobResult     json.RawMessage `json:"jobresult"`
	// Created and Completed are the job's own dates (AsyncJobResponse's
	// created and completed), to the second.
	Created   string `json:"created"`
	Completed string `json:"completed"`
}

type jobFailure struct {
	ErrorCode   int    `json:"errorcode"`
	CSErrorCode int    `json:"cserrorcode"`
	ErrorText   string `json:"errortext"`
}

// waitJob polls queryAsyncJobResult until the job of command ends and
// returns its jobresult object ({"<entity>": {...}}).
func (c *Client) waitJob(command, jobID string) (json.RawMessage, error) {
	// The first poll comes when the command's jobs have ended so far, or
	// the quickest learned (jobtimes.go); after it, the schedule's.
	return c.pollJob(command, jobID, c.firstPoll(command))
}

// pollJob is waitJob with its first poll after delay.
func (c *Client) pollJob(command, jobID string, delay time.Duration) (json.RawMessage, error) {
	start := time.Now()
	var pending time.Duration // when a poll last found the job running
	for {
		time.Sleep(delay)
		asked := time.Now()
		st, err := c.queryJob(jobID)
		sent := c.pollSent(jobID, asked).Sub(start)
		var throttle *ThrottledError
		switch {
		case errors.As(err, &throttle):
			// A poll the throttle refused to request_timeout's end says
			// nothing of the job, which runs on: the job's bound decides.
			c.logger.Warn(logTag, "job %s of %s: polls refused by CloudStack's API throttle for %s; polling on "+
				"within job_timeout %s", jobID, command, throttle.Elapsed.Round(time.Millisecond), c.jobs.timeout)
		case err != nil:
			return nil, err
		case st.JobStatus == 1:
			c.learnJob(command, pending, sent, st.dated())
			return st.JobResult, nil
		case st.JobStatus == 2:
			return nil, jobError(command, jobID, st)
		}
		if time.Since(start)+delay > c.jobs.timeout {
			return nil, &JobTimeoutError{Command: command, JobID: jobID, Waited: time.Since(start), Throttled: throttle}
		}
		if err == nil {
			pending = sent
		}
		delay = c.jobs.next(time.Since(start))
	}
}

// dated is the job's duration by its own dates, which CloudStack gives to
// the second (so the job took less than a second more or less); -1 when
// it gave none.
func (st *jobStatus) dated() time.Duration {
	created, completed := csTime(st.Created), csTime(st.Completed)
	if created.IsZero() || completed.Before(created) {
		return -1
	}
	return completed.Sub(created)
}

// pollSent is when the job's latest poll was sent (the transport's
// record), else asked: the job's state is of then, not of when the answer
// came back after the bucket's and the throttle's waits.
func (c *Client) pollSent(jobID string, asked time.Time) time.Time {
	if v, ok := c.api.polls.LoadAndDelete(jobID); ok {
		return v.(time.Time)
	}
	return asked
}

// queryJob goes through CustomRequest: the generated QueryAsyncJobResult
// retries every error three times, 401 included.
func (c *Client) queryJob(jobID string) (*jobStatus, error) {
	p := &csgo.CustomServiceParams{}
	p.SetParam("jobid", jobID)
	var st jobStatus
	custom, _ := c.cs.Custom.(*csgo.CustomService)
	if err := custom.CustomRequest("queryAsyncJobResult", p, &st); err != nil {
		return nil, c.fail("queryAsyncJobResult", err)
	}
	return &st, nil
}

func jobError(command, jobID string, st *jobStatus) error {
	var f jobFailure
	if err := json.Unmarshal(st.JobResult, &f); err != nil || f.ErrorText == "" {
		f.ErrorText = string(st.JobResult)
	}
	// AsyncJobManagerImpl.cleanupLeftOverJobs fails the jobs a management
	// server restart interrupted and leaves them no result to read.
	interrupted := len(st.JobResult) == 0 || string(st.JobResult) == "null"
	if interrupted {
		f.ErrorText = "the job failed without a result; CloudStack's management server was probably restarted while it ran"
	}
	if f.ErrorCode == 0 {
		f.ErrorCode = st.JobResultCode
	}
	return &APIError{Command: command, ErrorCode: f.ErrorCode, CSErrorCode: f.CSErrorCode, Text: f.ErrorText, JobID: jobID,
		Interrupted: interrupted}
}

// waitJobBeside waits for a job that ran beside one the caller has just
// waited for: it has run as long, so it is polled at once, and only if it
// is still running does the usual schedule follow, not the wait for the
// quickest job learned (firstPoll), which it has outlived already.
func (c *Client) waitJobBeside(command, jobID string) (json.RawMessage, error) {
	st, err := c.queryJob(jobID)
	switch {
	case err == nil && st.JobStatus == 1:
		return st.JobResult, nil
	case err == nil && st.JobStatus == 2:
		return nil, jobError(command, jobID, st)
	}
	return c.pollJob(command, jobID, c.jobs.firstPoll(c.expectedJob(command)))
}
