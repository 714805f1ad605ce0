package simulator

import (
	"slices"
	"strings"
	"sync"
	"time"
)

func init() {
	register(
		command{name: "copyTemplate", idKind: kindTemplate, async: copyTemplate},
	)
}

// copyTemplate copies a ready template to other zones
// (TemplateManagerImpl.copyTemplate). The job completes when every copy has
// finished; it fails only if none succeeded.
func copyTemplate(c *Call) (*asyncJob, error) {
	t, _ := byID(c.st.Templates, c.Params.Get("id"))
	spec := &asyncJob{instanceType: "Template",
		cmdClass: "org.apache.cloudstack.api.command.admin.template.CopyTemplateCmdByAdmin"}
	if t != nil {
		spec.instanceID = t.ID
	}
	dests, source, err := c.copyPlan(t)
	if err != nil {
		return spec.failing(err), nil
	}
	first, targets := copyTargets(t, dests, c.srv.now())
	progress := c.startCopies(t, source, targets)
	c.changed()
	if len(targets) > 0 {
		spec.await = progress.done
	}
	total := len(dests)
	spec.run = func() (any, error) {
		if progress.failures() >= total {
			return nil, internalError("Failed to copy Template")
		}
		cp := first
		if live := t.copyIn(first.ZoneID); live != nil {
			cp = live
		}
		return map[string]any{"template": c.templateView(templateRow{t, cp})}, nil
	}
	return spec, nil
}

// copyTargets is the destination zones that need a copy: a ready copy is
// kept ("don't need to copy"), one in progress is waited for, a failed or
// abandoned one replaced. first is the copy the answer shows.
func copyTargets(t *Template, dests []*Zone, now time.Time) (first *TemplateCopy, targets []*Zone) {
	for _, z := range dests {
		cp := t.copyIn(z.ID)
		if cp != nil && cp.ready() {
			if first == nil {
				first = cp
			}
			continue // "don't need to copy"
		}
		if cp != nil && cp.DownloadState != dlInProgress {
			cp.Removed = &now // a failed or abandoned copy is replaced
			cp = nil
		}
		if cp == nil {
			cp = &TemplateCopy{ZoneID: z.ID, DownloadState: dlNotDownloaded, Created: now}
			t.Copies = append(t.Copies, cp)
		}
		if first == nil {
			first = cp
		}
		targets = append(targets, z)
	}
	return first, targets
}

// copyProgress counts the copies of one copyTemplate as they finish; done
// closes when the last has.
type copyProgress struct {
	mu      sync.Mutex
	failed  []string
	pending int
	done    chan struct{}
}

func (p *copyProgress) failures() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.failed)
}

// startCopies starts a copy into each target zone.
func (c *Call) startCopies(t *Template, source *TemplateCopy, targets []*Zone) *copyProgress {
	progress := &copyProgress{pending: len(targets), done: make(chan struct{})}
	for _, z := range targets {
		name := z.Name
		c.srv.startCopy(t, source, z.ID, func(ok bool) {
			progress.mu.Lock()
			defer progress.mu.Unlock()
			if !ok {
				progress.failed = append(progress.failed, name)
			}
			if progress.pending--; progress.pending == 0 {
				close(progress.done)
			}
		})
	}
	return progress
}

// copyPlan checks copyTemplate's parameters and finds the source copy.
func (c *Call) copyPlan(t *Template) ([]*Zone, *TemplateCopy, *APIError) {
	p := c.Params
	if t == nil || t.Removed != nil {
		return nil, nil, paramError("Unable to find Template with id")
	}
	destID, destIDs := p.Get("destzoneid"), p.List("destzoneids")
	switch {
	case destID != "" && len(destIDs) > 0:
		return nil, nil, serverParamError("Both destzoneid and destzoneids cannot be specified at the same time.")
	case destID == "" && len(destIDs) == 0:
		return nil, nil, serverParamError("Either destzoneid or destzoneids parameters have to be specified.")
	case destID != "":
		destIDs = []string{destID}
	}
	srcID := p.Get("sourcezoneid")
	var dests []*Zone
	for _, id := range destIDs {
		if srcID != "" && strings.EqualFold(id, srcID) {
			return nil, nil, paramError("Please specify different source and destination zones.")
		}
		z := c.st.zoneByParam(id)
		if z == nil {
			return nil, nil, paramError("Please specify a valid destination zone.")
		}
		if !slices.Contains(dests, z) {
			dests = append(dests, z)
		}
	}
	var source *TemplateCopy
	if srcID != "" {
		z := c.st.zoneByParam(srcID)
		if z == nil {
			return nil, nil, paramError("Please specify a valid source zone.")
		}
		if cp := t.copyIn(z.ID); cp != nil && cp.ready() {
			source = cp
		}
	} else {
		for _, cp := range t.liveCopies() {
			if cp.ready() && source == nil {
				source = cp
			}
		}
	}
	if source == nil {
		return nil, nil, paramError("There is no Template %s ready on image store.", t.describe())
	}
	return dests, source, nil
}
