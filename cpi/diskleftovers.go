package cpi

import (
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// What create_disk calls leave when they cannot finish: a lost answer or a
// job timeout (settled by the call itself), or a killed process (removed by
// the next create_disk for the same VM, told by the name it gave the disk).

// diskLeftovers is the part that removes what create_disk calls left: it
// only lists, waits for and deletes volumes.
type diskLeftovers struct {
	request
	cloud cloudstack.VolumeLeftovers
}

// undoCreateDisk finds, after an uncertain outcome, the volume the call may
// have made by its unique name, waits (within the job timeout from start)
// until no job works on it, and deletes it, so that the director never gets
// an error while a disk it cannot know of stays behind.
func (c diskLeftovers) undoCreateDisk(name string, start time.Time, failed, cause error) error {
	if cloudstack.NotActedOn(cause) {
		return failed
	}
	vol, err := c.cloud.SettledVolume(name, start.Add(c.cfg.CloudStack.JobTimeout.D()))
	switch {
	case err != nil:
		return leftBehind(failed, "a volume named %s may still exist in CloudStack (looking it up failed: %v)", name, err)
	case vol == nil:
		return nothingLeft(failed, "CloudStack has no volume named %s", name)
	}
	if err := c.cloud.DeleteVolume(vol.ID); err != nil {
		return leftBehind(failed, "volume %s (%s, %s) is still in CloudStack: deleting it failed: %v", vol.ID, name, vol.State, err)
	}
	c.logger.Info("disk", "deleted volume %s (%s), which the failed create_disk had made", vol.ID, name)
	return nothingLeft(failed, "the volume it made, %s (%s), was deleted", vol.ID, name)
}

// newDiskName is unique, and names the process that creates the disk and
// the VM it is for, so that the next create_disk for that VM finds what an
// interrupted one left and can tell whether that call still runs.
func newDiskName(vmID string) (string, error) {
	name, err := newVMName()
	if err != nil {
		return "", err
	}
	name = cloudstack.DiskNamePrefix + strings.TrimPrefix(name, "vm-")
	if vmID != "" {
		name += cloudstack.DiskByInfix + cloudstack.ThisProcess() + cloudstack.DiskForInfix + vmID
	}
	return name, nil
}

// removeInterruptedDisks deletes what create_disk calls for the VM that
// died (kill -9, a lost machine) left: detached disks named for the VM that
// never held data and whose creating process is gone from this host, or
// that are older than any create_disk call can last. The director creates
// and attaches a VM's disks one at a time, and a call still running is
// never taken for dead. A disk the director was told of but never attached
// holds no data either: removing it costs nothing, and delete_disk of it
// later succeeds. Failures are logged: a leftover blocks nothing.
func (c diskLeftovers) removeInterruptedDisks(vmID string) {
	suffix := cloudstack.DiskForInfix + vmID
	vols, err := c.cloud.VolumesNamedLike(suffix)
	if err != nil {
		c.logger.Warn("disk", "looking for disks interrupted create_disk calls left for VM %s: %s", vmID, err)
		return
	}
	c.deleteLeftovers("disk", "create_disk", "for VM "+vmID, func(yield func(leftover) bool) {
		for _, v := range vols {
			if c.interruptedDisk(v, suffix) && !yield(leftover{v.ID, v.Name}) {
				return
			}
		}
	}, c.cloud.DeleteVolume)
}

func (c diskLeftovers) interruptedDisk(v cloudstack.Volume, suffix string) bool {
	return strings.HasSuffix(v.Name, suffix) && v.LeftByCreateDisk(time.Now(), c.longestCall())
}

// longestCall bounds how long a create_disk call can still be running
// after it made its volume: its job's timeout and a few requests (a
// request's timeout covers its retries), plus a second for CloudStack's
// times, which it gives in whole seconds.
func (c diskLeftovers) longestCall() time.Duration {
	cs := c.cfg.CloudStack
	return cs.JobTimeout.D() + 5*cs.RequestTimeout.D() + time.Second
}
