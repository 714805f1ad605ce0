package cpi_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"go.uber.org/mock/gomock"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// deadProcess is a process name (pid@host) of this host that no process
// has: beyond any pid_max, so kill(pid, 0) answers ESRCH.
func deadProcess(t *testing.T) string {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d@%s", 1<<30, host)
}

var diskVM = &cloudstack.VM{ID: "vm-1", Name: "vm-abc", State: "Running", ZoneID: "zone-1",
	Tags: map[string]string{marks.AgentTag: "agent-1"}}

// create_disk for a VM is in its zone, on the disk type's offering, and
// tagged as this director's for the VM's agent; first it deletes what
// interrupted create_disk calls for that VM left, and nothing else.
func TestCreateDiskForAVM(t *testing.T) {
	c, cloud := createVMCPI(t)
	cloud.EXPECT().FindVM("vm-1").Return(diskVM, nil)
	cloud.EXPECT().FindDiskOffering("fast").Return(&cloudstack.DiskOffering{ID: "off-fast", Name: "fast", SizeGB: 20}, nil)
	long := time.Now().Add(-time.Hour)
	cloud.EXPECT().VolumesNamedLike("-for-vm-1").Return([]cloudstack.Volume{
		{ID: "left-1", Name: "bosh-disk-1-by-" + deadProcess(t) + "-for-vm-1", Type: "DATADISK", State: "Allocated"},
		{ID: "left-2", Name: "bosh-disk-2-by-9@elsewhere-for-vm-1", Type: "DATADISK", State: "Allocated", Created: long},
		{ID: "used", Name: "bosh-disk-3-by-9@elsewhere-for-vm-1", Type: "DATADISK", State: "Ready", Created: long},
		{ID: "attached", Name: "bosh-disk-4-by-" + deadProcess(t) + "-for-vm-1", Type: "DATADISK", State: "Allocated",
			VMID: "vm-1"},
		{ID: "recent", Name: "bosh-disk-5-by-9@elsewhere-for-vm-1", Type: "DATADISK", State: "Allocated",
			Created: time.Now()},
	}, nil)
	cloud.EXPECT().DeleteVolume("left-1").Return(nil)
	cloud.EXPECT().DeleteVolume("left-2").Return(nil)
	var name string
	cloud.EXPECT().CreateVolume(gomock.Any(), "zone-1", "off-fast", 0,
		map[string]string{marks.DirectorTag: "dir-1", marks.AgentTag: "agent-1"}).DoAndReturn(
		func(n, _, _ string, _ int, _ map[string]string) (*cloudstack.Volume, error) {
			name = n
			return &cloudstack.Volume{ID: "disk-1", Name: n}, nil
		})
	vmCID := apiv1.NewVMCID("vm-1")
	cid, err := c.CreateDisk(10*1024, diskProps(`{"disk_offering":"fast"}`), &vmCID)
	if err != nil || cid.AsString() != "disk-1" {
		t.Fatalf("create_disk: %v %v", cid, err)
	}
	if !strings.HasPrefix(name, "bosh-disk-") || !strings.HasSuffix(name, "-for-vm-1") {
		t.Errorf("disk named %q, which the next create_disk for the VM would not recognise", name)
	}
}

// With no VM the disk goes to the default zone; a customized offering is
// given the size in whole GiB, a fixed one must be large enough.
func TestCreateDiskSizesOnTheOffering(t *testing.T) {
	t.Run("customized", func(t *testing.T) {
		c, cloud := createVMCPI(t)
		cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1"}}, nil)
		cloud.EXPECT().FindDiskOffering("any").Return(&cloudstack.DiskOffering{ID: "off-any", Customized: true}, nil)
		cloud.EXPECT().CreateVolume(gomock.Any(), "zone-1", "off-any", 3, map[string]string{marks.DirectorTag: "dir-1"}).
			Return(&cloudstack.Volume{ID: "disk-1"}, nil)
		if _, err := c.CreateDisk(2049, diskProps(`{"disk_offering":"any"}`), nil); err != nil {
			t.Fatalf("create_disk: %v", err)
		}
	})
	t.Run("fixed too small", func(t *testing.T) {
		c, cloud := createVMCPI(t)
		cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1"}}, nil)
		cloud.EXPECT().FindDiskOffering("small").Return(&cloudstack.DiskOffering{ID: "off-s", Name: "small", SizeGB: 1}, nil)
		_, err := c.CreateDisk(2048, diskProps(`{"disk_offering":"small"}`), nil)
		if got := errorType(t, err); got != "Bosh::Clouds::CloudError" || !strings.Contains(err.Error(), `"small" has 1 GiB`) {
			t.Fatalf("got %s %v", got, err)
		}
	})
	t.Run("no size", func(t *testing.T) {
		c, _ := createVMCPI(t)
		if got := errorType(t, func() error { _, err := c.CreateDisk(0, diskProps(`{}`), nil); return err }()); got != "Bosh::Clouds::CloudError" {
			t.Fatalf("got %s", got)
		}
	})
}

