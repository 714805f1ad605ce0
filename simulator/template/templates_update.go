package template

import (
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// templateUpdateUnmodelled are updateTemplate's parameters beyond the name
// and display text: the simulator refuses them rather than ignore them.
var templateUpdateUnmodelled = []string{"arch", "bootable", "isrouting", "cleanupdetails", "ostypeid", "templatetag",
	"templatetype", "requireshvm", "details", "isdynamicallyscalable", "forceupdateostype", "forcks", "format",
	"sshkeyenabled", "passwordenabled", "sortkey"}

// templateUpdateCommands are the commands of templates_update.go (registerCommands).
func templateUpdateCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "updateTemplate", IDKind: model.KindTemplate, Sync: updateTemplate},
		{Name: "updateIso", IDKind: model.KindTemplate, Sync: updateIso},
	}
}

// updateTemplate is UpdateTemplateCmd through
// TemplateManagerImpl.updateTemplateOrIso, for the name and the display
// text: the template must exist and not be removed, the system template
// (id 1, verifyTemplateId) may not change, and a parameter that is given
// replaces the field, in any template state. Departures: checkAccess
// (OperateEntry) is not modelled, as elsewhere the caller may act on every
// template it can name; the other parameters answer "not implemented".
func updateTemplate(c *kernel.Call) (any, error) { return updateTemplateOrIso(c, "updateTemplate") }

// updateIso is UpdateIsoCmd through the same updateTemplateOrIso, with the
// same departures.
func updateIso(c *kernel.Call) (any, error) { return updateTemplateOrIso(c, "updateIso") }

func updateTemplateOrIso(c *kernel.Call, command string) (any, error) {
	p := c.Params
	t, found := model.ByID(c.State.Templates, p.Get("id"))
	if !found || t.Removed != nil {
		return nil, kernel.ParamError("Unable to find Template/ISO with specified id")
	}
	if t.InternalID == 1 {
		return nil, kernel.ParamError("Unable to update template/iso of specified id")
	}
	for _, k := range templateUpdateUnmodelled {
		if p.Has(k) {
			return nil, kernel.NotImplemented(command + "'s " + k + " is not implemented by the CloudStack simulator")
		}
	}
	if p.Has("name") {
		t.Name = p.Get("name")
	}
	if p.Has("displaytext") {
		t.DisplayText = p.Get("displaytext")
	}
	c.Changed()
	// ApiTemplateIsoResponseServiceImpl.createTemplateUpdateResponse →
	// TemplateJoinDaoImpl.newUpdateResponse, which names the object "iso"
	// for templates and ISOs alike.
	return map[string]any{"iso": views.TemplateUpdateView(c, t)}, nil
}
