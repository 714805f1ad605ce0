package cloudstack

// WaitJob exposes the job waiter to the tests, which feed it job answers
// of their own.
func (c *Client) WaitJob(command, jobID string) ([]byte, error) {
	return c.waitJob(command, jobID)
}
