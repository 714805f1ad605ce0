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

// The phases whose stemcell's VMs read their settings from an ISO the CPI
// attaches (make e2e-kvm, e2e-xen-openstack, e2e-vmware and their
// test-e2e-… targets): create-env of the test deployment, then delete-env.
// The CPI gives the VM its ISO, the agent reads its settings from it (the
// launcher hands it the ISO's settings file, as the stemcell's own source
// would read it), the persistent disk's hint is the one the stemcell's
// agent resolves, and delete-env takes the VM, its ISO, the disk and the
// template away, leaving the census as before.

// TestKVMCreateEnv: bosh.io's OpenStack KVM stemcell on KVM hosts: a
// QCOW2 template, the config drive, the virtio serial hint.
func TestKVMCreateEnv(t *testing.T) {
	runISOPhase(t, isoPhase{name: "KVM", cidPrefix: configDriveCIDPrefix, hypervisor: "KVM", format: "QCOW2",
		settings: configDriveSettings, hint: (*suite).assertVirtioHint})
}

// TestXenOpenStackCreateEnv: the same stemcell on XenServer hosts: a VHD
// template (the CPI converts the image), the config drive, a hint by path
// alone.
func TestXenOpenStackCreateEnv(t *testing.T) {
	runISOPhase(t, isoPhase{name: "XenServer/OpenStack", cidPrefix: configDriveCIDPrefix, hypervisor: "XenServer",
		format: "VHD", settings: configDriveSettings, hint: (*suite).assertXenPathHint})
}

// TestVMwareCreateEnv: bosh.io's vSphere stemcell on VMware hosts: an OVA
// template, env on the CD-ROM ISO, UEFI boot with the root and data disks
// on lsilogic SCSI, the SCSI unit as the hint.
func TestVMwareCreateEnv(t *testing.T) {
	runISOPhase(t, isoPhase{name: "VMware", cidPrefix: cdromCIDPrefix, hypervisor: "VMware", format: "OVA",
		settings: filepath.Join("cdrom", "env"), vm: assertVSphereBoot, hint: (*suite).assertSCSIUnitHint})
}

// configDriveSettings is where the launcher puts a config drive's user
// data, under the agent's base directory.
var configDriveSettings = filepath.Join("config-drive", "ec2", "latest", "user-data")

// isoPhase is what differs between the phases.
type isoPhase struct {
	name               string // for people
	cidPrefix          string // the stemcell CID's
	hypervisor, format string // the template's
	// settings is the file the agent reads its settings from, relative to
	// its base directory, as the launcher writes it from the ISO.
	settings string
	vm       func(t *testing.T, vm *cloudstack.VirtualMachine) // more checks of the VM, if any
	hint     func(s *suite, t *testing.T, d deployment)
}

func runISOPhase(t *testing.T, p isoPhase) {
	c := loadConfig(t)
	s := newSuite(t, c, c.Lifecycle)
	greeting := fmt.Sprintf("hello from the %s phase, %d", p.name, time.Now().UnixNano())
	before := s.census(t)
	var d deployment
	iso := ""
	ok := t.Run("create-env", func(t *testing.T) {
		s.run(t, "create-env", c.ComputeOffering, c.DiskSize, greeting)
		d = s.state(t)
		s.assertDeployed(t, d, c.ComputeOffering, greeting)
		if !strings.HasPrefix(d.Stemcell, p.cidPrefix) {
			t.Errorf("stemcell CID %s does not mark its VMs as needing their settings ISO (%s)", d.Stemcell, p.cidPrefix)
		}
		s.assertTemplate(t, d.Template, p.hypervisor, p.format)
		iso = s.assertSettingsISO(t, d.VM, p.settings)
		if p.vm != nil {
			p.vm(t, s.vm(t, d.VM))
		}
		p.hint(s, t, d)
	})
	// Whatever create-env did, delete-env takes it away.
	t.Run("delete-env", func(t *testing.T) {
		s.deleteEnv(t, d, before, c.ComputeOffering, c.DiskSize, greeting)
		if iso != "" && first(s.isos(t, iso)) != nil {
			t.Errorf("the settings ISO %s of VM %s is still there after delete-env", iso, d.VM)
		}
	})
	if !ok {
		t.Fatalf("create-env on %s failed (delete-env ran all the same)", p.name)
	}
}

// assertTemplate: the stemcell became a template of that hypervisor and
// format.
func (s *suite) assertTemplate(t *testing.T, id, hypervisor, format string) {
	t.Helper()
	tpl := s.template(t, id)
	if tpl == nil || tpl.Hypervisor != hypervisor || tpl.Format != format {
		t.Fatalf("the stemcell's template %s is not a %s %s template: %+v", id, hypervisor, format, tpl)
	}
}

// assertSettingsISO checks the VM boots with the CPI's ISO attached
// (private, not extractable) and that its agent was given the settings
// from that ISO (the file settings names under its base directory), not
// from user data. It returns the ISO's id.
func (s *suite) assertSettingsISO(t *testing.T, vmID, settings string) string {
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
	want := filepath.Join(s.agentBase(vmID), settings)
	if len(src) != 1 || src[0]["Type"] != "File" || src[0]["SettingsPath"] != want {
		t.Fatalf("the agent of VM %s does not read its settings from the ISO (%s): %+v", vmID, want, src)
	}
	var got struct {
		AgentID string `json:"agent_id"`
	}
	if !readJSONFile(t, want, &got) || got.AgentID == "" {
		t.Errorf("the ISO of VM %s carries no agent_id", vmID)
	}
	return iso.Id
}

