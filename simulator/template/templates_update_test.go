package template_test

import (
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/template"
)

// TestUpdateTemplateNameAndDisplayText: updateTemplate changes what it is
// given, in any template state (here NotUploaded), and listTemplates shows
// it; a removed template is not found; parameters the simulator does not
// model are refused, not ignored.
func TestUpdateTemplateNameAndDisplayText(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	up := simtesting.GetUploadParams(t, s, "before", "VHD")
	p := cs.Template.NewUpdateTemplateParams(up.Id)
	p.SetDisplaytext("after, with a mark")
	if _, err := cs.Template.UpdateTemplate(p); err != nil {
		t.Fatal(err)
	}
	l := cs.Template.NewListTemplatesParams("self")
	l.SetId(up.Id)
	got, err := cs.Template.ListTemplates(l)
	if err != nil || got.Count != 1 {
		t.Fatalf("%v %+v", err, got)
	}
	if listed := got.Templates[0]; listed.Displaytext != "after, with a mark" || listed.Name != "before" || listed.Status != "NotUploaded" {
		t.Fatalf("after updateTemplate: name %q displaytext %q status %q", listed.Name, listed.Displaytext, listed.Status)
	}
	r := s.Call(map[string]string{"command": "updateTemplate", "id": up.Id, "name": "renamed", "response": "json"})
	tpl, _ := r.Inner(t, "updatetemplateresponse")["iso"].(map[string]any)
	if tpl["name"] != "renamed" || tpl["displaytext"] != "after, with a mark" || tpl["ostypeid"] == nil {
		t.Fatalf("the answer should carry the template: %s", r.Raw)
	}
	for _, k := range []string{"zoneid", "status", "isready", "downloaddetails"} {
		if _, ok := tpl[k]; ok {
			t.Errorf("newUpdateResponse has no %s: %s", k, r.Raw)
		}
	}
	r = s.Call(map[string]string{"command": "updateTemplate", "id": up.Id, "sortkey": "3", "response": "json"})
	r.WantError(t, "updatetemplateresponse", 432, 4555, "updateTemplate's sortkey is not implemented by the CloudStack simulator")

	s.Srv.Mu.Lock()
	stored, _ := model.ByID(s.Srv.State.Templates, up.Id)
	stored.State = template.TsUploadAbandoned
	s.Srv.Mu.Unlock()
	d := cs.Template.NewDeleteTemplateParams(up.Id)
	if _, err := cs.Template.DeleteTemplate(d); err != nil {
		t.Fatal(err)
	}
	r = s.Call(map[string]string{"command": "updateTemplate", "id": up.Id, "displaytext": "x", "response": "json"})
	r.WantError(t, "updatetemplateresponse", 431, 4350, "Unable to find Template/ISO with specified id")
}