// After an uncertain create (a lost answer, a failed job) create_disk
// finds the volume by its unique name and deletes it: ok_to_retry exactly
// when nothing is left; a refusal CloudStack never acted on is not looked
// for.
func TestCreateDiskRemovesWhatAFailedCreateMade(t *testing.T) {
	lost := &cloudstack.UnreachableError{Endpoint: "cs", Err: errors.New("connection reset")}
	capacity := &cloudstack.APIError{Command: "createVolume", ErrorCode: 533, JobID: "job-1", Text: "Insufficient capacity"}
	// createTags refused as a request, after createVolume had made the
	// volume: CloudStack did not act on the tags, but on the volume it did.
	tagsRefused := func(code int) error {
		return &cloudstack.MarkError{ResourceType: cloudstack.ResourceVolume, ID: "disk-x",
			Err: &cloudstack.APIError{Command: "createTags", ErrorCode: code, Text: "refused"}}
	}
	for name, tc := range map[string]struct {
		cause   error
		settled *cloudstack.Volume
		lookErr error
		delErr  error
		kind    string
		retry   bool
		says    string
	}{
		"lost, made":          {lost, &cloudstack.Volume{ID: "disk-x", State: "Allocated"}, nil, nil, "CloudError", true, "was deleted"},
		"lost, none":          {lost, nil, nil, nil, "CloudError", true, "CloudStack has no volume named"},
		"capacity, none":      {capacity, nil, nil, nil, "NoDiskSpace", true, "CloudStack has no volume named"},
		"delete fails":        {lost, &cloudstack.Volume{ID: "disk-x", State: "Ready"}, nil, errors.New("no"), "CloudError", false, "is still in CloudStack"},
		"lookup fails":        {lost, nil, errors.New("no answer"), nil, "CloudError", false, "may still exist"},
		"tags refused, 530":   {tagsRefused(530), &cloudstack.Volume{ID: "disk-x", State: "Allocated"}, nil, nil, "CloudError", true, "was deleted"},
		"tags refused, 533":   {tagsRefused(533), &cloudstack.Volume{ID: "disk-x", State: "Allocated"}, nil, nil, "NoDiskSpace", true, "was deleted"},
		"tags refused, stays": {tagsRefused(533), &cloudstack.Volume{ID: "disk-x", State: "Allocated"}, nil, errors.New("no"), "NoDiskSpace", false, "is still in CloudStack"},
		"refused, unactioned": {&cloudstack.APIError{Command: "createVolume", ErrorCode: 431, Text: "bad"}, nil, nil, nil, "CloudError", false, "bad"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			cloud.EXPECT().FindZones([]string{"z1"}).Return([]cloudstack.Zone{{ID: "zone-1"}}, nil)
			cloud.EXPECT().FindDiskOffering("any").Return(&cloudstack.DiskOffering{ID: "off-any", Customized: true}, nil)
			var made string
			cloud.EXPECT().CreateVolume(gomock.Any(), "zone-1", "off-any", 1, gomock.Any()).DoAndReturn(
				func(n, _, _ string, _ int, _ map[string]string) (*cloudstack.Volume, error) {
					made = n
					return nil, tc.cause
				})
			if !cloudstack.NotActedOn(tc.cause) {
				cloud.EXPECT().SettledVolume(gomock.Any(), gomock.Any()).DoAndReturn(
					func(n string, _ time.Time) (*cloudstack.Volume, error) {
						if n != made {
							t.Errorf("looked for %q, made %q", n, made)
						}
						return tc.settled, tc.lookErr
					})
			}
			if tc.settled != nil {
				cloud.EXPECT().DeleteVolume("disk-x").Return(tc.delErr)
			}
			_, err := c.CreateDisk(1024, diskProps(`{"disk_offering":"any"}`), nil)
			if got := errorType(t, err); got != "Bosh::Clouds::"+tc.kind || retryable(t, err) != tc.retry ||
				!strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %s (retry %v) %v; want %s, retry %v, saying %q", got, retryable(t, err), err, tc.kind,
					tc.retry, tc.says)
			}
		})
	}
}

