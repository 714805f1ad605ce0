package cloudstack

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// Volume is a CloudStack volume: ROOT or DATADISK.
type Volume struct {
	ID       string
	Name     string
	Type     string
	DeviceID int64
	VMID     string
	ZoneID   string
	SizeGB   int64
	State    string
	Tags     map[string]string
	// OfferingID is its disk offering's id.
	OfferingID string
	// Created is when CloudStack made it, by the management server's clock;
	// zero when CloudStack's answer had no readable time.
	Created time.Time
	// SCSIUnit is the disk's unit on its VMware SCSI controller, from
	// chaininfo (parseSCSIUnit); HasSCSIUnit is false where CloudStack
	// says none.
	SCSIUnit    int
	HasSCSIUnit bool
}

// Gone says CloudStack has deleted the volume or is deleting it: the
// Volume.State values past a delete (Destroy, the recoverable state
// deleteVolume leaves, then Destroying, Expunging, Expunged).
func (v *Volume) Gone() bool {
	switch v.State {
	case "Destroy", "Destroying", "Expunging", "Expunged":
		return true
	}
	return false
}

// Busy says a job still works on the volume: Volume.State's passing
// states (Creating, Migrating, Snapshotting, RevertSnapshotting, Resizing,
// Copying, Attaching), which end in Ready, Allocated or Uploaded.
func (v *Volume) Busy() bool {
	switch v.State {
	case "Creating", "Migrating", "Snapshotting", "RevertSnapshotting", "Resizing", "Copying", "Attaching":
		return true
	}
	return false
}

// IsDataDisk says the volume is a data disk (Volume.Type DATADISK), not a
// VM's ROOT.
func (v *Volume) IsDataDisk() bool { return v.Type == "DATADISK" }

// CreatedWithVM says deployVirtualMachine made this data disk with its VM
// from the deployment's disk offering: VolumeOrchestrator.allocateRawVolume
// names it DATA-<vm id>. The CPI's ephemeral disk is such a disk.
func (v *Volume) CreatedWithVM() bool { return v.IsDataDisk() && strings.HasPrefix(v.Name, "DATA-") }

// earlierEphemeralPrefix names the ephemeral volume both earlier CPIs (the
// Java CPI and Orange's Go CPI) create and attach after deploying a VM:
// cpi-ephemeral-disk-<uuid>.
const earlierEphemeralPrefix = "cpi-ephemeral-disk-"

// IsEphemeralOf says the data disk is vm's ephemeral disk: the one
// deployVirtualMachine created with it (this CPI's), or, on a VM an earlier
// CPI made, the cpi-ephemeral-disk-… volume that CPI attached to it. Any
// other data disk is persistent or the operator's.
func (v *Volume) IsEphemeralOf(vm *VM) bool {
	if v.CreatedWithVM() {
		return true
	}
	return v.IsDataDisk() && vm.MadeByEarlierCPI() && strings.HasPrefix(v.Name, earlierEphemeralPrefix)
}

// VMVolumes lists the volumes attached to a VM.
func (c *Client) VMVolumes(vmID string) ([]Volume, error) {
	p := c.cs.Volume.NewListVolumesParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetVirtualmachineid(vmID)
	p.SetListall(true)
	resp, err := c.cs.Volume.ListVolumes(p)
	if err != nil {
		if err = c.fail("listVolumes", err); IsNoSuchEntity(err) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]Volume, 0, len(resp.Volumes))
	for _, v := range resp.Volumes {
		out = append(out, toVolume(v))
	}
	return out, nil
}

func toVolume(v *csgo.Volume) Volume {
	vol := Volume{ID: v.Id, Name: v.Name, Type: v.Type, DeviceID: v.Deviceid, VMID: v.Virtualmachineid,
		ZoneID: v.Zoneid, SizeGB: v.Size >> 30, State: v.State, Tags: tagMap(v.Tags), OfferingID: v.Diskofferingid,
		Created: csTime(v.Created)}
	vol.SCSIUnit, vol.HasSCSIUnit = parseSCSIUnit(v.Chaininfo)
	return vol
}

