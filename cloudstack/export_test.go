package cloudstack

// WaitJob exposes the job waiter to the tests until a CPI method drives it.
func (c *Client) WaitJob(command, jobID string) ([]byte, error) {
	return c.waitJob(command, jobID)
}
