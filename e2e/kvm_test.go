//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// TestKVMCreateEnv is the KVM phase (make e2e-kvm, make test-e2e-kvm):
// create-env of the test deployment from a stemcell shaped as bosh.io's
// OpenStack KVM stemcell on KVM hosts. The CPI gives the VM a config drive
// ISO, the agent reads its settings from that ISO (the launcher hands it
// the drive's files), the persistent disk's hint is the virtio serial the
// agent's own resolver follows to the guest's device, and delete-env takes
// the VM, its ISO, the disk and the template away, leaving the census as
// before.
func TestKVMCreateEnv(t *testing.T) {
	c := loadConfig(t)
	s := newSuite(t, c, c.Lifecycle)
	greeting := fmt.Sprintf("hello from the KVM phase, %d", time.Now().UnixNano())
	before := s.census(t)
	var d deployment
	iso := ""
	ok := t.Run("create-env", func(t *testing.T) {
		s.run(t, "create-env", c.ComputeOffering, c.DiskSize, greeting)
		d = s.state(t)
		s.assertDeployed(t, d, c.ComputeOffering, greeting)
		if !strings.HasPrefix(d.Stemcell, configDriveCIDPrefix) {
			t.Errorf("stemcell CID %s does not mark its VMs as needing a config drive", d.Stemcell)
		}
		s.assertOpenStackTemplate(t, d.Template)
		iso = s.assertConfigDrive(t, d.VM)
		s.assertVirtioHint(t, d)
	})
	// Whatever create-env did, delete-env takes it away.
	t.Run("delete-env", func(t *testing.T) {
		s.deleteEnv(t, d, before, c.ComputeOffering, c.DiskSize, greeting)
		if iso != "" && first(s.isos(t, iso)) != nil {
			t.Errorf("the config drive ISO %s of VM %s is still there after delete-env", iso, d.VM)
		}
	})
	if !ok {
		t.Fatal("create-env on KVM failed (delete-env ran all the same)")
	}
}

// assertOpenStackTemplate: the stemcell became a KVM QCOW2 template.
func (s *suite) assertOpenStackTemplate(t *testing.T, id string) {
	t.Helper()
	tpl := s.template(t, id)
	if tpl == nil || tpl.Hypervisor != "KVM" || tpl.Format != "QCOW2" {
		t.Fatalf("the stemcell's template %s is not a KVM QCOW2 template: %+v", id, tpl)
	}
}

// assertConfigDrive checks the VM boots with the CPI's config drive ISO
// attached (private, not extractable) and that its agent was given the
// settings from that drive, not from user data. It returns the ISO's id.
func (s *suite) assertConfigDrive(t *testing.T, vmID string) string {
	t.Helper()
	vm := s.vm(t, vmID)
	if vm == nil || vm.Isoid == "" {
		t.Fatalf("VM %s has no ISO attached: %+v", vmID, vm)
	}
	iso := first(s.isos(t, vm.Isoid))
	if iso == nil || iso.Ispublic || iso.Isextractable || !iso.Isready {
		t.Fatalf("VM %s's ISO %s is not a ready, private, non-extractable ISO: %+v", vmID, vm.Isoid, iso)
	}
	if s.agentBase(vmID) == "" {
		t.Log("E2E_AGENT_DIR is unset: where the agent read its settings is not checked")
		return iso.Id
	}
	var cfg struct {
		Infrastructure struct {
			Settings struct{ Sources []map[string]string }
		}
	}
	readJSONFile(t, filepath.Join(s.agentBase(vmID), "agent.json"), &cfg)
	src := cfg.Infrastructure.Settings.Sources
	want := filepath.Join(s.agentBase(vmID), "config-drive", "ec2", "latest", "user-data")
	if len(src) != 1 || src[0]["Type"] != "File" || src[0]["SettingsPath"] != want {
		t.Fatalf("the agent of VM %s does not read its settings from the config drive (%s): %+v", vmID, want, src)
	}
	var settings struct {
		AgentID string `json:"agent_id"`
	}
	if !readJSONFile(t, want, &settings) || settings.AgentID == "" {
		t.Errorf("the config drive of VM %s carries no agent_id", vmID)
	}
	return iso.Id
}