// csTime reads CloudStack's dates, which ApiResponseSerializer writes
// as yyyy-MM-dd'T'HH:mm:ssZ.
func csTime(s string) time.Time {
	t, _ := time.Parse("2006-01-02T15:04:05-0700", s)
	return t
}

// NeverUsed says the volume has never been created on primary storage
// (Volume.State Allocated: "allocated but has not been created yet"), which
// happens once a running VM has it. It holds no data.
func (v *Volume) NeverUsed() bool { return v.State == "Allocated" }

// DiskMark is what the leftover rules read of the volume: its name (the
// mark create_disk gives it), whether it is attached, whether it was ever
// used, and its age.
func (v *Volume) DiskMark() marks.Disk {
	return marks.Disk{Name: v.Name, Attached: v.VMID != "", NeverUsed: v.NeverUsed(), Created: v.Created}
}

// VolumesNamedLike lists the data volumes whose name contains s: listVolumes'
// keyword is a LIKE %s% on the name, the state or the type
// (QueryManagerImpl.searchForVolumes), so the caller matches the name itself.
func (c *Client) VolumesNamedLike(s string) ([]Volume, error) {
	p := c.cs.Volume.NewListVolumesParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetKeyword(s)
	p.SetType("DATADISK")
	p.SetListall(true)
	resp, err := c.cs.Volume.ListVolumes(p)
	if err != nil {
		return nil, c.fail("listVolumes", err)
	}
	var out []Volume
	for _, v := range resp.Volumes {
		if strings.Contains(v.Name, s) {
			out = append(out, toVolume(v))
		}
	}
	return out, nil
}

func tagMap(tags []csgo.Tags) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[t.Key] = t.Value
	}
	return m
}

// FindVolume looks a volume up by UUID, or by exact name for the name-style
// CIDs of earlier CPIs. Absent is (nil, nil).
func (c *Client) FindVolume(ref string) (*Volume, error) {
	found, err := findByIDOrName(c, c.cs.Volume.NewListVolumesParams(), ref,
		func(p *csgo.ListVolumesParams) ([]*csgo.Volume, error) {
			resp, err := c.cs.Volume.ListVolumes(p)
			if err != nil {
				return nil, c.fail("listVolumes", err)
			}
			return resp.Volumes, nil
		}, func(v *csgo.Volume) (string, string) { return v.Id, v.Name }, "volumes")
	if found == nil {
		return nil, err
	}
	v := toVolume(*found)
	return &v, nil
}

// CreateVolume creates a data volume with tags; sizeGB only for customized
// offerings. The tags' job runs beside the create's (tagbeside.go); a
// failure to tag the volume it made is a MarkError.
func (c *Client) CreateVolume(name, zoneID, offeringID string, sizeGB int, tags map[string]string) (*Volume, error) {
	p := c.cs.Volume.NewCreateVolumeParams()
	if err := c.inProject(p); err != nil {
		return nil, err
	}
	p.SetName(name)
	p.SetZoneid(zoneID)
	p.SetDiskofferingid(offeringID)
	if sizeGB > 0 {
		p.SetSize(int64(sizeGB))
	}
	r, err := c.cs.Volume.CreateVolume(p)
	if err != nil {
		return nil, c.fail("createVolume", err)
	}
	tagJob, tagErr := c.tagBeside(ResourceVolume, r.Id, tags)
	vol, err := c.volumeJob("createVolume", r.JobID)
	if err != nil {
		return nil, err
	}
	if vol.Tags, err = c.awaitTags(ResourceVolume, vol.ID, tagJob, tagErr, vol.Tags, tags); err != nil {
		return nil, err
	}
	return vol, nil
}

