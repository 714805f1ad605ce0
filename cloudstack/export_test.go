package cloudstack

import "time"

// WaitJob exposes the job waiter to the tests, which feed it job answers
// of their own.
func (c *Client) WaitJob(command, jobID string) ([]byte, error) {
	return c.waitJob(command, jobID)
}

// SetStateLockSleep replaces the sleep between attempts at the state
// file's lock, so that a test of a held lock does not wait for it.
func (c *Client) SetStateLockSleep(sleep func(time.Duration)) {
	if c.state != nil {
		c.state.sleep = sleep
	}
}
