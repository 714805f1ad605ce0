package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/configdrive"
)

// isoServer answers /<vm>/sim/iso with img for vm, 404 for any other VM,
// as the simulator's metadata service does.
func isoServer(t *testing.T, vm string, img []byte) *launcher {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/"+vm+"/sim/iso" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(img)
	}))
	t.Cleanup(srv.Close)
	return &launcher{metadata: srv.URL, http: srv.Client()}
}

func buildDrive(t *testing.T, settings []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := configdrive.Write(&b, t.TempDir(), settings, configdrive.MetaData{InstanceID: "vm-1"}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAConfigDriveVMsAgentReadsTheDrivesSettings: a VM with the CPI's
// CONFIG-2 ISO gets a File source holding the drive's user data, private
// to the launcher's user; a VM without one keeps the HTTP source.
func TestAConfigDriveVMsAgentReadsTheDrivesSettings(t *testing.T) {
	settings := []byte(`{"agent_id":"agent-1","mbus":"https://mbus:secret@0.0.0.0:6868"}`)
	l := isoServer(t, "vm-1", buildDrive(t, settings))
	base := t.TempDir()
	sources, resolution, err := l.settingsSources("vm-1", base)
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) != 1 || sources[0]["Type"] != "File" || resolution != "virtio" {
		t.Fatalf("sources %v, resolution %q, want one File source and the OpenStack stemcell's virtio", sources, resolution)
	}
	path, _ := sources[0]["SettingsPath"].(string)
	if want := filepath.Join(base, "config-drive", "ec2", "latest", "user-data"); path != want {
		t.Errorf("SettingsPath %q, want %q", path, want)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, settings) {
		t.Errorf("the settings file holds %q (%v), want the drive's user data %q", got, err, settings)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the settings file's mode: %v %v, want 0600 (it holds credentials)", st.Mode(), err)
	}
	var md map[string]any
	b, _ := os.ReadFile(filepath.Join(base, "config-drive", "ec2", "latest", "meta-data.json"))
	if err := json.Unmarshal(b, &md); err != nil || md["instance-id"] != "vm-1" {
		t.Errorf("meta-data.json %s (%v)", b, err)
	}

	sources, _, err = l.settingsSources("vm-2", t.TempDir())
	if err != nil || len(sources) != 1 || sources[0]["Type"] != "HTTP" || sources[0]["URI"] != l.metadata+"/vm-2" {
		t.Errorf("a VM without a drive: sources %v (%v), want the HTTP source", sources, err)
	}
}

// TestABrokenDriveStartsNoAgent: bytes that are no ISO are an error that
// names the VM, so the launcher tries again on its next tick.
func TestABrokenDriveStartsNoAgent(t *testing.T) {
	l := isoServer(t, "vm-1", bytes.Repeat([]byte("x"), 64<<10))
	_, _, err := l.settingsSources("vm-1", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "vm-1") {
		t.Fatalf("err = %v, want an error naming VM vm-1", err)
	}
}

// TestACDROMVMsAgentReadsEnv: a VM with the CPI's env CD-ROM (no label, as
// for bosh.io's vSphere stemcell) gets a File source holding env, private
// to the launcher's user, and the vSphere stemcell's scsi resolution.
func TestACDROMVMsAgentReadsEnv(t *testing.T) {
	settings := []byte(`{"agent_id":"agent-1","mbus":"https://mbus:secret@0.0.0.0:6868"}`)
	img, err := configdrive.BuildEnv(t.TempDir(), settings)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = img.Close() })
	var b bytes.Buffer
	if _, err := img.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	sources, resolution, err := isoServer(t, "vm-1", b.Bytes()).settingsSources("vm-1", base)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(base, "cdrom", configdrive.EnvFile)
	if len(sources) != 1 || sources[0]["Type"] != "File" || sources[0]["SettingsPath"] != want || resolution != "scsi" {
		t.Fatalf("sources %v, resolution %q; want one File source at %s and scsi", sources, resolution, want)
	}
	got, err := os.ReadFile(want)
	if err != nil || !bytes.Equal(got, settings) {
		t.Errorf("the settings file holds %q (%v), want env's %q", got, err, settings)
	}
	if st, err := os.Stat(want); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the settings file's mode: %v %v, want 0600 (it holds credentials)", st.Mode(), err)
	}
}
