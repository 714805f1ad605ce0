package template

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// templateCopyCommands are the commands of templates_copy.go (registerCommands).
func templateCopyCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "copyTemplate", IDKind: model.KindTemplate, Async: copyTemplate},
	}
}

// copyTemplate copies a ready template to other zones
// (TemplateManagerImpl.copyTemplate). The job completes when every copy has
// finished; it fails only if none succeeded.
func copyTemplate(c *kernel.Call) (*kernel.AsyncJob, error) {
	t, _ := model.ByID(c.State.Templates, c.Params.Get("id"))
	spec := &kernel.AsyncJob{InstanceType: "Template",
		CmdClass: "org.apache.cloudstack.api.command.admin.template.CopyTemplateCmdByAdmin"}
	if t != nil {
		spec.InstanceID = t.ID
	}
	dests, source, err := copyPlan(c, t)
	if err != nil {
		return spec.Failing(err), nil
	}
	first, targets := copyTargets(t, dests, c.Engine.Now())
	progress := startCopies(c, t, source, targets)
	c.Changed()
	if len(targets) > 0 {
		spec.Await = progress.done
	}
	total := len(dests)
	spec.Run = func() (any, error) {
		if progress.failures() >= total {
			return nil, kernel.InternalError("Failed to copy Template")
		}
		cp := first
		if live := t.CopyIn(first.ZoneID); live != nil {
			cp = live
		}
		return map[string]any{"template": views.TemplateView(c, views.TemplateRow{Template: t, Copy: cp})}, nil
	}
	return spec, nil
}

// copyTargets is the destination zones that need a copy: a ready copy is
// kept ("don't need to copy"), one in progress is waited for, a failed or
// abandoned one replaced. first is the copy the answer shows.
func copyTargets(t *model.Template, dests []*model.Zone, now time.Time) (first *model.TemplateCopy, targets []*model.Zone) {
	for _, z := range dests {
		cp := t.CopyIn(z.ID)
		if cp != nil && cp.Ready() {
			if first == nil {
				first = cp
			}
			continue // "don't need to copy"
		}
		if cp != nil && cp.DownloadState != model.DlInProgress {
			cp.Removed = &now // a failed or abandoned copy is replaced
			cp = nil
		}
		if cp == nil {
			cp = &model.TemplateCopy{ZoneID: z.ID, DownloadState: model.DlNotDownloaded, Created: now}
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
func startCopies(c *kernel.Call, t *model.Template, source *model.TemplateCopy, targets []*model.Zone) *copyProgress {
	progress := &copyProgress{pending: len(targets), done: make(chan struct{})}
	for _, z := range targets {
		name := z.Name
		ssvmOf(c).startCopy(t, source, z.ID, func(ok bool) {
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
func copyPlan(c *kernel.Call, t *model.Template) ([]*model.Zone, *model.TemplateCopy, *kernel.APIError) {
	p := c.Params
	if t == nil || t.Removed != nil {
		return nil, nil, kernel.ParamError("Unable to find Template with id")
	}
	destID, destIDs := p.Get("destzoneid"), p.List("destzoneids")
	switch {
	case destID != "" && len(destIDs) > 0:
		return nil, nil, kernel.ServerParamError("Both destzoneid and destzoneids cannot be specified at the same time.")
	case destID == "" && len(destIDs) == 0:
		return nil, nil, kernel.ServerParamError("Either destzoneid or destzoneids parameters have to be specified.")
	case destID != "":
		destIDs = []string{destID}
	}
	srcID := p.Get("sourcezoneid")
	var dests []*model.Zone
	for _, id := range destIDs {
		if srcID != "" && strings.EqualFold(id, srcID) {
			return nil, nil, kernel.ParamError("Please specify different source and destination zones.")
		}
		z := zoneByParam(c.State, id)
		if z == nil {
			return nil, nil, kernel.ParamError("Please specify a valid destination zone.")
		}
		if !slices.Contains(dests, z) {
			dests = append(dests, z)
		}
	}
	var source *model.TemplateCopy
	if srcID != "" {
		z := zoneByParam(c.State, srcID)
		if z == nil {
			return nil, nil, kernel.ParamError("Please specify a valid source zone.")
		}
		if cp := t.CopyIn(z.ID); cp != nil && cp.Ready() {
			source = cp
		}
	} else {
		for _, cp := range t.LiveCopies() {
			if cp.Ready() && source == nil {
				source = cp
			}
		}
	}
	if source == nil {
		return nil, nil, kernel.ParamError("There is no Template %s ready on image store.", t.Describe())
	}
	return dests, source, nil
}
