package cpi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// errTemplateInUse is TemplateManagerImpl.deleteTemplate's refusal of a
// template that VMs not yet expunged were deployed from.
var errTemplateInUse = &cloudstack.APIError{Command: "deleteTemplate", ErrorCode: 530, JobID: "job-1",
	Text: "Unable to delete template [Tmpl[7|s]] because there are [1] VM instances using it."}

// delete_stemcell deletes the template; one still used by VMs CloudStack
// has not expunged is deleted with forced=true (the director deletes only
// stemcells none of its VMs use). An earlier CPI's CID, the template's
// name, deletes the template of that name.
func TestDeleteStemcellForcesATemplateInUse(t *testing.T) {
	for name, tc := range map[string]struct {
		cid   string
		first error
	}{
		"free":              {tplID, nil},
		"in use":            {tplID, errTemplateInUse},
		"earlier CPI's CID": {"cpitemplate-1", nil},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud, logs := loggedCPI(t, callContext(2), func(*config.Config) {})
			cloud.EXPECT().OwnTemplates("").Return(nil, nil)
			cloud.EXPECT().Templates(tc.cid).Return([]cloudstack.Template{{ID: tplID, Name: "cpitemplate-1", ZoneID: "zone-1"}}, nil)
			cloud.EXPECT().DeleteTemplate(tplID, false).Return(tc.first)
			if tc.first != nil {
				cloud.EXPECT().DeleteTemplate(tplID, true).Return(nil)
			}
			if err := c.DeleteStemcell(apiv1.NewStemcellCID(tc.cid)); err != nil {
				t.Fatalf("delete_stemcell: %v", err)
			}
			// The operator is told the template went although VMs used it.
			warned := strings.Contains(logs.String(), "WARN") && strings.Contains(logs.String(), "forced=true")
			if warned != (tc.first != nil) {
				t.Errorf("warned of a forced delete: %v; log:\n%s", warned, logs)
			}
		})
	}
}

// Any other refusal is a CloudError naming the template, with no forced
// second attempt.
func TestDeleteStemcellOtherRefusalIsACloudError(t *testing.T) {
	c, cloud := createVMCPI(t)
	cloud.EXPECT().OwnTemplates("").Return(nil, nil)
	cloud.EXPECT().Templates(tplID).Return([]cloudstack.Template{{ID: tplID, ZoneID: "zone-1"}}, nil)
	cloud.EXPECT().DeleteTemplate(tplID, false).Return(&cloudstack.APIError{Command: "deleteTemplate", ErrorCode: 530,
		JobID: "job-1", Text: "Failed to delete template"})
	err := c.DeleteStemcell(apiv1.NewStemcellCID(tplID))
	if got := errorType(t, err); got != "Bosh::Clouds::CloudError" || !strings.Contains(err.Error(), tplID) {
		t.Fatalf("got %s %v", got, err)
	}
}

// The template sweep never fails delete_stemcell: a listing that fails or
// a leftover CloudStack will not let go of yet is left for a later call.
func TestDeleteStemcellSweepNeverFailsTheCall(t *testing.T) {
	leftover := cloudstack.Template{ID: "left-1", ZoneID: "zone-1",
		DisplayText: marks.Template{Director: "dir-1", Incomplete: true, Owner: "7@elsewhere"}.Apply("s")}
	for name, listed := range map[string]bool{"listing fails": false, "delete refused": true} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			if !listed {
				cloud.EXPECT().OwnTemplates("").Return(nil, errors.New("no answer"))
			} else {
				cloud.EXPECT().OwnTemplates("").Return([]cloudstack.Template{leftover}, nil)
				cloud.EXPECT().DeleteTemplate("left-1", false).Return(errTemplateInUse)
			}
			cloud.EXPECT().Templates(tplID).Return(nil, nil)
			if err := c.DeleteStemcell(apiv1.NewStemcellCID(tplID)); err != nil {
				t.Fatalf("delete_stemcell: %v", err)
			}
		})
	}
}

// A light stemcell by name must be one template in every zone; the Java
// CPI's light_template reads as template_name, and the two disagreeing is
// refused before CloudStack is asked.
func TestLightStemcellByNameAcrossZones(t *testing.T) {
	zones := []cloudstack.Zone{{ID: "zone-1", Name: "z1"}, {ID: "zone-2", Name: "z2"}}
	t.Run("one template", func(t *testing.T) {
		c, cloud := createVMCPI(t)
		cloud.EXPECT().FindZones([]string{"z1", "z2"}).Return(zones, nil)
		cloud.EXPECT().FindTemplateByName("golden", "zone-1").Return(&cloudstack.Template{ID: tplID}, nil)
		cloud.EXPECT().FindTemplateByName("golden", "zone-2").Return(&cloudstack.Template{ID: tplID}, nil)
		cloud.EXPECT().Templates(tplID).Return([]cloudstack.Template{{ID: tplID, ZoneID: "zone-1", IsReady: true},
			{ID: tplID, ZoneID: "zone-2", IsReady: true}}, nil)
		cid, err := c.CreateStemcell("", lightProps(`"light_template":"golden","zones":["z1","z2"]`))
		if err != nil || cid.AsString() != "light-"+tplID {
			t.Fatalf("create_stemcell: %v %v", cid, err)
		}
	})
	t.Run("two templates", func(t *testing.T) {
		c, cloud := createVMCPI(t)
		cloud.EXPECT().FindZones([]string{"z1", "z2"}).Return(zones, nil)
		cloud.EXPECT().FindTemplateByName("golden", "zone-1").Return(&cloudstack.Template{ID: tplID}, nil)
		cloud.EXPECT().FindTemplateByName("golden", "zone-2").Return(&cloudstack.Template{ID: "another"}, nil)
		_, err := c.CreateStemcell("", lightProps(`"template_name":"golden","zones":["z1","z2"]`))
		if got := errorType(t, err); got != "Bosh::Clouds::CloudError" || !strings.Contains(err.Error(), "different template in zone z2") {
			t.Fatalf("got %s %v", got, err)
		}
	})
	t.Run("light_template and template_name differ", func(t *testing.T) {
		c, _ := createVMCPI(t)
		_, err := c.CreateStemcell("", lightProps(`"light_template":"golden","template_name":"silver"`))
		if got := errorType(t, err); got != "Bosh::Clouds::CloudError" || !strings.Contains(err.Error(), "give one") {
			t.Fatalf("got %s %v", got, err)
		}
	})
}
