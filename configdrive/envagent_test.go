package configdrive_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/configdrive"
)

// cdromTool builds tools/cdromsettings: bosh-agent v2.769.0's CDROM
// settings source and its Linux CD-ROM code, configured as bosh.io's
// vSphere stemcell's agent.json configures them.
func cdromTool(t *testing.T) string { return buildTool(t, "cdromsettings") }

type cdromRead struct {
	Settings map[string]any `json:"settings"`
	Commands []string       `json:"commands"`
}

func readCDROM(t *testing.T, tool, iso string) (cdromRead, string, bool) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(tool, "-iso", iso)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	var read cdromRead
	if err == nil {
		if jerr := json.Unmarshal(stdout.Bytes(), &read); jerr != nil {
			t.Fatal(jerr)
		}
	}
	return read, stderr.String(), err == nil
}

// The agent's own CD-ROM code reads env from the CPI's ISO: it settles
// udev, mounts /dev/sr0 with no type or label, reads env, unmounts and
// ejects. A config drive, which has no env, fails that read.
func TestTheRealAgentReadsTheCDROM(t *testing.T) {
	tool := cdromTool(t)
	settings := []byte(`{"agent_id":"agent-1","mbus":"nats://u:` + secret + `@10.0.0.6:4222",` +
		`"disks":{"system":"0","ephemeral":"1","persistent":{}},"env":{"bosh":{"group":"g"}}}`)
	img, err := configdrive.BuildEnv(t.TempDir(), settings)
	if err != nil {
		t.Fatal(err)
	}
	read, stderr, ok := readCDROM(t, tool, img.Path())
	if !ok {
		t.Fatalf("the agent could not read the CD-ROM: %s", stderr)
	}
	var want map[string]any
	_ = json.Unmarshal(settings, &want)
	disks, _ := read.Settings["disks"].(map[string]any)
	if read.Settings["agent_id"] != "agent-1" || read.Settings["mbus"] != want["mbus"] ||
		!reflect.DeepEqual(disks["ephemeral"], "1") || disks["system"] != "0" {
		t.Errorf("the agent read %v", read.Settings)
	}
	wantCommands := []string{"mount /dev/sr0 /var/vcap/bosh/settings", "umount /dev/sr0", "eject -v /dev/sr0"}
	if !reflect.DeepEqual(read.Commands, wantCommands) {
		t.Errorf("the agent ran %q, want %q", read.Commands, wantCommands)
	}

	drive, err := configdrive.Build(t.TempDir(), settings, configdrive.MetaData{InstanceID: "vm-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, stderr, ok := readCDROM(t, tool, drive.Path()); ok || !strings.Contains(stderr, "Reading from CDROM") {
		t.Errorf("the agent read a config drive as the CD-ROM: %v %s", ok, stderr)
	}
}

// The CD-ROM has no volume label, as genisoimage writes it without -V
// (the vSphere CPI's agent_env.rb): blkid finds none.
func TestTheCDROMHasNoLabel(t *testing.T) {
	img, err := configdrive.BuildEnv(t.TempDir(), []byte(`{"agent_id":"a"}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("blkid", "-p", "-o", "export", img.Path()).Output()
	if err != nil {
		t.Fatalf("blkid: %v", err)
	}
	if !strings.Contains(string(out), "TYPE=iso9660") || strings.Contains(string(out), "LABEL=") {
		t.Fatalf("blkid says %s", out)
	}
}