// delete_disk: gone already is success, attached is a CloudError, a free
// disk is deleted.
func TestDeleteDisk(t *testing.T) {
	for name, tc := range map[string]struct {
		vol    *cloudstack.Volume
		delete bool
		kind   string
	}{
		"absent":   {nil, false, ""},
		"gone":     {&cloudstack.Volume{ID: "disk-1", State: "Destroy"}, false, ""},
		"attached": {&cloudstack.Volume{ID: "disk-1", State: "Ready", VMID: "vm-1"}, false, "Bosh::Clouds::CloudError"},
		"free":     {&cloudstack.Volume{ID: "disk-1", State: "Ready"}, true, ""},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			cloud.EXPECT().FindVolume("disk-1").Return(tc.vol, nil)
			if tc.delete {
				cloud.EXPECT().DeleteVolume("disk-1").Return(nil)
			}
			err := c.DeleteDisk(apiv1.NewDiskCID("disk-1"))
			if tc.kind == "" && err != nil || tc.kind != "" && errorType(t, err) != tc.kind {
				t.Fatalf("delete_disk: %v, want %q", err, tc.kind)
			}
		})
	}
}

// detach_disk is idempotent: detached already asks CloudStack nothing
// more; attached to another VM is DiskNotAttached; a disk or VM that is
// gone is DiskNotFound or VMNotFound.
func TestDetachDisk(t *testing.T) {
	for name, tc := range map[string]struct {
		vm     *cloudstack.VM
		vol    *cloudstack.Volume
		detach bool
		kind   string
	}{
		"attached":     {diskVM, &cloudstack.Volume{ID: "disk-1", State: "Ready", VMID: "vm-1"}, true, ""},
		"detached":     {diskVM, &cloudstack.Volume{ID: "disk-1", State: "Ready"}, false, ""},
		"another VM's": {diskVM, &cloudstack.Volume{ID: "disk-1", State: "Ready", VMID: "vm-2"}, false, "DiskNotAttached"},
		"disk gone":    {diskVM, &cloudstack.Volume{ID: "disk-1", State: "Expunged"}, false, "DiskNotFound"},
		"VM gone":      {&cloudstack.VM{ID: "vm-1", State: "Expunging"}, nil, false, "VMNotFound"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			cloud.EXPECT().FindVM("vm-1").Return(tc.vm, nil)
			if tc.vol != nil {
				cloud.EXPECT().FindVolume("disk-1").Return(tc.vol, nil)
			}
			if tc.detach {
				cloud.EXPECT().DetachVolume("disk-1").Return(nil)
			}
			err := c.DetachDisk(apiv1.NewVMCID("vm-1"), apiv1.NewDiskCID("disk-1"))
			if tc.kind == "" && err != nil || tc.kind != "" && errorType(t, err) != "Bosh::Clouds::"+tc.kind {
				t.Fatalf("detach_disk: %v, want %q", err, tc.kind)
			}
		})
	}
}