// AttachVolume attaches a volume and returns it with the device id
// CloudStack chose.
func (c *Client) AttachVolume(id, vmID string) (*Volume, error) {
	r, err := c.cs.Volume.AttachVolume(c.cs.Volume.NewAttachVolumeParams(id, vmID))
	if err != nil {
		return nil, c.fail("attachVolume", err)
	}
	return c.volumeJob("attachVolume", r.JobID)
}

// DetachVolume detaches a volume from whatever VM has it.
func (c *Client) DetachVolume(id string) error {
	p := c.cs.Volume.NewDetachVolumeParams()
	p.SetId(id)
	r, err := c.cs.Volume.DetachVolume(p)
	if err != nil {
		return c.fail("detachVolume", err)
	}
	_, err = c.waitJob("detachVolume", r.JobID)
	return err
}

// DeleteVolume deletes a detached volume (a synchronous command).
func (c *Client) DeleteVolume(id string) error {
	_, err := c.cs.Volume.DeleteVolume(c.cs.Volume.NewDeleteVolumeParams(id))
	return c.fail("deleteVolume", err)
}

// ResizeVolume grows a volume, moving it to offeringID when given.
func (c *Client) ResizeVolume(id string, sizeGB int, offeringID string) error {
	p := c.cs.Volume.NewResizeVolumeParams(id)
	p.SetSize(int64(sizeGB))
	if offeringID != "" {
		p.SetDiskofferingid(offeringID)
	}
	r, err := c.cs.Volume.ResizeVolume(p)
	if err != nil {
		return c.fail("resizeVolume", err)
	}
	_, err = c.waitJob("resizeVolume", r.JobID)
	return err
}

// ChangeVolumeOffering moves a volume to another disk offering in place
// (changeOfferingForVolume, CloudStack 4.17+), at sizeGB when the offering is
// customized (0 sends no size). It never shrinks (no shrinkok) and lets
// CloudStack move the volume to a pool whose storage tags fit the offering:
// automigrate is sent, as ChangeOfferingForVolumeCmd.getAutoMigrate takes
// an absent one as false (an earlier revision took it as true), which
// refuses every change that needs a move. The answer is the volume as the job
// left it: after a migration CloudStack reports a failed resize only in its
// log, so the caller checks the size.
func (c *Client) ChangeVolumeOffering(id, offeringID string, sizeGB int) (*Volume, error) {
	p := c.cs.Volume.NewChangeOfferingForVolumeParams(offeringID, id)
	if sizeGB > 0 {
		p.SetSize(int64(sizeGB))
	}
	p.SetAutomigrate(true)
	r, err := c.cs.Volume.ChangeOfferingForVolume(p)
	if err != nil {
		return nil, c.fail("changeOfferingForVolume", err)
	}
	return c.volumeJob("changeOfferingForVolume", r.JobID)
}

// IsChangeRefused says CloudStack declined to change a volume's offering or
// size and left it as it was: an InvalidParameterValueException (431) from
// VolumeApiServiceImpl's checks (size strictness, storage tags, shrinking,
// automigrate, state, XenServer's offline-only resize, an offering already
// the volume's), or a command this CloudStack or this account lacks (432:
// changeOfferingForVolume came with 4.17). Failures of the work itself (a
// failed migration or resize, 530) are not refusals.
func IsChangeRefused(err error) bool {
	var api *APIError
	return errors.As(err, &api) && (api.ErrorCode == codeParamError || api.ErrorCode == codeUnsupportedAction)
}

func (c *Client) volumeJob(command, jobID string) (*Volume, error) {
	result, err := c.waitJob(command, jobID)
	if err != nil {
		return nil, err
	}
	var wrapped struct {
		Volume *csgo.Volume `json:"volume"`
	}
	if err := json.Unmarshal(result, &wrapped); err != nil || wrapped.Volume == nil {
		return nil, fmt.Errorf("CloudStack's %s job answered without a volume", command)
	}
	v := toVolume(wrapped.Volume)
	return &v, nil
}
