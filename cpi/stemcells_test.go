package cpi_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/cloudstackmock"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

const tplID = "9e8e3d33-0c1e-4b1d-9a57-1f2f3e4d5c6b"

func lightProps(extra string) apiv1.CloudPropsImpl {
	var p apiv1.CloudPropsImpl
	_ = p.UnmarshalJSON([]byte(`{"name":"bosh-light","version":"1.0",` + extra + `}`))
	return p
}

func TestLightStemcellByIDAndName(t *testing.T) {
	c, cloud := newCPI(t, `{}`)
	golden := cloudstack.Template{ID: tplID, Name: "golden", ZoneID: "id-z1", IsReady: true, Status: "Download Complete"}
	for extra, byName := range map[string]bool{`"template_id":"` + tplID + `"`: false, `"template_name":"golden"`: true} {
		expectZones(cloud, "z1")
		if byName {
			cloud.EXPECT().FindTemplateByName("golden", "id-z1").Return(&golden, nil)
		}
		cloud.EXPECT().Templates(tplID).Return([]cloudstack.Template{golden}, nil)
		cid, err := c.CreateStemcell("", lightProps(extra))
		if err != nil || cid.AsString() != "light-"+tplID {
			t.Fatalf("%s: cid %v err %v", extra, cid, err)
		}
	}
	// Deleting a light stemcell leaves its template: the strict mock fails
	// on any call.
	if err := c.DeleteStemcell(apiv1.NewStemcellCID("light-" + tplID)); err != nil {
		t.Fatalf("deleting a light stemcell: %v", err)
	}
}

func TestLightStemcellRefusals(t *testing.T) {
	downloading := []cloudstack.Template{{ID: tplID, Name: "golden", ZoneID: "id-z1", IsReady: false, Status: "35% Downloaded"}}
	absent := "00000000-0000-4000-8000-000000000000"
	cases := map[string]struct {
		want   string
		expect func(*cloudstackmock.MockAPI)
	}{
		`"template_id":"` + tplID + `"`: {"not ready in zone z1", func(cloud *cloudstackmock.MockAPI) {
			expectZones(cloud, "z1")
			cloud.EXPECT().Templates(tplID).Return(downloading, nil)
		}},
		`"template_id":"` + absent + `"`: {"does not exist in zone z1", func(cloud *cloudstackmock.MockAPI) {
			expectZones(cloud, "z1")
			cloud.EXPECT().Templates(absent).Return(nil, nil)
		}},
		`"template_name":"nope"`: {`"nope" does not exist in zone z1`, func(cloud *cloudstackmock.MockAPI) {
			expectZones(cloud, "z1")
			cloud.EXPECT().FindTemplateByName("nope", "id-z1").Return(nil, nil)
		}},
		`"template_id":"` + tplID + `","zones":["missing"]`: {`no zone "missing"`, func(cloud *cloudstackmock.MockAPI) {
			cloud.EXPECT().FindZones([]string{"missing"}).Return(nil, errors.New(`no zone "missing"`))
		}},
	}
	for extra, tc := range cases {
		c, cloud := newCPI(t, `{}`)
		tc.expect(cloud)
		_, err := c.CreateStemcell("", lightProps(extra))
		var typed interface{ Type() string }
		if err == nil || !strings.Contains(err.Error(), tc.want) || !asTyped(err, &typed) {
			t.Errorf("%s: got %v, want %q", extra, err, tc.want)
		}
	}
}

func asTyped(err error, target *interface{ Type() string }) bool {
	t, ok := err.(interface{ Type() string })
	*target = t
	return ok && t.Type() == "Bosh::Clouds::CloudError"
}

func TestDeleteStemcellIsIdempotent(t *testing.T) {
	c, cloud := newCPI(t, `{}`)
	cloud.EXPECT().OwnTemplates("").Return(nil, nil)
	cloud.EXPECT().Templates(tplID).Return([]cloudstack.Template{{ID: tplID, ZoneID: "id-z1"}}, nil)
	cloud.EXPECT().DeleteTemplate(tplID, false).Return(nil)
	if err := c.DeleteStemcell(apiv1.NewStemcellCID(tplID)); err != nil {
		t.Fatal(err)
	}
	// An absent template is success without a delete.
	gone := "6f1c3ab0-0000-4000-8000-000000000000"
	cloud.EXPECT().OwnTemplates("").Return(nil, nil)
	cloud.EXPECT().Templates(gone).Return(nil, nil)
	if err := c.DeleteStemcell(apiv1.NewStemcellCID(gone)); err != nil {
		t.Fatalf("an absent template: %v", err)
	}
}

// A bad image or stemcell fails before anything is asked of CloudStack:
// the strict mock fails on any call.
func TestBadImageFailsBeforeCloudStack(t *testing.T) {
	c, _ := newCPI(t, `{}`)
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
		return marks.Template{Director: director, Incomplete: true, Owner: owner, Until: until}.Apply("s")
	}
	deadHere := fmt.Sprintf("%d@%s", dead.ProcessState.Pid(), host)
	rows := map[string]string{
		"killed-here":       mark("d", deadHere, later),
		"time-up-elsewhere": mark("d", "7@elsewhere", past),
		"running-here":      mark("d", fmt.Sprintf("%d@%s", os.Getpid(), host), later),
		"running-elsewhere": mark("d", "7@elsewhere", later),
		"other-director":    mark("other", deadHere, later),
		"published":         marks.Template{Director: "d"}.Apply("s"),
		"an-operators":      "golden image",
	}
	var own []cloudstack.Template
	for id, text := range rows {
		own = append(own, cloudstack.Template{ID: id, ZoneID: "id-z1", DisplayText: text})
	}
	// A template in two zones is two rows with one id: deleted once.
	own = append(own, cloudstack.Template{ID: "killed-here", ZoneID: "id-z2", DisplayText: rows["killed-here"]})
	c, cloud := newCPI(t, `{"director_uuid":"d"}`)
	cloud.EXPECT().OwnTemplates("").Return(own, nil)
	cloud.EXPECT().DeleteTemplate("killed-here", false).Return(nil)
	cloud.EXPECT().DeleteTemplate("time-up-elsewhere", false).Return(nil)
	cloud.EXPECT().Templates("published").Return([]cloudstack.Template{{ID: "published", ZoneID: "id-z1"}}, nil)
	cloud.EXPECT().DeleteTemplate("published", false).Return(nil)
	if err := c.DeleteStemcell(apiv1.NewStemcellCID("published")); err != nil {
		t.Fatal(err)
	}
}
