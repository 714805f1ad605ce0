package cloudstack_test

import (
	"slices"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// TestAgentVMs: a director's VMs for an agent are those tagged with its
// agent_id and those still marked incomplete by a create_vm for it (whose
// tags may not be there yet), each once; another director's and another
// agent's are not.
func TestAgentVMs(t *testing.T) {
	sim, ops, zone := opsSim(t)
	offerings, err := ops.ServiceOffering.ListServiceOfferings(ops.ServiceOffering.NewListServiceOfferingsParams())
	if err != nil || offerings.Count == 0 {
		t.Fatalf("listServiceOfferings: %v", err)
	}
	templates, err := ops.Template.ListTemplates(ops.Template.NewListTemplatesParams("featured"))
	if err != nil || templates.Count == 0 {
		t.Fatalf("listTemplates: %v", err)
	}
	guest, _, err := ops.Network.GetNetworkByName("guest-network")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newClient(t, sim.URL, nil)
	deploy := func(name string, mark *marks.VM, director, agent string) string {
		t.Helper()
		spec := cloudstack.DeploySpec{Name: name, DisplayName: name, ZoneID: zone,
			ServiceOfferingID: offerings.ServiceOfferings[0].Id, TemplateID: templates.Templates[0].Id,
			NICs: []cloudstack.NICRequest{{NetworkID: guest.Id}}}
		if mark != nil {
			spec.DisplayName = mark.DisplayName()
		}
		if director != "" {
			spec.Tags = map[string]string{marks.DirectorTag: director, marks.AgentTag: agent}
		}
		id, _, err := c.DeployVM(spec)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	mark := marks.NewVM("dir-1", "", "agent-1")
	want := []string{
		deploy("vm-tagged", nil, "dir-1", "agent-1"),
		deploy("vm-marked", &mark, "", ""),
		deploy("vm-both", &mark, "dir-1", "agent-1"),
	}
	otherAgent := marks.NewVM("dir-1", "", "agent-2")
	deploy("vm-other-agent", &otherAgent, "dir-1", "agent-2")
	deploy("vm-other-director", nil, "dir-2", "agent-1")

	vms, err := c.AgentVMs("dir-1", "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, vm := range vms {
		got = append(got, vm.ID)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("AgentVMs = %v, want %v", got, want)
	}
}
