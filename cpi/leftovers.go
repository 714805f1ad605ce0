package cpi

import "iter"

// What interrupted calls left, shared by the parts that remove it
// (diskLeftovers, snapshotLeftovers): marks/ tells a leftover from what a
// running call is making; these only delete, log and report.

// leftover is one thing an interrupted call left, named for the logs.
type leftover struct{ id, name string }

// deleteLeftovers deletes each leftover as left yields it (so a check that
// asks CloudStack runs just before its delete), of a kind ("disk") that
// interrupted calls of a method ("create_disk") left for scope ("for VM
// x"). Failures are logged: a leftover blocks nothing.
func (c callDeps) deleteLeftovers(kind, method, scope string, left iter.Seq[leftover], del func(id string) error) {
	removed := 0
	for l := range left {
		if err := del(l.id); err != nil {
			c.logger.Warn("disk", "deleting %s %s (%s), which an interrupted %s left: %s", kind, l.id, l.name, method, err)
			continue
		}
		removed++
	}
	if removed > 0 {
		c.logger.Info("disk", "deleted %d %s(s) that interrupted %s calls %s left", removed, kind, method, scope)
	}
}

// undoing names what a failed call may have made, for the messages of its
// undo: a kind ("volume") with the unique name the call gave it, where it
// is (" of disk x", or ""), and the method that made it ("create_disk").
type undoing struct{ kind, name, where, method string }

// madeThing is what the lookup by the unique name found once no job works on
// it (or the wait's time was up: busy).
type madeThing struct {
	id, state string
	busy      bool
}

// removeMade ends the undo of a failed call once the lookup by its unique
// name ended (lookupErr its failure, found nil for nothing): it deletes
// what the call made, so that the director never gets an error while
// something it cannot know of stays behind, and says in failed's error
// what is left.
func (c callDeps) removeMade(failed error, u undoing, found *madeThing, lookupErr error, del func(id string) error) error {
	switch {
	case lookupErr != nil:
		return leftBehind(failed, "a %s named %s%s may still exist in CloudStack (looking it up failed: %v)",
			u.kind, u.name, u.where, lookupErr)
	case found == nil:
		return nothingLeft(failed, "CloudStack has no %s named %s", u.kind, u.name)
	case found.busy:
		return leftBehind(failed, "%s %s (%s) is still %s after %s; delete it once CloudStack has finished it",
			u.kind, found.id, u.name, found.state, c.cfg.CloudStack.JobTimeout)
	}
	if err := del(found.id); err != nil {
		return leftBehind(failed, "%s %s (%s, %s) is still in CloudStack: deleting it failed: %v",
			u.kind, found.id, u.name, found.state, err)
	}
	c.logger.Info("disk", "deleted %s %s (%s), which the failed %s had made", u.kind, found.id, u.name, u.method)
	return nothingLeft(failed, "the %s it made, %s (%s), was deleted", u.kind, found.id, u.name)
}
