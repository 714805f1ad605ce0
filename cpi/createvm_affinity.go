package cpi

// create_vm's third step, the first that may make something: the affinity
// group the VM joins, found or created. A group outlives its VMs, so a
// failed create_vm leaves it for the next.

// affinityGroup is the id of the group a, found or created; none when a
// names no group.
func (c catalog) affinityGroup(a affinityWant) ([]string, error) {
	if a.name == "" {
		return nil, nil
	}
	id, err := c.cloud.FindOrCreateAffinityGroup(a.name, a.kind)
	if err != nil {
		return nil, err
	}
	return []string{id}, nil
}