// get_disks answers the persistent disks only: not the root disk, not
// this CPI's ephemeral disk, not an earlier CPI's.
func TestGetDisksAnswersPersistentDisksOnly(t *testing.T) {
	c, cloud := createVMCPI(t)
	vm := &cloudstack.VM{ID: "vm-1", Name: "cpivm-1", State: "Running"}
	cloud.EXPECT().FindVM("vm-1").Return(vm, nil)
	cloud.EXPECT().VMVolumes("vm-1").Return([]cloudstack.Volume{
		{ID: "root", Name: "ROOT-7", Type: "ROOT"},
		{ID: "eph", Name: "DATA-7", Type: "DATADISK"},
		{ID: "old-eph", Name: "cpi-ephemeral-disk-1", Type: "DATADISK"},
		{ID: "disk-1", Name: "bosh-disk-1", Type: "DATADISK"},
		{ID: "disk-2", Name: "cpi-disk-2", Type: "DATADISK"},
	}, nil)
	disks, err := c.GetDisks(apiv1.NewVMCID("vm-1"))
	if err != nil {
		t.Fatalf("get_disks: %v", err)
	}
	var got []string
	for _, d := range disks {
		got = append(got, d.AsString())
	}
	if strings.Join(got, ",") != "disk-1,disk-2" {
		t.Errorf("get_disks = %v, want disk-1 and disk-2", got)
	}
}

// set_vm_metadata moves the VM's tags to the metadata (empty values
// included: the CloudStack layer drops them) and names the VM after the
// instance, cut to CloudStack's 255 characters; a compilation VM is named
// for its compilation; no name leaves the display name.
func TestSetVMMetadata(t *testing.T) {
	long := strings.Repeat("x", 300)
	for name, tc := range map[string]struct {
		meta    map[string]any
		display string
	}{
		"instance":    {map[string]any{"name": "web/0", "empty": ""}, "web_0"},
		"compilation": {map[string]any{"name": "x", "compiling": "pkg"}, "compiling-pkg"},
		"long":        {map[string]any{"instance_group": long}, long[:255]},
		"no name":     {map[string]any{"director": "d"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			vm := &cloudstack.VM{ID: "vm-1", State: "Running", Tags: map[string]string{"old": "1"}}
			cloud.EXPECT().FindVM("vm-1").Return(vm, nil)
			want := map[string]string{}
			for k, v := range tc.meta {
				want[k] = v.(string)
			}
			cloud.EXPECT().SetTags(cloudstack.ResourceVM, "vm-1", vm.Tags, want).Return(nil)
			if tc.display != "" {
				cloud.EXPECT().SetDisplayName("vm-1", tc.display).Return(nil)
			}
			if err := c.SetVMMetadata(apiv1.NewVMCID("vm-1"), apiv1.NewVMMeta(tc.meta)); err != nil {
				t.Fatalf("set_vm_metadata: %v", err)
			}
		})
	}
}

// set_disk_metadata moves the disk's tags to the metadata.
func TestSetDiskMetadata(t *testing.T) {
	c, cloud := createVMCPI(t)
	vol := &cloudstack.Volume{ID: "disk-1", State: "Ready", Tags: map[string]string{"old": "1"}}
	cloud.EXPECT().FindVolume("disk-1").Return(vol, nil)
	cloud.EXPECT().SetTags(cloudstack.ResourceVolume, "disk-1", vol.Tags, map[string]string{"job": "db", "index": "0"})
	meta := apiv1.NewDiskMeta(map[string]any{"job": "db", "index": 0})
	if err := c.SetDiskMetadata(apiv1.NewDiskCID("disk-1"), meta); err != nil {
		t.Fatalf("set_disk_metadata: %v", err)
	}
}

// reboot_vm of a VM that is gone is VMNotFound; otherwise it reboots.
func TestRebootVM(t *testing.T) {
	c, cloud := createVMCPI(t)
	cloud.EXPECT().FindVM("vm-1").Return(diskVM, nil)
	cloud.EXPECT().RebootVM(diskVM).Return(nil)
	if err := c.RebootVM(apiv1.NewVMCID("vm-1")); err != nil {
		t.Fatalf("reboot_vm: %v", err)
	}
	cloud.EXPECT().FindVM("vm-2").Return(nil, nil)
	if got := errorType(t, c.RebootVM(apiv1.NewVMCID("vm-2"))); got != "Bosh::Clouds::VMNotFound" {
		t.Fatalf("reboot_vm of an absent VM: %s", got)
	}
}

