package marks_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// TestProcessGoneAndAlive: this process is alive; a pid no process has on
// this host is gone; another host's process and an unreadable owner are
// neither, so no rule acts on them.
func TestProcessGoneAndAlive(t *testing.T) {
	host, _ := os.Hostname()
	for _, c := range []struct {
		owner       string
		gone, alive bool
	}{
		{marks.ThisProcess(), false, true},
		{"999999999@" + host, true, false},
		{"1@another-host", false, false},
		{"not a process", false, false},
		{"", false, false},
		{"-5@" + host, false, false},
	} {
		if got := marks.ProcessGone(c.owner); got != c.gone {
			t.Errorf("ProcessGone(%q) = %v", c.owner, got)
		}
		if got := marks.ProcessAlive(c.owner); got != c.alive {
			t.Errorf("ProcessAlive(%q) = %v", c.owner, got)
		}
	}
	if a, b := marks.AttemptToken(), marks.AttemptToken(); len(a) != 8 || a == b {
		t.Errorf("attempt tokens %q and %q: want 8 hex digits, each its own", a, b)
	}
}

// TestLeftByCreateDisk: a create_disk's disk for a VM, unused and detached,
// is left when its process is gone or it is older than the longest call;
// used, attached, made without a VM or by someone else, it never is.
func TestLeftByCreateDisk(t *testing.T) {
	host, _ := os.Hostname()
	now := time.Now()
	name := func(owner string) string { return "bosh-disk-1f0c-by-" + owner + "-for-vm-9" }
	dead, self := "999999999@"+host, marks.ThisProcess()
	for _, c := range []struct {
		disk         marks.Disk
		unused, left bool
	}{
		{marks.Disk{Name: name(dead), NeverUsed: true, Created: now}, true, true},
		{marks.Disk{Name: name(self), NeverUsed: true, Created: now}, true, false},
		{marks.Disk{Name: name(self), NeverUsed: true, Created: now.Add(-time.Hour)}, true, true},
		{marks.Disk{Name: name("1@elsewhere"), NeverUsed: true}, true, false},
		{marks.Disk{Name: name(dead), Created: now}, false, false},
		{marks.Disk{Name: name(dead), NeverUsed: true, Attached: true}, false, false},
		{marks.Disk{Name: "bosh-disk-1f0c", NeverUsed: true}, false, false},
		{marks.Disk{Name: "data-by-" + dead + "-for-vm-9", NeverUsed: true}, false, false},
	} {
		if got := c.disk.UnusedForVM(); got != c.unused {
			t.Errorf("%+v UnusedForVM = %v", c.disk, got)
		}
		if got := c.disk.LeftByCreateDisk(now, time.Minute); got != c.left {
			t.Errorf("%+v LeftByCreateDisk = %v", c.disk, got)
		}
	}
	if got := marks.DiskCreator(name(dead)); got != dead {
		t.Errorf("DiskCreator = %q, want %q", got, dead)
	}
}

// TestDiskNameNamesItsProcessAndVM: create_disk's name for a VM reads back
// as this process and ends with the VM; one without a VM names neither.
func TestDiskNameNamesItsProcessAndVM(t *testing.T) {
	name := marks.DiskName("1f0c", "vm-9")
	if !marks.MadeByCreateDisk(name) || marks.DiskCreator(name) != marks.ThisProcess() ||
		!strings.HasSuffix(name, marks.DiskForVM("vm-9")) {
		t.Errorf("%q: want create_disk's name, by this process, for vm-9", name)
	}
	if plain := marks.DiskName("1f0c", ""); plain != "bosh-disk-1f0c" || marks.DiskCreator(plain) != "" {
		t.Errorf("a disk for no VM is named %q", plain)
	}
	if s := marks.SnapshotName("1f0c"); !marks.MadeBySnapshotDisk(s) || marks.MadeBySnapshotDisk("1f0c") {
		t.Errorf("snapshot name %q", s)
	}
}

// TestLeftIncomplete: a resource this director's call tagged incomplete
// is left once the process the tag names is gone from this host; another
// director's, a live call's or one without the tag never is.
func TestLeftIncomplete(t *testing.T) {
	host, _ := os.Hostname()
	dead := "999999999@" + host
	for _, c := range []struct {
		tags map[string]string
		want bool
	}{
		{map[string]string{marks.DirectorTag: "d", marks.IncompleteTag: dead}, true},
		{map[string]string{marks.DirectorTag: "e", marks.IncompleteTag: dead}, false},
		{map[string]string{marks.DirectorTag: "d", marks.IncompleteTag: marks.ThisProcess()}, false},
		{map[string]string{marks.DirectorTag: "d", marks.IncompleteTag: "1@elsewhere"}, false},
		{map[string]string{marks.DirectorTag: "d"}, false},
	} {
		if got := marks.LeftIncomplete(c.tags, "d"); got != c.want {
			t.Errorf("%v LeftIncomplete = %v", c.tags, got)
		}
	}
	if owner, ok := marks.IncompleteOwner(map[string]string{marks.IncompleteTag: "7@h"}); !ok || owner != "7@h" {
		t.Errorf("IncompleteOwner = %q, %v", owner, ok)
	}
	if _, ok := marks.IncompleteOwner(nil); ok {
		t.Error("a resource without the mark has an owner")
	}
}