// assertVSphereBoot: the VM is deployed as the vSphere stemcell boots,
// UEFI, with its root and data disks on one SCSI controller type (the
// agent's scsi resolver looks for the host of the root disk's *:0:0:0).
func assertVSphereBoot(t *testing.T, vm *cloudstack.VirtualMachine) {
	t.Helper()
	if vm.Boottype != "Uefi" || vm.Details["rootDiskController"] != "lsilogic" ||
		vm.Details["dataDiskController"] != "lsilogic" {
		t.Errorf("VM %s: boot type %q, details %v; want UEFI and both disk controllers lsilogic", vm.Id, vm.Boottype,
			vm.Details)
	}
}

// assertVirtioHint checks the hint attach_disk answered, as the agent
// recorded it (add_persistent_disk): /dev/disk/by-id/virtio-<serial>, the
// serial CloudStack gives the volume on KVM (its UUID without dashes, 20
// characters); bosh-agent's own virtio resolver follows it to the guest's
// device (assertResolves).
func (s *suite) assertVirtioHint(t *testing.T, d deployment) {
	t.Helper()
	hint, ok := s.resolvableHint(t, d)
	if !ok {
		return
	}
	serial := strings.ReplaceAll(d.Disk, "-", "")[:20]
	if want := "/dev/disk/by-id/virtio-" + serial; hint.Path != want {
		t.Fatalf("the agent of VM %s has hint %+v for disk %s, want path %s", d.VM, hint, d.Disk, want)
	}
	s.assertResolves(t, d, "KVM", hint)
}

// assertXenPathHint: on XenServer the OpenStack stemcell's VM gets the
// guest's device path alone (no id: the agent's virtio resolver would wait
// for a by-id link no Xen device has), which bosh-agent's own resolver
// takes as the device (assertResolves).
func (s *suite) assertXenPathHint(t *testing.T, d deployment) {
	t.Helper()
	hint, ok := s.resolvableHint(t, d)
	if !ok {
		return
	}
	if hint.DeviceID != "" || hint.VolumeID != "" || !strings.HasPrefix(hint.Path, "/dev/xvd") {
		t.Fatalf("the agent of VM %s has hint %+v for disk %s, want a /dev/xvdX path alone", d.VM, hint, d.Disk)
	}
	s.assertResolves(t, d, "XenServer", hint)
}

// assertSCSIUnitHint: on VMware the hint is the disk's SCSI unit, the one
// listVolumes' chaininfo reports (diskDeviceBusName scsi0:U) and the
// simulator's guest has the disk at; the agent records a plain string hint
// as both path and volume id (settings.populatePersistentDiskSettings).
// bosh-agent's scsi resolver on such hints is run in the lifecycle suite
// (spec's TestVSphereStemcellOnVMwareLifecycle), over the /sys it reads.
func (s *suite) assertSCSIUnitHint(t *testing.T, d deployment) {
	t.Helper()
	if s.agentBase(d.VM) == "" {
		t.Log("E2E_AGENT_DIR is unset: the agent's disk hint is not checked")
		return
	}
	hint := s.diskHint(t, d)
	var chain struct {
		Bus string `json:"diskDeviceBusName"`
	}
	vol := s.volume(t, d.Disk)
	if vol == nil || json.Unmarshal([]byte(vol.Chaininfo), &chain) != nil {
		t.Fatalf("volume %s has no chaininfo: %+v", d.Disk, vol)
	}
	unit, ok := strings.CutPrefix(chain.Bus, "scsi0:")
	if !ok || hint.VolumeID != unit || hint.Path != unit {
		t.Fatalf("the agent of VM %s has hint %+v for disk %s, want its SCSI unit (chaininfo %s)", d.VM, hint, d.Disk,
			vol.Chaininfo)
	}
	var view guestDisks
	if err := json.Unmarshal(s.simMetadata(t, d.VM, "sim/disks"), &view); err != nil || view.Hypervisor != "VMware" {
		t.Fatalf("the guest's disks of VM %s: %+v, %v", d.VM, view, err)
	}
	for _, g := range view.Disks {
		if g.VolumeID == d.Disk && g.Bus != chain.Bus {
			t.Errorf("the guest has disk %s on %s, chaininfo says %s", d.Disk, g.Bus, chain.Bus)
		}
	}
}

// resolvableHint is the hint the agent recorded for the deployment's disk,
// when the agent's directory and tools/devicepaths are there to resolve it.
func (s *suite) resolvableHint(t *testing.T, d deployment) (agentDiskHint, bool) {
	t.Helper()
	if s.agentBase(d.VM) == "" || s.DevicePaths == "" {
		t.Log("E2E_AGENT_DIR or E2E_DEVICEPATHS is unset: the agent's disk hint is not resolved")
		return agentDiskHint{}, false
	}
	return s.diskHint(t, d), true
}

// assertResolves lays out the guest's /dev from the simulator's view of
// the VM's disks and checks bosh-agent's own virtio resolver
// (tools/devicepaths) follows the hint to the guest's device of the disk.
func (s *suite) assertResolves(t *testing.T, d deployment, hypervisor string, hint agentDiskHint) {
	t.Helper()
	var view guestDisks
	if err := json.Unmarshal(s.simMetadata(t, d.VM, "sim/disks"), &view); err != nil || view.Hypervisor != hypervisor {
		t.Fatalf("the guest's disks of VM %s: %+v, %v; want a %s guest", d.VM, view, err, hypervisor)
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
// (bosh-agent's settings.DiskSettings: ID is the disk CID, DeviceID the
// hint's id).
type agentDiskHint struct {
	ID, DeviceID, VolumeID, Path string
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
		Bus      string   `json:"bus"`
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
