package simtesting

import (
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// AttachVol attaches a volume to a VM and waits for the job.
func (e *VMEnv) AttachVol(t *testing.T, volID, vmID string) *cloudstack.AttachVolumeResponse {
	t.Helper()
	v, err := e.CS.Volume.AttachVolume(e.CS.Volume.NewAttachVolumeParams(volID, vmID))
	if err != nil {
		t.Fatalf("attachVolume %s to %s: %v", volID, vmID, err)
	}
	return v
}

// DataVM deploys a running VM with a 5 GB data disk at device 1.
func (e *VMEnv) DataVM(t *testing.T, name string) string {
	t.Helper()
	p := e.Params(name)
	p.SetDiskofferingid(e.DiskSmall)
	return e.Deploy(t, p).Id
}

// DetachVol detaches a volume and waits for the job.
func (e *VMEnv) DetachVol(id string) (*cloudstack.DetachVolumeResponse, error) {
	p := e.CS.Volume.NewDetachVolumeParams()
	p.SetId(id)
	return e.CS.Volume.DetachVolume(p)
}

// NewVolume creates a data volume in the first zone; sizeGB 0 leaves size out.
func (e *VMEnv) NewVolume(t *testing.T, name, offering string, sizeGB int64) *cloudstack.CreateVolumeResponse {
	t.Helper()
	v, err := e.CS.Volume.CreateVolume(e.VolumeParams(name, offering, sizeGB))
	if err != nil {
		t.Fatalf("createVolume %s: %v", name, err)
	}
	return v
}

// VolumeParams are createVolume parameters in the seeded zone.
func (e *VMEnv) VolumeParams(name, offering string, sizeGB int64) *cloudstack.CreateVolumeParams {
	p := e.CS.Volume.NewCreateVolumeParams()
	p.SetZoneid(e.Zone)
	if name != "" {
		p.SetName(name)
	}
	if offering != "" {
		p.SetDiskofferingid(offering)
	}
	if sizeGB != 0 {
		p.SetSize(sizeGB)
	}
	return p
}
