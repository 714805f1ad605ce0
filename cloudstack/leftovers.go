package cloudstack

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The rules that tell what an interrupted CPI call left from what a
// running one is making: the CPI's own sweeps and `cloudstack-cpi
// orphans` both read the marks by them.

// ThisProcess names the running CPI process in an incomplete mark
// ("<pid>@<host>"): a later call on the same host can tell whether it still
// runs.
func ThisProcess() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s", os.Getpid(), host)
}

// ProcessGone says the process ThisProcess named is certainly gone: it was
// on this host, and kill(pid, 0) finds no such process. Another host's
// process, or an unreadable name, is never taken for gone.
func ProcessGone(owner string) bool {
	pid, ok := localPID(owner)
	return ok && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// ProcessAlive says the process ThisProcess named is on this host and
// still runs (a reused pid reads as alive: what it spares waits). Another
// host's process, or an unreadable name, is never taken for alive.
func ProcessAlive(owner string) bool {
	pid, ok := localPID(owner)
	return ok && !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// localPID is the pid of a process ThisProcess named on this host.
func localPID(owner string) (int, bool) {
	pidText, host, ok := strings.Cut(owner, "@")
	self, _ := os.Hostname()
	pid, err := strconv.Atoi(pidText)
	return pid, ok && err == nil && pid > 0 && host == self
}

// Running says whether the call a template's (or ISO's) incomplete mark
// names may still be running: on this host, unless kill(pid, 0) finds no
// such process; on another host, until the mark's time is up.
func (m TemplateMark) Running(now time.Time) bool {
	return !now.After(m.Until) && !ProcessGone(m.Owner)
}

// DiskNamePrefix opens the name of every disk create_disk makes:
// bosh-disk-<uuid>, then, for a disk made for a VM, -by-<pid>@<host> (the
// creating process) and -for-<VM id>.
const (
	DiskNamePrefix = "bosh-disk-"
	DiskByInfix    = "-by-"
	DiskForInfix   = "-for-"
)

// DiskCreator is the process a disk's name says created it, or "".
func DiskCreator(name string) string {
	_, rest, ok := strings.Cut(name, DiskByInfix)
	if !ok {
		return ""
	}
	owner, _, _ := strings.Cut(rest, DiskForInfix)
	return owner
}

// MadeByCreateDisk says the CPI's create_disk made the volume (its name).
func (v *Volume) MadeByCreateDisk() bool {
	return strings.HasPrefix(v.Name, DiskNamePrefix)
}

// UnusedDiskForVM says create_disk made the volume for a VM and nothing
// has used it since: detached and never created on primary storage (no
// data). The director attaches such a disk right after create_disk; one
// that stays so is what an interrupted create_disk left.
func (v *Volume) UnusedDiskForVM() bool {
	return v.MadeByCreateDisk() && strings.Contains(v.Name, DiskForInfix) && v.VMID == "" && v.NeverUsed()
}

// LeftByCreateDisk says a create_disk for a VM that no longer runs left
// the volume: unused, and its creating process gone from this host, or
// older than longest, the longest a create_disk call can last.
func (v *Volume) LeftByCreateDisk(now time.Time, longest time.Duration) bool {
	if !v.UnusedDiskForVM() {
		return false
	}
	return ProcessGone(DiskCreator(v.Name)) || !v.Created.IsZero() && now.Sub(v.Created) > longest
}

// SnapshotNamePrefix opens the unique name snapshot_disk gives every
// snapshot (bosh-snapshot-<uuid>), by which a snapshot_disk that lost
// CloudStack's answer finds it.
const SnapshotNamePrefix = "bosh-snapshot-"

// MadeBySnapshotDisk says the CPI's snapshot_disk made the snapshot (its
// name).
func (s *Snapshot) MadeBySnapshotDisk() bool {
	return strings.HasPrefix(s.Name, SnapshotNamePrefix)
}

// IncompleteOwner is the process a snapshot's incomplete mark names, and
// whether it has the mark: snapshot_disk tags its snapshot with it in the
// createSnapshot call and removes it once the snapshot is backed up.
func (s *Snapshot) IncompleteOwner() (string, bool) {
	owner, ok := s.Tags[IncompleteTag]
	return owner, ok
}
