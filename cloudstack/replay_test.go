package cloudstack_test

import (
	"net/http"
	"strings"
	"testing"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/simtest"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// replaySim is a simulator served in-process, with the test keys.
type replaySim struct {
	api   string
	admin *simulator.AdminClient
	ops   *csgo.CloudStackClient // an operator's view, for the census
}

func startReplaySim(t *testing.T) *replaySim {
	t.Helper()
	sim := simtest.Serve(t, simulator.Options{AdminAPIKey: apiKey, AdminSecretKey: secretKey})
	return &replaySim{api: sim.URL, admin: sim.Admin, ops: csgo.NewClient(sim.URL, apiKey, secretKey, false)}
}

// lose makes the next call of command run and then lose its answer: the
// simulator drops the connection, which the client had reused.
func (s *replaySim) lose(t *testing.T, command string) {
	t.Helper()
	if err := s.admin.AddFault(simulator.Fault{Command: command, Lost: true}); err != nil {
		t.Fatal(err)
	}
}

func (s *replaySim) count(t *testing.T, command string) int {
	t.Helper()
	n, err := s.admin.CountRequests(command)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// zone is the seeded zone; looking it up also leaves a kept-alive
// connection in the client's pool, which the next request reuses.
func zone(t *testing.T, c *cloudstack.Client) cloudstack.Zone {
	t.Helper()
	zones, err := c.FindZones([]string{"Sandbox-simulator"})
	if err != nil {
		t.Fatal(err)
	}
	return zones[0]
}

// templateSpec is a VHD template in the seeded zone; looking the zone up
// leaves a kept-alive connection for the next request.
func templateSpec(t *testing.T, c *cloudstack.Client, name, text string) cloudstack.TemplateSpec {
	t.Helper()
	z := zone(t, c)
	osType, err := c.FindOSType("Other Linux (64-bit)")
	if err != nil {
		t.Fatal(err)
	}
	return cloudstack.TemplateSpec{Name: name, DisplayText: text, Format: "VHD", Hypervisor: "XenServer",
		OSTypeID: osType, ZoneIDs: []string{z.ID}, Bits: 64}
}

// TestLostAnswerOfGetUploadParamsIsNotReplayed: net/http replays a GET
// whose reused connection died after it was written; getUploadParamsForTemplate
// creates a template each time it runs, so the CPI must see the loss and
// CloudStack must have exactly one template.
func TestLostAnswerOfGetUploadParamsIsNotReplayed(t *testing.T) {
	s := startReplaySim(t)
	c, _ := newClient(t, s.api, nil)
	spec := templateSpec(t, c, "replayed", "replayed")
	s.lose(t, "getUploadParamsForTemplate")
	if _, err := c.GetUploadParams(spec); err == nil {
		t.Fatal("the lost answer was hidden: the request was sent again and answered")
	}
	if n := s.count(t, "getUploadParamsForTemplate"); n != 1 {
		t.Errorf("CloudStack received getUploadParamsForTemplate %d times", n)
	}
	resp, err := s.ops.Template.ListTemplates(s.ops.Template.NewListTemplatesParams("self"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Templates) != 1 || resp.Templates[0].Name != "replayed" {
		t.Fatalf("want exactly the one template the lost call created, got %d", len(resp.Templates))
	}
}

// TestLostAnswerOfCreateVolumeIsNotReplayed: the same for a command
// cloudstack-go already POSTs.
func TestLostAnswerOfCreateVolumeIsNotReplayed(t *testing.T) {
	s := startReplaySim(t)
	c, _ := newClient(t, s.api, nil)
	z := zone(t, c)
	offering, err := c.CustomDiskOffering()
	if err != nil {
		t.Fatal(err)
	}
	s.lose(t, "createVolume")
	if _, err := c.CreateVolume("replayed-disk", z.ID, offering.ID, 1, nil); err == nil {
		t.Fatal("the lost answer was hidden: the request was sent again and answered")
	}
	if n := s.count(t, "createVolume"); n != 1 {
		t.Errorf("CloudStack received createVolume %d times", n)
	}
	resp, err := s.ops.Volume.ListVolumes(s.ops.Volume.NewListVolumesParams())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Volumes) != 1 {
		t.Fatalf("want exactly the one volume the lost call created, got %d", len(resp.Volumes))
	}
}

// TestLostAnswerOfAListIsRetriedByOurRule: a read-only command is safe to
// send again, and our transport does, logging it.
func TestLostAnswerOfAListIsRetriedByOurRule(t *testing.T) {
	s := startReplaySim(t)
	c, logs := newClient(t, s.api, nil)
	s.lose(t, "listZones")
	if z := zone(t, c); z.Name != "Sandbox-simulator" {
		t.Fatalf("zone %+v", z)
	}
	if n := s.count(t, "listZones"); n != 2 {
		t.Errorf("CloudStack received listZones %d times, want the lost one and one retry", n)
	}
	if !strings.Contains(logs.String(), "listZones: connection failed") {
		t.Errorf("the retry should be our transport's, logged:\n%s", logs.String())
	}
}

// TestGetUploadParamsGoesByPostSignedAndIntact: the converted request is a
// POST form whose signature CloudStack verifies and whose non-ASCII text
// arrives as sent.
func TestGetUploadParamsGoesByPostSignedAndIntact(t *testing.T) {
	s := startReplaySim(t)
	c, _ := newClient(t, s.api, nil)
	text := "BOSH stemcell überlegt & 100% [bosh-director-uuid=d]"
	up, err := c.GetUploadParams(templateSpec(t, c, "posted", text))
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := s.admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.Command == "getUploadParamsForTemplate" && r.Method != http.MethodPost {
			t.Errorf("getUploadParamsForTemplate went by %s", r.Method)
		}
	}
	own, err := c.OwnTemplates("posted")
	if err != nil || len(own) != 1 || own[0].ID != up.TemplateID || own[0].DisplayText != text {
		t.Fatalf("listed %+v, %v; want display text %q", own, err, text)
	}
}
