package cpi

import (
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// templateLeftovers is the part that sweeps what interrupted
// create_stemcell calls left: it only lists and deletes own templates.
type templateLeftovers struct {
	callDeps
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