// snapshot_disk first deletes this director's snapshots of the disk that
// a dead snapshot_disk left marked incomplete (never another director's,
// nor one whose process may run), creates the snapshot marked incomplete
// with the metadata, then clears the mark.
func TestSnapshotDisk(t *testing.T) {
	c, cloud := createVMCPI(t)
	dead := deadProcess(t)
	cloud.EXPECT().FindVolume("disk-1").Return(&cloudstack.Volume{ID: "disk-1", State: "Ready"}, nil)
	cloud.EXPECT().VolumeSnapshots("disk-1").Return([]*cloudstack.Snapshot{
		{ID: "left", Name: "bosh-snapshot-1", State: "BackedUp",
			Tags: map[string]string{marks.DirectorTag: "dir-1", marks.IncompleteTag: dead}},
		{ID: "other-director", Name: "bosh-snapshot-2", State: "BackedUp",
			Tags: map[string]string{marks.DirectorTag: "dir-2", marks.IncompleteTag: dead}},
		{ID: "elsewhere", Name: "bosh-snapshot-3", State: "BackedUp",
			Tags: map[string]string{marks.DirectorTag: "dir-1", marks.IncompleteTag: "9@elsewhere"}},
		{ID: "complete", Name: "bosh-snapshot-4", State: "BackedUp", Tags: map[string]string{marks.DirectorTag: "dir-1"}},
		{ID: "backing-up", Name: "bosh-snapshot-5", State: "BackingUp"},
	}, nil)
	// One a job still works on is waited for: its tags come with the job's end.
	cloud.EXPECT().SettledSnapshot("disk-1", "bosh-snapshot-5", gomock.Any()).Return(&cloudstack.Snapshot{ID: "backing-up",
		Name: "bosh-snapshot-5", State: "BackedUp",
		Tags: map[string]string{marks.DirectorTag: "dir-1", marks.IncompleteTag: dead}}, nil)
	cloud.EXPECT().DeleteSnapshot("left").Return(nil)
	cloud.EXPECT().DeleteSnapshot("backing-up").Return(nil)
	var mark string
	cloud.EXPECT().CreateSnapshot("disk-1", gomock.Any(), gomock.Any()).DoAndReturn(
		func(_, name string, tags map[string]string) (*cloudstack.Snapshot, error) {
			mark = tags[marks.IncompleteTag]
			if !strings.HasPrefix(name, "bosh-snapshot-") || tags["deployment"] != "d" ||
				tags[marks.DirectorTag] != "dir-1" || mark == "" {
				t.Errorf("snapshot %q with tags %v", name, tags)
			}
			return &cloudstack.Snapshot{ID: "snap-1", Name: name}, nil
		})
	cloud.EXPECT().SetTags(cloudstack.ResourceSnapshot, "snap-1", gomock.Any(), map[string]string{marks.IncompleteTag: ""}).
		DoAndReturn(func(_, _ string, current, _ map[string]string) error {
			if current[marks.IncompleteTag] != mark {
				t.Errorf("cleared mark %v, made %q", current, mark)
			}
			return nil
		})
	cid, err := c.SnapshotDisk(apiv1.NewDiskCID("disk-1"), apiv1.NewDiskMeta(map[string]any{"deployment": "d"}))
	if err != nil || cid.AsString() != "snap-1" {
		t.Fatalf("snapshot_disk: %v %v", cid, err)
	}
}

