package simulator

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

func init() {
	register(
		command{name: "deleteTemplate", idKind: kindTemplate, async: deleteTemplate},
		command{name: "copyTemplate", idKind: kindTemplate, async: copyTemplate},
	)
}

// deleteTemplate removes a template from one zone or all (TemplateManagerImpl.deleteTemplate
// and HypervisorTemplateAdapter.delete). The checks run in the job, as in
// CloudStack, so they fail the job rather than the request.
func deleteTemplate(c *Call) (*asyncJob, error) {
	idParam, zoneParam, forced := c.Params.Get("id"), c.Params.Get("zoneid"), c.Params.Bool("forced", false)
	t, _ := byID(c.st.Templates, idParam)
	spec := &asyncJob{instanceType: "Template",
		cmdClass: "org.apache.cloudstack.api.command.user.template.DeleteTemplateCmd"}
	if t != nil {
		spec.instanceID = t.ID
	}
	spec.run = func() (any, error) {
		if err := c.removeTemplate(t, idParam, zoneParam, forced); err != nil {
			return nil, err
		}
		return map[string]any{"success": true}, nil
	}
	return spec, nil
}

func (c *Call) removeTemplate(t *Template, idParam, zoneParam string, forced bool) *APIError {
	if t == nil || t.Removed != nil {
		return paramError("Unable to find Template with id %s", internalIDText(t, idParam))
	}
	// TemplateManagerImpl.deleteTemplate: VMs using the template first, then
	// the adapter's prepareDelete and delete
	var users []string
	for _, vm := range c.st.VMs {
		// Hook: deployed VMs record their template; expunged ones no longer count.
		if vm.Removed == nil && strings.EqualFold(vm.TemplateID, t.ID) && optEq(zoneParam, vm.ZoneID) {
			users = append(users, fmt.Sprintf(`VM instance {"id":%d,"instanceName":%q,"uuid":%q}`, vm.InternalID, vm.InstanceName, vm.ID))
		}
	}
	if len(users) > 0 && !forced {
		msg := fmt.Sprintf("Unable to delete template [%s] because there are [%d] VM instances using it.", t.describe(), len(users))
		if c.Account.Type == 1 {
			msg += fmt.Sprintf(" Instances list: [%s].", strings.Join(users, ","))
		}
		return paramError("%s", msg)
	}
	// TemplateAdapterBase.prepareDelete
	if t.Format == "ISO" {
		return paramError("Please specify a valid Template.")
	}
	if t.State == tsNotUploaded || t.State == tsUploadInProgress {
		return paramError("The template is either getting uploaded or it may be initiated shortly, please wait for it to be completed")
	}
	if t.Type == "SYSTEM" {
		return paramError("The DomR template cannot be deleted.")
	}
	var doomed []*TemplateCopy
	for _, cp := range t.liveCopies() {
		if zoneParam == "" || strings.EqualFold(cp.ZoneID, zoneParam) {
			doomed = append(doomed, cp)
		}
	}
	// HypervisorTemplateAdapter.delete: a CloudRuntimeException (530), so an
	// upload the monitor has seen start (DOWNLOAD_IN_PROGRESS) is refused too
	for _, cp := range doomed {
		if cp.DownloadState == dlInProgress {
			return internalError("Please specify a template that is not currently being downloaded.")
		}
	}
	now := c.srv.now()
	for _, cp := range doomed {
		cp.Removed = &now
		c.srv.xfer.stop(copyKey(t.ID, cp.ZoneID))
		c.srv.xfer.removeImage(t.ID, cp.ZoneID)
	}
	if len(t.liveCopies()) == 0 {
		t.Removed, t.State = &now, tsInactive
	}
	c.changed()
	return nil
}

// internalIDText is the numeric id CloudStack prints for a template.
func internalIDText(t *Template, param string) string {
	if t != nil {
		return fmt.Sprint(t.InternalID)
	}
	return param
}

// copyTemplate copies a ready template to other zones
// (TemplateManagerImpl.copyTemplate). The job completes when every copy has
// finished; it fails only if none succeeded.
func copyTemplate(c *Call) (*asyncJob, error) {
	p := c.Params
	t, _ := byID(c.st.Templates, p.Get("id"))
	spec := &asyncJob{instanceType: "Template",
		cmdClass: "org.apache.cloudstack.api.command.admin.template.CopyTemplateCmdByAdmin"}
	if t != nil {
		spec.instanceID = t.ID
	}
	dests, source, err := c.copyPlan(t)
	if err != nil {
		spec.run = func() (any, error) { return nil, err }
		return spec, nil
	}
	var (
		mu      sync.Mutex
		failed  []string
		first   *TemplateCopy
		targets []*Zone
	)
	now := c.srv.now()
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
	done := make(chan struct{})
	pending := len(targets)
	for _, z := range targets {
		name := z.Name
		c.srv.startCopy(t, source, z.ID, func(ok bool) {
			mu.Lock()
			defer mu.Unlock()
			if !ok {
				failed = append(failed, name)
			}
			if pending--; pending == 0 {
				close(done)
			}
		})
	}
	c.changed()
	if len(targets) > 0 {
		spec.await = done
	}
	total := len(dests)
	spec.run = func() (any, error) {
		mu.Lock()
		nFailed := len(failed)
		mu.Unlock()
		if nFailed >= total {
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
