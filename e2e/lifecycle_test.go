//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// TestLifecycle walks one environment through its life with the real bosh
// CLI: create-env, an update to another VM size, a persistent disk size
// change, the director's own path to the CPI (the rendered bin/cpi on the
// VM), and delete-env. Each step builds on the one before, so the first to
// fail ends the walk.
func TestLifecycle(t *testing.T) {
	c := loadConfig(t)
	s := newSuite(t, c, c.Lifecycle)
	greeting := fmt.Sprintf("hello from the e2e suite, %d", time.Now().UnixNano())
	var created, updated, resized deployment
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"create-env", func(t *testing.T) {
			s.run(t, "create-env", c.ComputeOffering, c.DiskSize, greeting)
			created = s.state(t)
			s.assertDeployed(t, created, c.ComputeOffering, greeting)
		}},
		{"update VM size", func(t *testing.T) {
			s.run(t, "create-env", c.ComputeOfferingUpdate, c.DiskSize, greeting)
			updated = s.state(t)
			if updated.VM == created.VM {
				t.Fatalf("the VM was not recreated for compute offering %q: still %s", c.ComputeOfferingUpdate, updated.VM)
			}
			if updated.Disk != created.Disk {
				t.Fatalf("the persistent disk changed from %s to %s: it should have been re-attached", created.Disk, updated.Disk)
			}
			if !s.vmGone(t, created.VM) {
				t.Errorf("the old VM %s is still there", created.VM)
			}
			s.assertDeployed(t, updated, c.ComputeOfferingUpdate, greeting)
		}},
		{"persistent disk size change", func(t *testing.T) {
			s.run(t, "create-env", c.ComputeOfferingUpdate, c.DiskSizeUpdate, greeting)
			resized = s.state(t)
			if resized.Disk == updated.Disk {
				t.Fatalf("no new disk for size %d MiB: still %s", c.DiskSizeUpdate, resized.Disk)
			}
			if resized.DiskSize != c.DiskSizeUpdate {
				t.Errorf("bosh recorded a %d MiB disk, want %d", resized.DiskSize, c.DiskSizeUpdate)
			}
			if v := s.volume(t, updated.Disk); v != nil {
				t.Errorf("the old disk %s is still there (%s)", updated.Disk, v.State)
			}
			s.assertDeployed(t, resized, c.ComputeOfferingUpdate, greeting)
			s.assertMigrated(t, resized.VM, updated.Disk, resized.Disk)
		}},
		{directorPathStep, func(t *testing.T) { s.assertDirectorPath(t, resized.VM) }},
		{"delete-env", func(t *testing.T) {
			s.run(t, "delete-env", c.ComputeOfferingUpdate, c.DiskSizeUpdate, greeting)
			for _, d := range []deployment{created, updated, resized} {
				s.assertNothingLeft(t, d)
			}
		}},
	}
	for _, step := range steps {
		if step.name == directorPathStep && c.AgentDir == "" {
			// Against a real CloudStack the VM's files are not here.
			t.Logf("%s is not part of this run: E2E_AGENT_DIR is unset, so the VM's rendered bin/cpi is out of reach", step.name)
			continue
		}
		if !t.Run(step.name, step.run) {
			return
		}
	}
}

// assertDeployed checks a deployment through the API and the agent: the
// stemcell's template, the VM running it with the static IP and offering,
// the agent answering, the disk attached and mounted, the job rendered.
func (s *suite) assertDeployed(t *testing.T, d deployment, offering, greeting string) {
	t.Helper()
	if d.VM == "" || d.Disk == "" || d.Stemcell == "" {
		t.Fatalf("bosh's state names no VM, disk or stemcell: %+v", d)
	}
	tpl := s.template(t, d.Template)
	if tpl == nil || !tpl.Isready {
		t.Fatalf("the stemcell's template %s is not ready: %+v", d.Template, tpl)
	}
	vm := s.vm(t, d.VM)
	if vm == nil || vm.State != "Running" {
		t.Fatalf("VM %s is not Running: %+v", d.VM, vm)
	}
	if vm.Templateid != d.Template {
		t.Errorf("VM %s runs template %s, not the stemcell's %s", d.VM, vm.Templateid, d.Template)
	}
	if vm.Serviceofferingname != offering {
		t.Errorf("VM %s has compute offering %q, want %q", d.VM, vm.Serviceofferingname, offering)
	}
	if !hasNIC(vm, s.Network, s.StaticIP) {
		t.Errorf("VM %s has no NIC with %s on network %s: %+v", d.VM, s.StaticIP, s.Network, vm.Nic)
	}
	// create-env's set_vm_metadata: the tags delete-env must take away.
	if len(s.tags(t, d.VM)) == 0 {
		t.Errorf("VM %s has no tags: set_vm_metadata left none", d.VM)
	}
	vol := s.volume(t, d.Disk)
	if vol == nil || vol.Virtualmachineid != d.VM || vol.Type != "DATADISK" {
		t.Fatalf("disk %s is not a data disk attached to VM %s: %+v", d.Disk, d.VM, vol)
	}
	if vol.Size < int64(d.DiskSize)<<20 {
		t.Errorf("disk %s has %d bytes, less than the %d MiB asked for", d.Disk, vol.Size, d.DiskSize)
	}
	if pong, err := s.agentCall(t, "ping"); err != nil || string(pong) != `"pong"` {
		t.Fatalf("the agent at %s does not answer ping: %s %v", s.StaticIP, pong, err)
	}
	if s.agentBase(d.VM) == "" {
		t.Log("E2E_AGENT_DIR is unset: the agent's mounts and rendered job are not read")
		return
	}
	// The store, or after a disk change the migration target: the dummy
	// platform records a migration without moving its mounts.
	eventually(t, 10*time.Second, func() string {
		for _, m := range s.mounts(t, d.VM) {
			if m.DiskCid == d.Disk && (strings.HasSuffix(m.MountDir, "/store") ||
				strings.HasSuffix(m.MountDir, "/store_migration_target")) {
				return ""
			}
		}
		return fmt.Sprintf("the agent of VM %s has not mounted disk %s: %+v", d.VM, d.Disk, s.mounts(t, d.VM))
	})
	got, err := os.ReadFile(filepath.Join(s.agentBase(d.VM), "jobs", "e2e", "config", "greeting.txt"))
	if err != nil || strings.TrimSpace(string(got)) != greeting {
		t.Errorf("the e2e job's rendered greeting is %q (%v), want %q", got, err, greeting)
	}
}