// After an uncertain snapshot the call finds it by its unique name and
// deletes it once CloudStack has finished it; one still being made is
// left, named, and forbids the retry.
func TestSnapshotDiskRemovesWhatAFailedSnapshotMade(t *testing.T) {
	lost := &cloudstack.UnreachableError{Endpoint: "cs", Err: errors.New("connection reset")}
	for name, tc := range map[string]struct {
		settled *cloudstack.Snapshot
		retry   bool
		says    string
	}{
		"made":          {&cloudstack.Snapshot{ID: "snap-x", State: "BackedUp"}, true, "was deleted"},
		"none":          {nil, true, "CloudStack has no snapshot named"},
		"still backing": {&cloudstack.Snapshot{ID: "snap-x", State: "BackingUp"}, false, "is still BackingUp"},
	} {
		t.Run(name, func(t *testing.T) {
			c, cloud := createVMCPI(t)
			cloud.EXPECT().FindVolume("disk-1").Return(&cloudstack.Volume{ID: "disk-1", State: "Ready"}, nil)
			cloud.EXPECT().VolumeSnapshots("disk-1").Return(nil, nil)
			cloud.EXPECT().CreateSnapshot("disk-1", gomock.Any(), gomock.Any()).Return(nil, lost)
			cloud.EXPECT().SettledSnapshot("disk-1", gomock.Any(), gomock.Any()).Return(tc.settled, nil)
			if tc.settled != nil && tc.retry {
				cloud.EXPECT().DeleteSnapshot("snap-x").Return(nil)
			}
			_, err := c.SnapshotDisk(apiv1.NewDiskCID("disk-1"), apiv1.NewDiskMeta(nil))
			if retryable(t, err) != tc.retry || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v (retry %v), want retry %v saying %q", err, retryable(t, err), tc.retry, tc.says)
			}
		})
	}
}

// A refused deleteTags (the incomplete mark's clearing) after the snapshot
// was made deletes the snapshot: CloudStack did not act on the request, but
// the snapshot exists. ok_to_retry only when it is gone.
func TestSnapshotDiskDeletesTheSnapshotWhoseMarkStays(t *testing.T) {
	for _, code := range []int{530, 533} {
		for _, delErr := range []error{nil, errors.New("refused too")} {
			t.Run(fmt.Sprintf("%d, delete %v", code, delErr), func(t *testing.T) {
				c, cloud := createVMCPI(t)
				cloud.EXPECT().FindVolume("disk-1").Return(&cloudstack.Volume{ID: "disk-1", State: "Ready"}, nil)
				cloud.EXPECT().VolumeSnapshots("disk-1").Return(nil, nil)
				cloud.EXPECT().CreateSnapshot("disk-1", gomock.Any(), gomock.Any()).DoAndReturn(
					func(_, name string, _ map[string]string) (*cloudstack.Snapshot, error) {
						return &cloudstack.Snapshot{ID: "snap-x", Name: name, State: "BackedUp"}, nil
					})
				cloud.EXPECT().SetTags(cloudstack.ResourceSnapshot, "snap-x", gomock.Any(), gomock.Any()).
					Return(&cloudstack.APIError{Command: "deleteTags", ErrorCode: code, Text: "refused"})
				cloud.EXPECT().SettledSnapshot("disk-1", gomock.Any(), gomock.Any()).
					Return(&cloudstack.Snapshot{ID: "snap-x", State: "BackedUp"}, nil)
				cloud.EXPECT().DeleteSnapshot("snap-x").Return(delErr)
				_, err := c.SnapshotDisk(apiv1.NewDiskCID("disk-1"), apiv1.NewDiskMeta(nil))
				if retryable(t, err) != (delErr == nil) || !strings.Contains(err.Error(), "snap-x") {
					t.Fatalf("got %v (retry %v)", err, retryable(t, err))
				}
			})
		}
	}
}

// delete_snapshot deletes a snapshot that is there; its failure is a
// CloudError naming it.
func TestDeleteSnapshot(t *testing.T) {
	c, cloud := createVMCPI(t)
	cloud.EXPECT().FindSnapshot("snap-1").Return(&cloudstack.Snapshot{ID: "snap-1", State: "BackedUp"}, nil).Times(2)
	gomock.InOrder(
		cloud.EXPECT().DeleteSnapshot("snap-1").Return(nil),
		cloud.EXPECT().DeleteSnapshot("snap-1").Return(errors.New("refused")),
	)
	if err := c.DeleteSnapshot(apiv1.NewSnapshotCID("snap-1")); err != nil {
		t.Fatalf("delete_snapshot: %v", err)
	}
	err := c.DeleteSnapshot(apiv1.NewSnapshotCID("snap-1"))
	if got := errorType(t, err); got != "Bosh::Clouds::CloudError" || !strings.Contains(err.Error(), "snap-1") {
		t.Fatalf("got %s %v", got, err)
	}
}
