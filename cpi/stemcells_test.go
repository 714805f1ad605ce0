package cpi_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

const tplID = "9e8e3d33-0c1e-4b1d-9a57-1f2f3e4d5c6b"

func lightProps(extra string) apiv1.CloudPropsImpl {
	var p apiv1.CloudPropsImpl
	_ = p.UnmarshalJSON([]byte(`{"name":"bosh-light","version":"1.0",` + extra + `}`))
	return p
}

func TestLightStemcellByIDAndName(t *testing.T) {
	cloud := &fakeCloud{templates: map[string][]cloudstack.Template{
		tplID: {{ID: tplID, Name: "golden", ZoneID: "id-z1", IsReady: true, Status: "Download Complete"}},
	}}
	c := newCPI(t, cloud, `{}`)
	for _, extra := range []string{`"template_id":"` + tplID + `"`, `"template_name":"golden"`} {
		cid, err := c.CreateStemcell("", lightProps(extra))
		if err != nil || cid.AsString() != "light-"+tplID {
			t.Fatalf("%s: cid %v err %v", extra, cid, err)
		}
	}
	if err := c.DeleteStemcell(apiv1.NewStemcellCID("light-" + tplID)); err != nil || len(cloud.deleted) != 0 {
		t.Fatalf("deleting a light stemcell must leave its template: %v %v", err, cloud.deleted)
	}
}

func TestLightStemcellRefusals(t *testing.T) {
	cloud := &fakeCloud{templates: map[string][]cloudstack.Template{
		tplID: {{ID: tplID, Name: "golden", ZoneID: "id-z1", IsReady: false, Status: "35% Downloaded"}},
	}}
	c := newCPI(t, cloud, `{}`)
	cases := map[string]string{
		`"template_id":"` + tplID + `"`:                        "not ready in zone z1",
		`"template_id":"00000000-0000-4000-8000-000000000000"`: "does not exist in zone z1",
		`"template_name":"nope"`:                               `"nope" does not exist in zone z1`,
		`"template_id":"` + tplID + `","zones":["missing"]`:    `no zone "missing"`,
	}
	for extra, want := range cases {
		_, err := c.CreateStemcell("", lightProps(extra))
		var typed interface{ Type() string }
		if err == nil || !strings.Contains(err.Error(), want) || !asTyped(err, &typed) {
			t.Errorf("%s: got %v, want %q", extra, err, want)
		}
	}
}

func asTyped(err error, target *interface{ Type() string }) bool {
	t, ok := err.(interface{ Type() string })
	*target = t
	return ok && t.Type() == "Bosh::Clouds::CloudError"
}

func TestDeleteStemcellIsIdempotent(t *testing.T) {
	cloud := &fakeCloud{templates: map[string][]cloudstack.Template{tplID: {{ID: tplID, ZoneID: "id-z1"}}}}
	c := newCPI(t, cloud, `{}`)
	if err := c.DeleteStemcell(apiv1.NewStemcellCID(tplID)); err != nil || len(cloud.deleted) != 1 {
		t.Fatalf("%v %v", err, cloud.deleted)
	}
	if err := c.DeleteStemcell(apiv1.NewStemcellCID("6f1c3ab0-0000-4000-8000-000000000000")); err != nil || len(cloud.deleted) != 1 {
		t.Fatalf("an absent template must be success without a delete: %v %v", err, cloud.deleted)
	}
}

func TestBadImageFailsBeforeCloudStack(t *testing.T) {
	cloud := &fakeCloud{}
	c := newCPI(t, cloud, `{}`)
	var p apiv1.CloudPropsImpl
	_ = p.UnmarshalJSON([]byte(`{"name":"s","version":1,"infrastructure":"cloudstack","hypervisor":"xen","disk_format":"vhdx"}`))
	_, err := c.CreateStemcell("/nonexistent/image", p)
	if err == nil || !strings.Contains(err.Error(), "opening stemcell image") {
		t.Fatalf("got %v", err)
	}
	_ = p.UnmarshalJSON([]byte(`{"name":"s","version":"1","infrastructure":"cloudstack","hypervisor":"hyperv"}`))
	if _, err = c.CreateStemcell("/nonexistent/image", p); err == nil || !strings.Contains(err.Error(), "hyperv") {
		t.Fatalf("got %v", err)
	}
}

// TestDeleteStemcellSweepsLeftoversOfDeadCalls: delete_stemcell removes
// this director's templates that a create_stemcell which no longer runs
// left marked incomplete, and nothing else: not a call that still runs
// here, nor one on another host whose time is not up, nor other
// directors' templates, nor finished stemcells.
func TestDeleteStemcellSweepsLeftoversOfDeadCalls(t *testing.T) {
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	later, past := time.Now().Add(time.Hour), time.Now().Add(-time.Minute)
	mark := func(director, owner string, until time.Time) string {
		return cloudstack.TemplateMark{Director: director, Incomplete: true, Owner: owner, Until: until}.Apply("s")
	}
	deadHere := fmt.Sprintf("%d@%s", dead.ProcessState.Pid(), host)
	rows := map[string]string{
		"killed-here":            mark("d", deadHere, later),
		"time-up-elsewhere":      mark("d", "7@elsewhere", past),
		"running-here":           mark("d", fmt.Sprintf("%d@%s", os.Getpid(), host), later),
		"running-elsewhere":      mark("d", "7@elsewhere", later),
		"other-director":         mark("other", deadHere, later),
		"published":              cloudstack.TemplateMark{Director: "d"}.Apply("s"),
		"an-operators":           "golden image",
		"killed-here-second-row": "",
	}
	cloud := &fakeCloud{templates: map[string][]cloudstack.Template{}}
	for id, text := range rows {
		cloud.templates[id] = []cloudstack.Template{{ID: id, ZoneID: "id-z1", DisplayText: text}}
	}
	// A template in two zones is two rows with one id: deleted once.
	cloud.templates["killed-here-second-row"] = []cloudstack.Template{{ID: "killed-here", ZoneID: "id-z2", DisplayText: rows["killed-here"]}}
	c := newCPI(t, cloud, `{"director_uuid":"d"}`)
	if err := c.DeleteStemcell(apiv1.NewStemcellCID("published")); err != nil {
		t.Fatal(err)
	}
	slices.Sort(cloud.deleted)
	if want := []string{"killed-here", "published", "time-up-elsewhere"}; !slices.Equal(cloud.deleted, want) {
		t.Fatalf("deleted %v, want %v", cloud.deleted, want)
	}
}
