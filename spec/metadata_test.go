package spec

import (
	"strings"
	"testing"
)

// The director's metadata as tags: CloudStack refuses a tag with an empty
// value (TaggedResourceManagerImpl.createTags), so empty values are left
// out, and one that empties a tag removes it; nested values are JSON; keys
// and values are cut to resource_tags' 255 characters.
func TestMetadataWithEmptyNestedAndLongValues(t *testing.T) {
	e := newEnv(t, nil)
	vm := e.createVM(e.stemcell(), "10.1.1.76")
	long := strings.Repeat("ü", 300)
	meta := map[string]any{"director": "spec-director", "deployment": "cf", "name": "web/0", "index": 0,
		"empty": "", "none": nil, "custom": map[string]any{"team": "x", "ids": []int{1, 2}}, "long": long}
	want := map[string]string{"director": "spec-director", "deployment": "cf", "name": "web/0", "index": "0",
		"custom": `{"ids":[1,2],"team":"x"}`, "long": strings.Repeat("ü", 255)}

	// create_vm's marks stay beside the metadata.
	marks := map[string]string{"bosh-director-uuid": "spec-director", "bosh-agent-id": "agent-10.1.1.76"}
	e.call("set_vm_metadata", vm, meta).ok(t)
	assertTags(t, "VM", tagsOf(e.vm(vm).Tags), with(want, marks))

	meta["deployment"] = "" // emptied: the tag goes
	delete(want, "deployment")
	e.call("set_vm_metadata", vm, meta).ok(t)
	assertTags(t, "VM after emptying deployment", tagsOf(e.vm(vm).Tags), with(want, marks))

	disk := e.createDisk(1024, map[string]any{"disk_offering": "Custom"}, vm)
	e.attachDisk(vm, disk)
	e.call("set_disk_metadata", disk, meta).ok(t)
	assertTags(t, "disk", tagsOf(e.volume(disk).Tags), with(want, marks))

	e.call("snapshot_disk", disk, meta).ok(t)
	snaps := e.snapshots()
	if len(snaps) != 1 {
		t.Fatalf("snapshots %+v", snaps)
	}
	// snapshot_disk marks the snapshot as this director's in createSnapshot.
	assertTags(t, "snapshot", tagsOf(snaps[0].Tags), with(want, map[string]string{"bosh-director-uuid": "spec-director"}))
}

func assertTags(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s tags %v, want %v", what, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s tag %s = %q, want %q", what, k, got[k], v)
		}
	}
}

func with(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