// assertVirtioHint checks the hint attach_disk answered, as the agent
// recorded it (add_persistent_disk): /dev/disk/by-id/virtio-<serial>, the
// serial CloudStack gives the volume on KVM (its UUID without dashes, 20
// characters); then bosh-agent's own virtio resolver (tools/devicepaths)
// finds through it the device the guest has, in a /dev laid out from the
// simulator's view of the guest's disks.
func (s *suite) assertVirtioHint(t *testing.T, d deployment) {
	t.Helper()
	if s.agentBase(d.VM) == "" || s.DevicePaths == "" {
		t.Log("E2E_AGENT_DIR or E2E_DEVICEPATHS is unset: the agent's disk hint is not resolved")
		return
	}
	hint := s.diskHint(t, d)
	serial := strings.ReplaceAll(d.Disk, "-", "")[:20]
	if want := "/dev/disk/by-id/virtio-" + serial; hint.Path != want {
		t.Fatalf("the agent of VM %s has hint %+v for disk %s, want path %s", d.VM, hint, d.Disk, want)
	}
	var view guestDisks
	if err := json.Unmarshal(s.simMetadata(t, d.VM, "sim/disks"), &view); err != nil || view.Hypervisor != "KVM" {
		t.Fatalf("the guest's disks of VM %s: %+v, %v", d.VM, view, err)
	}
	found := s.resolve(t, view, d.Disk, hint)
	device := ""
	for _, g := range view.Disks {
		if g.VolumeID == d.Disk {
			device = "/dev/" + g.Name
		}
	}
	if device == "" || found != device {
		t.Errorf("the agent's resolver found disk %s (hint %s) at %q, want the guest's %q", d.Disk, hint.Path, found, device)
	}
}

// agentDiskHint is one entry of the agent's persistent_disk_hints.json
// (bosh-agent's settings.DiskSettings).
type agentDiskHint struct {
	ID, VolumeID, Path string
}

// diskHint reads the hint the agent saved for the deployment's disk.
func (s *suite) diskHint(t *testing.T, d deployment) agentDiskHint {
	t.Helper()
	var hints map[string]agentDiskHint
	eventually(t, 10*time.Second, func() string {
		for _, dir := range []string{"bosh", filepath.Join("bosh", "settings")} {
			if readJSONFile(t, filepath.Join(s.agentBase(d.VM), dir, "persistent_disk_hints.json"), &hints) &&
				hints[d.Disk].Path != "" {
				return ""
			}
		}
		return fmt.Sprintf("the agent of VM %s saved no hint for disk %s: %+v", d.VM, d.Disk, hints)
	})
	return hints[d.Disk]
}

// guestDisks is the simulator's view of a VM's disks as its guest names
// them (/metadata/<vm>/sim/disks).
type guestDisks struct {
	Hypervisor string `json:"hypervisor"`
	Disks      []struct {
		VolumeID string   `json:"volumeid"`
		Name     string   `json:"name"`
		Links    []string `json:"links"`
	} `json:"disks"`
}

// simMetadata reads one of the simulator's own metadata paths of a VM.
func (s *suite) simMetadata(t *testing.T, vmID, path string) []byte {
	t.Helper()
	url := strings.TrimSuffix(s.APIURL, "/client/api") + "/metadata/" + vmID + "/" + path
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %v", url, resp.StatusCode, err)
	}
	return b
}

// resolve lays out the guest's /dev (each disk a file under its name,
// udev's links relative, as udev makes them) and runs the agent's resolver
// on the disk's hint; it returns the device path found.
func (s *suite) resolve(t *testing.T, view guestDisks, cid string, hint agentDiskHint) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "dev", "disk", "by-id"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, g := range view.Disks {
		if g.Name == "" {
			t.Fatalf("the simulator names no device for %+v", g)
		}
		if err := os.WriteFile(filepath.Join(root, "dev", g.Name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, link := range g.Links {
			target, _ := filepath.Rel(filepath.Dir(filepath.Join("/dev", link)), filepath.Join("/dev", g.Name))
			if err := os.Symlink(target, filepath.Join(root, "dev", link)); err != nil {
				t.Fatal(err)
			}
		}
	}
	settings, _ := json.Marshal(map[string]any{"disks": map[string]any{
		"persistent": map[string]any{cid: map[string]string{"path": hint.Path, "volume_id": hint.VolumeID}},
	}})
	cmd := exec.Command(s.DevicePaths, "-root", root, "-mapped-timeout", "1s")
	cmd.Stdin = bytes.NewReader(settings)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var found struct {
		Persistent map[string]struct{ Path, Error string } `json:"persistent"`
	}
	if err != nil || json.Unmarshal(out, &found) != nil {
		t.Fatalf("%s: %v\n%s\n%s", s.DevicePaths, err, out, stderr.String())
	}
	if e := found.Persistent[cid].Error; e != "" {
		t.Errorf("the agent's resolver did not find disk %s: %s", cid, e)
	}
	return found.Persistent[cid].Path
}

// isos lists the account's ISOs, or with an id the one ISO (isofilter
// self lists them before they are ready too).
func (s *suite) isos(t *testing.T, id string) []*cloudstack.Iso {
	t.Helper()
	p := s.cs.ISO.NewListIsosParams()
	s.scope(p)
	p.SetIsofilter("self")
	if id != "" {
		p.SetId(id)
	}
	p.SetListall(true)
	r, err := s.cs.ISO.ListIsos(p)
	if err != nil {
		t.Fatalf("listIsos id=%s: %v", id, err)
	}
	return r.Isos
}
