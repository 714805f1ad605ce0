package cpi

import (
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// What create_disk calls leave when they cannot finish: a lost answer or a
// job timeout (settled by the call itself), or a killed process (removed by
// the next create_disk for the same VM, told by the name it gave the disk).

// diskLeftovers is the part that removes what create_disk calls left: it
// only lists, waits for and deletes volumes.
type diskLeftovers struct {
	callDeps
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
	var found *madeThing
	if vol != nil {
		found = &madeThing{id: vol.ID, state: vol.State}
	}
	return c.removeMade(failed, undoing{kind: "volume", name: name, method: "create_disk"}, found, err, c.cloud.DeleteVolume)
}

// newDiskName is unique, and names the process that creates the disk and
// the VM it is for, so that the next create_disk for that VM finds what an
// interrupted one left and can tell whether that call still runs.
func newDiskName(vmID string) (string, error) {
	name, err := newVMName()
	if err != nil {
		return "", err
	}
	return marks.DiskName(strings.TrimPrefix(name, "vm-"), vmID), nil
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
	suffix := marks.DiskForVM(vmID)
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
	return strings.HasSuffix(v.Name, suffix) &&
		v.DiskMark().LeftByCreateDisk(time.Now(), marks.CreateDiskLifetime(c.cfg.CloudStack))
}
