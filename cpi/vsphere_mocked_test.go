package cpi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/configdrive"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// create_vm of bosh.io's vSphere stemcell (a cdrom- CID): the config
// drive's path with the CD-ROM's image (env, no CONFIG-2 label), the
// deploy asks for UEFI and lsilogic, and the agent gets unit hints.
func TestCreateVMOfAVSphereStemcellWritesTheCDROM(t *testing.T) {
	c, cloud := configDriveCPI(t)
	ssvm := &isoSSVM{}
	srv := ssvm.serve(t, http.StatusOK)
	d := &deployed{}
	var iso cloudstack.ISOSpec
	completed := ""
	gomock.InOrder(append(expectUploadStarts(t, cloud, srv, &iso),
		cloud.EXPECT().DeployVM(gomock.Any()).DoAndReturn(d.answer("vm-1", nil)),
		cloud.EXPECT().WaitISO("iso-1", time.Minute).Return(nil),
		cloud.EXPECT().AttachISO("iso-1", "vm-1").Return(nil),
		cloud.EXPECT().StartVM("vm-1").Return(nil),
		cloud.EXPECT().SetISODisplayText("iso-1", gomock.Any()).DoAndReturn(func(_, text string) error {
			completed = text
			return nil
		}),
		cloud.EXPECT().SetDisplayName("vm-1", gomock.Any()).Return(nil),
	)...)
	cid, err := c.CreateVM(apiv1.NewAgentID("agent-1"), apiv1.NewStemcellCID("cdrom-"+stemcellID),
		vmProps(`{"compute_offering":"small"}`), nets(manualNet), nil, apiv1.VMEnv{})
	if err != nil || cid.AsString() != "vm-1" {
		t.Fatalf("create_vm: %v %v", cid, err)
	}
	if !d.spec.Stopped || d.spec.UserData != "" || d.spec.VMware == nil || d.spec.TemplateID != stemcellID ||
		d.spec.Tags[marks.ConfigDriveTag] != "true" {
		t.Errorf("deployed %+v", d.spec)
	}
	ssvm.mu.Lock()
	defer ssvm.mu.Unlock()
	body := string(ssvm.body)
	if strings.Contains(body, configdrive.Label) || !strings.Contains(body, `"agent_id":"agent-1"`) ||
		!strings.Contains(body, `"system":"0"`) || strings.Contains(body, "ec2") {
		t.Errorf("uploaded %q (%d bytes) is not the CD-ROM of the settings", ssvm.filename, len(ssvm.body))
	}
	for _, text := range []string{iso.DisplayText, completed} {
		if !strings.Contains(text, "BOSH agent settings (CD-ROM env) of VM ") {
			t.Errorf("the ISO's display text %q does not say it is the VM's CD-ROM env", text)
		}
	}
}
