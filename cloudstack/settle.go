package cloudstack

import "time"

// After a lost answer, a failed poll or a job timeout the CPI does not know
// what its call left; these find it by the unique name the call gave it,
// once no job works on it any more (or the deadline has passed), so that it
// can be removed.

// SettledVolume finds the volume of that exact name; absent is (nil, nil).
func (c *Client) SettledVolume(name string, deadline time.Time) (*Volume, error) {
	return settle(c, deadline, func() (*Volume, bool, error) {
		v, err := c.FindVolume(name)
		return v, v != nil && v.Busy(), err
	})
}

// SettledSnapshot finds the volume's snapshot of that exact name; absent is
// (nil, nil).
func (c *Client) SettledSnapshot(volumeID, name string, deadline time.Time) (*Snapshot, error) {
	return settle(c, deadline, func() (*Snapshot, bool, error) {
		s, err := c.SnapshotNamed(volumeID, name)
		return s, s != nil && s.Busy(), err
	})
}

// SettledVM finds the VM by id once no job works on it; gone is (nil, nil).
func (c *Client) SettledVM(id string, deadline time.Time) (*VM, error) {
	return settle(c, deadline, func() (*VM, bool, error) {
		vm, err := c.FindVM(id)
		return vm, vm != nil && vm.Busy(), err
	})
}

// settle repeats lookup, with the job poll policy's waits, while it finds
// something busy and the deadline allows another look.
func settle[T any](c *Client, deadline time.Time, lookup func() (*T, bool, error)) (*T, error) {
	start := time.Now()
	for {
		found, busy, err := lookup()
		if err != nil || !busy {
			return found, err
		}
		wait := c.jobs.next(time.Since(start))
		if time.Now().Add(wait).After(deadline) {
			return found, nil
		}
		time.Sleep(wait)
	}
}
