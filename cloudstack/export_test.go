package cloudstack

import "time"

// WaitJob exposes the job waiter to the tests, which feed it job answers
// of their own.
func (c *Client) WaitJob(command, jobID string) ([]byte, error) {
	return c.waitJob(command, jobID)
}

// SetStateLockWait replaces the timer that bounds the wait for the state
// file's lock, so that a test of a held lock does not wait for it.
func (c *Client) SetStateLockWait(after func(time.Duration) <-chan time.Time) {
	if c.state != nil {
		c.state.after = after
	}
}
