package marks

import (
	"strings"
	"time"
)

// DiskNamePrefix opens the name of every disk create_disk makes:
// bosh-disk-<uuid>, then, for a disk made for a VM, -by-<pid>@<host> (the
// creating process) and -for-<VM id>: the next create_disk for that VM
// finds what an interrupted one left and can tell whether that call still
// runs.
const (
	DiskNamePrefix = "bosh-disk-"
	DiskByInfix    = "-by-"
	DiskForInfix   = "-for-"
)

// DiskName is the name create_disk gives a disk: unique (unique is a
// fresh uuid), and for a VM (vmID not empty) naming this process and the VM.
func DiskName(unique, vmID string) string {
	name := DiskNamePrefix + unique
	if vmID != "" {
		name += DiskByInfix + ThisProcess() + DiskForVM(vmID)
	}
	return name
}

// DiskForVM ends the name of every disk create_disk makes for the VM.
func DiskForVM(vmID string) string { return DiskForInfix + vmID }

// DiskCreator is the process a disk's name says created it, or "".
func DiskCreator(name string) string {
	_, rest, ok := strings.Cut(name, DiskByInfix)
	if !ok {
		return ""
	}
	owner, _, _ := strings.Cut(rest, DiskForInfix)
	return owner
}

// MadeByCreateDisk says the CPI's create_disk made the volume named so.
func MadeByCreateDisk(name string) bool {
	return strings.HasPrefix(name, DiskNamePrefix)
}

// Disk is what the leftover rules read of a volume.
type Disk struct {
	Name     string
	Attached bool
	// NeverUsed says the volume was never created on primary storage: it
	// holds no data.
	NeverUsed bool
	Created   time.Time
}

// UnusedForVM says create_disk made the disk for a VM and nothing has
// used it since: detached and never used. The director attaches such a
// disk right after create_disk; one that stays so is what an interrupted
// create_disk left.
func (d Disk) UnusedForVM() bool {
	return MadeByCreateDisk(d.Name) && strings.Contains(d.Name, DiskForInfix) && !d.Attached && d.NeverUsed
}

// LeftByCreateDisk says a create_disk for a VM that no longer runs left
// the disk: unused, and its creating process gone from this host, or
// older than longest, the longest a create_disk call can last
// (CreateDiskLifetime).
func (d Disk) LeftByCreateDisk(now time.Time, longest time.Duration) bool {
	if !d.UnusedForVM() {
		return false
	}
	return ProcessGone(DiskCreator(d.Name)) || !d.Created.IsZero() && now.Sub(d.Created) > longest
}
