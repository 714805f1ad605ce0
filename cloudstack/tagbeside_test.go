package cloudstack_test

import (
	"errors"
	"testing"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/simtest"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// tagSim is a simulator whose jobs take long enough that a tag job sent
// after the create's first poll would be seen in the log after it.
func tagSim(t *testing.T) (*replaySim, *cloudstack.Client, cloudstack.Zone, string) {
	t.Helper()
	sim := simtest.Serve(t, simulator.Options{AdminAPIKey: apiKey, AdminSecretKey: secretKey, JobLatency: 200 * time.Millisecond})
	s := &replaySim{api: sim.URL, admin: sim.Admin, ops: csgo.NewClient(sim.URL, apiKey, secretKey, false)}
	c, _ := newClient(t, s.api, nil)
	z := zone(t, c)
	offering, err := c.CustomDiskOffering()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.admin.ClearRequests(); err != nil {
		t.Fatal(err)
	}
	return s, c, z, offering.ID
}

// TestCreateVolumeTagsBesideItsJob: createTags goes out as soon as
// createVolume answers the volume's id, before the first poll, so the two
// jobs run side by side; the tag job is polled once, after the create's.
func TestCreateVolumeTagsBesideItsJob(t *testing.T) {
	s, c, z, offering := tagSim(t)
	tags := map[string]string{marks.DirectorTag: "dir-1", marks.AgentTag: "agent-1"}
	vol, err := c.CreateVolume("tagged-disk", z.ID, offering, 1, tags)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := s.admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, r := range reqs {
		cmds = append(cmds, r.Command)
	}
	if len(cmds) < 4 || cmds[0] != "createVolume" || cmds[1] != "createTags" {
		t.Fatalf("calls %v: want createTags right after createVolume", cmds)
	}
	tagJob, last := reqs[1].JobID, reqs[len(reqs)-1]
	if last.Command != "queryAsyncJobResult" || last.Params["jobid"] != tagJob || s.count(t, "queryAsyncJobResult") != len(reqs)-2 {
		t.Fatalf("calls %v: want the tag job polled once, last", cmds)
	}
	if vol.Tags[marks.AgentTag] != "agent-1" || vol.Tags[marks.DirectorTag] != "dir-1" {
		t.Errorf("the volume comes back with tags %v", vol.Tags)
	}
	p := s.ops.Resourcetags.NewListTagsParams()
	p.SetResourceid(vol.ID)
	listed, err := s.ops.Resourcetags.ListTags(p)
	if err != nil || listed.Count != 2 {
		t.Fatalf("CloudStack has %v tags on the volume (%v)", listed, err)
	}
}

// TestRefusedTagsOfAMadeVolumeAreActedOn: a createTags CloudStack refused
// as a request, or whose job failed, still follows a volume CloudStack
// made: the error is a MarkError, which NotActedOn never is, and keeps the
// refusal's code (533 is capacity).
func TestRefusedTagsOfAMadeVolumeAreActedOn(t *testing.T) {
	for _, f := range []simulator.Fault{
		{Command: "createTags", ErrorCode: 530, Stage: simulator.StageRequest},
		{Command: "createTags", ErrorCode: 533, Stage: simulator.StageRequest},
		{Command: "createTags", ErrorCode: 530},
	} {
		s, c, z, offering := tagSim(t)
		if err := s.admin.AddFault(f); err != nil {
			t.Fatal(err)
		}
		_, err := c.CreateVolume("refused-tags", z.ID, offering, 1, map[string]string{"k": "v"})
		var mark *cloudstack.MarkError
		if !errors.As(err, &mark) || mark.ID == "" || cloudstack.NotActedOn(err) || cloudstack.IsCapacity(err) != (f.ErrorCode == 533) {
			t.Errorf("%+v: got %v", f, err)
			continue
		}
		resp, err := s.ops.Volume.ListVolumes(s.ops.Volume.NewListVolumesParams())
		if err != nil || len(resp.Volumes) != 1 || resp.Volumes[0].Id != mark.ID {
			t.Errorf("%+v: the MarkError names %s, CloudStack has %v (%v)", f, mark.ID, resp, err)
		}
	}
}

// TestATagJobOutlivingItsCreateKeepsTheSchedule: on a new host, a 400 ms
// createVolume teaches the quickest job; the 700 ms createTags beside it,
// not yet seen and still running when the volume's job ends, is polled on
// from there on the schedule (from 10 ms on, a fifth of the time waited),
// not first after another
// 400 ms, which would notice it 100 ms after it ended.
func TestATagJobOutlivingItsCreateKeepsTheSchedule(t *testing.T) {
	sim := simtest.Serve(t, simulator.Options{AdminAPIKey: apiKey, AdminSecretKey: secretKey,
		JobLatencyFor: map[string]time.Duration{"createVolume": 400 * time.Millisecond, "createTags": 700 * time.Millisecond}})
	s := &replaySim{api: sim.URL, admin: sim.Admin}
	dir := t.TempDir()
	c, _ := newClient(t, s.api, func(cfg *config.CloudStack) {
		cfg.StateDir, cfg.JobTimeout, cfg.JobPollMaxInterval = dir, config.Duration(time.Minute), config.Duration(time.Second)
	})
	offering, err := c.CustomDiskOffering()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateVolume("tagged-disk", zone(t, c).ID, offering.ID, 1, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	reqs, err := s.admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	tagPolls := 0
	for _, r := range reqs {
		if r.Command == "queryAsyncJobResult" && r.Params["jobid"] == reqs[len(reqs)-1].Params["jobid"] {
			tagPolls++
		}
	}
	if tagPolls <= 3 {
		t.Errorf("the tag job outliving its create was polled %d times: after the first, the schedule polls from 10 ms",
			tagPolls)
	}
}