func hasNIC(vm *cloudstack.VirtualMachine, network, ip string) bool {
	for _, n := range vm.Nic {
		if n.Ipaddress == ip && n.Networkname == network {
			return true
		}
	}
	return false
}

// assertMigrated checks that the agent moved the store from the old disk
// to the new one (the dummy platform records it in disk_migrations.json).
func (s *suite) assertMigrated(t *testing.T, vmID, from, to string) {
	t.Helper()
	if s.agentBase(vmID) == "" {
		t.Log("E2E_AGENT_DIR is unset: the agent's migration is not read")
		return
	}
	var migrations []struct{ FromDiskCid, ToDiskCid string }
	readJSONFile(t, filepath.Join(s.agentBase(vmID), "bosh", "disk_migrations.json"), &migrations)
	found := false
	for _, m := range migrations {
		found = found || (m.FromDiskCid == from && m.ToDiskCid == to)
	}
	if !found {
		t.Errorf("the agent of VM %s did not migrate disk %s to %s: %+v", vmID, from, to, migrations)
	}
}

// directorPathStep needs the VM's files beside the suite (E2E_AGENT_DIR).
const directorPathStep = "the director's path"

// assertDirectorPath runs the CPI as the director does: the cloudstack_cpi
// job's rendered bin/cpi, installed on the VM by the agent, with a stripped
// environment and one request on stdin.
func (s *suite) assertDirectorPath(t *testing.T, vmID string) {
	t.Helper()
	base := s.agentBase(vmID)
	cpi := filepath.Join(base, "jobs", "cloudstack_cpi", "bin", "cpi")
	call := func(method string, args ...any) json.RawMessage {
		if args == nil {
			args = []any{}
		}
		req, _ := json.Marshal(map[string]any{"method": method, "arguments": args,
			"context": map[string]any{"director_uuid": "e2e-director", "request_id": "e2e-" + method}, "api_version": 2})
		cmd := exec.Command(cpi)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "BOSH_PACKAGES_DIR=" + filepath.Join(base, "packages"),
			"BOSH_JOBS_DIR=" + filepath.Join(base, "jobs")}
		cmd.Stdin = strings.NewReader(string(req))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", cpi, method, err, out)
		}
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(out, &resp); err != nil || string(resp.Error) != "null" {
			t.Fatalf("%s %s answered %s (%v)", cpi, method, out, err)
		}
		return resp.Result
	}
	var info struct {
		APIVersion      int      `json:"api_version"`
		StemcellFormats []string `json:"stemcell_formats"`
	}
	if err := json.Unmarshal(call("info"), &info); err != nil || info.APIVersion != 2 ||
		!contains(info.StemcellFormats, "cloudstack-vhdx") {
		t.Errorf("info through the VM's bin/cpi: %+v (%v)", info, err)
	}
	if got := string(call("has_vm", vmID)); got != "true" {
		t.Errorf("has_vm %s through the VM's bin/cpi = %s, want true", vmID, got)
	}
	if got := string(call("has_vm", "00000000-0000-0000-0000-000000000000")); got != "false" {
		t.Errorf("has_vm of an unknown VM through the VM's bin/cpi = %s, want false", got)
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// assertNothingLeft checks that delete-env left no VM, volume, template,
// public IP or tag of a deployment.
func (s *suite) assertNothingLeft(t *testing.T, d deployment) {
	t.Helper()
	if !s.vmGone(t, d.VM) {
		t.Errorf("VM %s is still there after delete-env", d.VM)
	}
	if v := s.volume(t, d.Disk); v != nil {
		t.Errorf("volume %s is still there after delete-env (%s)", d.Disk, v.State)
	}
	if vols := s.volumesOf(t, d.VM); len(vols) != 0 {
		t.Errorf("VM %s still has volumes after delete-env: %s", d.VM, describe(vols))
	}
	if tpl := s.template(t, d.Template); tpl != nil {
		t.Errorf("template %s is still there after delete-env", d.Template)
	}
	if ips := s.publicIPs(t, d.VM); len(ips) > 0 {
		t.Errorf("public IPs of VM %s are still there after delete-env: %+v", d.VM, ips)
	}
	for _, id := range []string{d.VM, d.Disk, d.Template} {
		if tags := s.tags(t, id); len(tags) > 0 {
			t.Errorf("tags of %s are still there after delete-env: %+v", id, tags)
		}
	}
}
