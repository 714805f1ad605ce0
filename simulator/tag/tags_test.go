package tag_test

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// resource_tags' columns are varchar(255) of characters: 255 two-byte
// characters fit, 256 do not; an empty value is refused with
// TaggedResourceManagerImpl.createTags' text.
func TestTagLimitsCountCharacters(t *testing.T) {
	e := simtesting.NewVMEnv(t, simulator.Options{})
	vm := e.DataVM(t, "cpivm-tags")
	create := func(tags map[string]string) error {
		_, err := e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{vm}, "UserVm", tags))
		return err
	}
	if err := create(map[string]string{strings.Repeat("k", 255): strings.Repeat("ü", 255)}); err != nil {
		t.Fatalf("255 characters: %v", err)
	}
	simtesting.WantJobError(t, create(map[string]string{"v": strings.Repeat("ü", 256)}), 431, "can't be longer than 255 characters")
	simtesting.WantJobError(t, create(map[string]string{strings.Repeat("k", 256): "v"}), 431, "can't be longer than 255 characters")
	simtesting.WantJobError(t, create(map[string]string{"empty": ""}), 431, "Value for the key empty is either null or empty")
}

// resourceids is a list of plain strings: a name instead of a UUID is
// accepted and the job fails, as the production Go CPI's createTags on a
// volume name does on a real CloudStack.
func TestCreateTagsOnAnUnknownResourceFailsInTheJob(t *testing.T) {
	e := simtesting.NewVMEnv(t, simulator.Options{})
	_, err := e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{"cpi-ephemeral-disk-1"}, "Volume",
		map[string]string{"director": "d"}))
	simtesting.WantJobError(t, err, 431, "Unable to find resource by uuid cpi-ephemeral-disk-1 and type Volume")
}

// A create command answers the new resource's id with its job id at once
// (ApiServer.processAsyncCmd runs a BaseAsyncCreateCmd's create() before
// queueing the job; getBaseAsyncCreateResponse), and createTags needs only
// the resource's row (ResourceManagerUtilImpl.getResourceId): tags on a
// VM or volume whose create job still runs are taken.
func TestTagsOnAResourceWhoseCreateJobStillRuns(t *testing.T) {
	e := simtesting.NewVMEnv(t, simulator.Options{})
	simtesting.AddFault(t, e.Sim, kernel.Fault{Command: "createVolume", Pending: true})
	simtesting.AddFault(t, e.Sim, kernel.Fault{Command: "deployVirtualMachine", Pending: true})
	vp := e.Raw.Volume.NewCreateVolumeParams()
	vp.SetName("pending-disk")
	vp.SetZoneid(e.Zone)
	vp.SetDiskofferingid(e.DiskSmall)
	vol, err := e.Raw.Volume.CreateVolume(vp)
	if err != nil || vol.Id == "" || vol.JobID == "" {
		t.Fatalf("createVolume answered %+v (%v): want the volume's id and its job's", vol, err)
	}
	vm, err := e.Raw.VirtualMachine.DeployVirtualMachine(e.Params("pending-vm"))
	if err != nil || vm.Id == "" || vm.JobID == "" {
		t.Fatalf("deployVirtualMachine answered %+v (%v): want the VM's id and its job's", vm, err)
	}
	if left, err := e.Admin.Faults(); err != nil || len(left) != 0 {
		t.Fatalf("the create jobs were not held pending: faults left %v (%v)", left, err)
	}
	for typ, id := range map[string]string{"Volume": vol.Id, "UserVm": vm.Id} {
		_, err := e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{id}, typ, map[string]string{"k": "v"}))
		if err != nil {
			t.Errorf("createTags on %s %s while its create job runs: %v", typ, id, err)
		}
	}
}
