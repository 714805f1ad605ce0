package cpi

import (
	"crypto/rand"
	"encoding/hex"
	"iter"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// attemptToken makes each create_stemcell's template name its own, so that
// after a lost answer the call finds exactly what it created.
func attemptToken() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail on Linux
	return hex.EncodeToString(b)
}

// markLifetime bounds how long a create_stemcell can run after it created
// its template: the stemcell timeout, then deleting what failed (a job),
// then margin for the requests around them.
func (c request) markLifetime() time.Duration {
	return c.cfg.Stemcell.Timeout.D() + c.cfg.CloudStack.JobTimeout.D() + 15*time.Minute
}

// templateLeftovers is the part that sweeps what interrupted
// create_stemcell calls left: it only lists and deletes own templates.
type templateLeftovers struct {
	request
	cloud cloudstack.OwnedTemplates
}

// leftovers are this director's templates that a create_stemcell which
// no longer runs left marked incomplete: killed, or answered before
// CloudStack let go of the template.
func (c templateLeftovers) leftovers(all []cloudstack.Template) []string {
	now := time.Now()
	seen := map[string]bool{}
	var ids []string
	for _, t := range all {
		m, ok := t.Mark()
		if seen[t.ID] || !ok || !m.Incomplete || m.Director != c.ctx.DirectorUUID || m.Running(now) {
			continue
		}
		seen[t.ID] = true
		ids = append(ids, t.ID)
	}
	return ids
}

// sweepTemplates deletes the leftovers CloudStack lets go of and logs how
// many it removed and how many remain. It never fails the call: what it
// cannot remove now, a later call removes.
func (c templateLeftovers) sweepTemplates() {
	all, err := c.cloud.OwnTemplates("")
	if err != nil {
		c.logger.Warn("stemcell", "looking for templates that interrupted create_stemcell calls left: %s", err)
		return
	}
	ids := c.leftovers(all)
	if len(ids) == 0 {
		return
	}
	var removed, remain []string
	var last error
	for _, id := range ids {
		if err := c.cloud.DeleteTemplate(id, false); err != nil {
			remain, last = append(remain, id), err
			continue
		}
		removed = append(removed, id)
	}
	if len(removed) > 0 {
		c.logger.Info("stemcell", "removed %d template(s) that interrupted create_stemcell calls left: %s",
			len(removed), strings.Join(removed, ", "))
	}
	if len(remain) > 0 {
		c.logger.Warn("stemcell", "%d template(s) that interrupted create_stemcell calls left remain until CloudStack "+
			"lets them be deleted: %s (last refusal: %s)", len(remain), strings.Join(remain, ", "), last)
	}
}

// leftover is one thing an interrupted call left, named for the logs.
type leftover struct{ id, name string }

// deleteLeftovers deletes each leftover as left yields it (so a check that
// asks CloudStack runs just before its delete), of a kind ("disk") that
// interrupted calls of a method ("create_disk") left for scope ("for VM
// x"). Failures are logged: a leftover blocks nothing.
func (c request) deleteLeftovers(kind, method, scope string, left iter.Seq[leftover], del func(id string) error) {
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
