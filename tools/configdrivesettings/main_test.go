package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	boshinf "github.com/cloudfoundry/bosh-agent/v2/infrastructure"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

const (
	publicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA bosh@director"
	settings  = `{"agent_id":"agent-7d1c","mbus":"nats://nats:secret@10.0.0.6:4222",` +
		`"networks":{"default":{"type":"manual","ip":"10.0.0.10","netmask":"255.255.255.0","gateway":"10.0.0.1","mac":"02:00:5e:10:00:0a","default":["dns","gateway"]}},` +
		`"disks":{"system":"/dev/vda","ephemeral":"/dev/vdb","persistent":{"vol-1":{"path":"/dev/disk/by-id/virtio-0b7f3c2a1d4e4f6a8b9c"}}}}`
	metaData = `{"instance-id":"vm-1","public-keys":{"0":{"openssh-key":"` + publicKey + `"}}}`
)

var ec2Files = map[string]string{"ec2/latest/user-data": settings, "ec2/latest/meta-data.json": metaData}

// makeISO writes an ISO 9660 image with Rock Ridge names, as genisoimage
// -R or the CPI's configdrive package would.
func makeISO(t *testing.T, label string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	isoPath := filepath.Join(dir, "drive.iso")
	f, err := os.Create(isoPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	iso, err := iso9660.Create(file.New(f, false), 0, 0, 0, ws)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := iso.Mkdir("/" + path.Dir(name)); err != nil {
			t.Fatal(err)
		}
		w, err := iso.OpenFile("/"+name, os.O_CREATE|os.O_RDWR)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := iso.Finalize(iso9660.FinalizeOptions{RockRidge: true, VolumeIdentifier: label}); err != nil {
		t.Fatal(err)
	}
	return isoPath
}

func read(t *testing.T, isoPath, sources string) (Result, error) {
	t.Helper()
	var log bytes.Buffer
	res, err := Read(isoPath, sources, boshlog.NewWriterLogger(boshlog.LevelWarn, &log))
	t.Logf("agent log:\n%s", log.String())
	return res, err
}

var configDriveSource = boshinf.ConfigDriveSourceOptions{
	DiskPaths:    []string{"/dev/disk/by-label/CONFIG-2", "/dev/disk/by-label/config-2"},
	MetaDataPath: "ec2/latest/meta-data.json",
	UserDataPath: "ec2/latest/user-data",
}

func TestStemcellOptions(t *testing.T) {
	opts, err := StemcellOptions(SourcesStemcell)
	if err != nil {
		t.Fatal(err)
	}
	want := boshinf.SourceOptionsSlice{
		boshinf.FileSourceOptions{SettingsPath: "/var/vcap/bosh/agent-bootstrap-env.json"},
		configDriveSource,
		boshinf.HTTPSourceOptions{URI: "http://169.254.169.254", UserDataPath: "/latest/user-data",
			InstanceIDPath: "/latest/meta-data/instance-id", SSHKeysPath: "/latest/meta-data/public-keys/0/openssh-key"},
	}
	if !reflect.DeepEqual(opts.Sources, want) {
		t.Errorf("sources %#v, want %#v", opts.Sources, want)
	}
	if opts, err = StemcellOptions(SourcesConfigDrive); err != nil || !reflect.DeepEqual(opts.Sources, boshinf.SourceOptionsSlice{configDriveSource}) {
		t.Errorf("config-drive sources %#v (%v)", opts.Sources, err)
	}
	if _, err := StemcellOptions("http"); err == nil {
		t.Error("no error for unknown sources")
	}
}

func checkSettings(t *testing.T, res Result) {
	t.Helper()
	s := res.Settings
	if s.AgentID != "agent-7d1c" || s.Networks["default"].IP != "10.0.0.10" || s.Networks["default"].Mac != "02:00:5e:10:00:0a" {
		t.Errorf("settings %+v", s)
	}
	if got := s.Disks.Persistent["vol-1"]; !reflect.DeepEqual(got, map[string]any{"path": "/dev/disk/by-id/virtio-0b7f3c2a1d4e4f6a8b9c"}) {
		t.Errorf("persistent disk hint %#v", got)
	}
}

// On the stemcell the File source comes first and answers every public
// key question with "no key": only the settings are read from the drive.
func TestTheStemcellsAgentReadsTheSettings(t *testing.T) {
	res, err := read(t, makeISO(t, "CONFIG-2", ec2Files), SourcesStemcell)
	if err != nil {
		t.Fatal(err)
	}
	checkSettings(t, res)
	if res.PublicKey != "" {
		t.Errorf("public key %q: the File source should have answered first", res.PublicKey)
	}
	if want := []string{"/dev/disk/by-label/CONFIG-2"}; !reflect.DeepEqual(res.Mounts, want) {
		t.Errorf("mounts %v, want %v", res.Mounts, want)
	}
}

// Hence a drive without meta-data.json boots the stemcell's agent.
func TestTheStemcellsAgentNeverReadsMetaData(t *testing.T) {
	res, err := read(t, makeISO(t, "CONFIG-2", map[string]string{"ec2/latest/user-data": settings}), SourcesStemcell)
	if err != nil {
		t.Fatal(err)
	}
	checkSettings(t, res)
}

func TestTheConfigDriveSourceReadsKeyThenSettings(t *testing.T) {
	res, err := read(t, makeISO(t, "CONFIG-2", ec2Files), SourcesConfigDrive)
	if err != nil {
		t.Fatal(err)
	}
	checkSettings(t, res)
	if res.PublicKey != publicKey {
		t.Errorf("public key %q", res.PublicKey)
	}
	if want := []string{"/dev/disk/by-label/CONFIG-2", "/dev/disk/by-label/CONFIG-2"}; !reflect.DeepEqual(res.Mounts, want) {
		t.Errorf("mounts %v, want %v", res.Mounts, want)
	}
}

func TestALowerCaseLabelIsTheSecondDiskPath(t *testing.T) {
	res, err := read(t, makeISO(t, "config-2", ec2Files), SourcesStemcell)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/dev/disk/by-label/config-2"}; !reflect.DeepEqual(res.Mounts, want) {
		t.Errorf("mounts %v, want %v", res.Mounts, want)
	}
}

func TestNoPublicKeysIsNoKey(t *testing.T) {
	res, err := read(t, makeISO(t, "CONFIG-2", map[string]string{
		"ec2/latest/user-data": settings, "ec2/latest/meta-data.json": `{"instance-id":"vm-1"}`}), SourcesConfigDrive)
	if err != nil {
		t.Fatal(err)
	}
	if res.PublicKey != "" || res.Settings.AgentID != "agent-7d1c" {
		t.Errorf("key %q, agent id %q", res.PublicKey, res.Settings.AgentID)
	}
}

// The drives the agent refuses, with its own error text. With all the
// stemcell's sources the error is the last source's, HTTP's.
func TestTheAgentRefuses(t *testing.T) {
	const allFailed = "Fetching settings: Getting settings from all sources: Getting user data: Setting up initial DHCP network"
	cases := []struct {
		name, label, sources string
		files                map[string]string
		says                 string
	}{
		{"another label", "cidata", SourcesStemcell, ec2Files, allFailed},
		{"CloudStack's own config drive", "config-2", SourcesStemcell, map[string]string{
			"openstack/latest/user_data": settings, "openstack/latest/meta_data.json": metaData}, allFailed},
		{"settings that are not JSON", "CONFIG-2", SourcesStemcell,
			map[string]string{"ec2/latest/user-data": "agent_id: a", "ec2/latest/meta-data.json": metaData}, allFailed},
		{"ConfigDrive alone: no meta-data.json", "CONFIG-2", SourcesConfigDrive, map[string]string{"ec2/latest/user-data": settings},
			"Setting up ssh: Getting iaas public key: Getting public SSH key for 'vcap': Loading file 'ec2/latest/meta-data.json' from config drive"},
		{"ConfigDrive alone: CloudStack's own config drive", "config-2", SourcesConfigDrive, map[string]string{
			"openstack/latest/user_data": settings, "openstack/latest/meta_data.json": metaData},
			"Loading file 'ec2/latest/meta-data.json' from config drive: Reading from disk file"},
		{"ConfigDrive alone: another label", "cidata", SourcesConfigDrive, ec2Files,
			"disk path '/dev/disk/by-label/config-2' does not exist"},
		{"ConfigDrive alone: meta-data that is not JSON", "CONFIG-2", SourcesConfigDrive,
			map[string]string{"ec2/latest/user-data": settings, "ec2/latest/meta-data.json": "instance-id: vm-1"},
			"Parsing config drive metadata from 'ec2/latest/meta-data.json'"},
		{"ConfigDrive alone: settings that are not JSON", "CONFIG-2", SourcesConfigDrive,
			map[string]string{"ec2/latest/user-data": "agent_id: a", "ec2/latest/meta-data.json": metaData},
			"Fetching settings: Getting settings from all sources: Parsing config drive settings from 'ec2/latest/user-data'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := read(t, makeISO(t, c.label, c.files), c.sources)
			if err == nil {
				t.Fatal("the agent read settings")
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Errorf("error %q does not say %q", err, c.says)
			}
		})
	}
}

func TestUdevEncode(t *testing.T) {
	for in, want := range map[string]string{"CONFIG-2": "CONFIG-2", "my disk/1": `my\x20disk\x2f1`} {
		if got := udevEncode(in); got != want {
			t.Errorf("udevEncode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCommandLine(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-iso", makeISO(t, "CONFIG-2", ec2Files)}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res struct {
		Settings struct {
			AgentID string `json:"agent_id"`
		} `json:"settings"`
		PublicKey string `json:"public_key"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Settings.AgentID != "agent-7d1c" || res.PublicKey != "" {
		t.Errorf("output %s (%v)", out.String(), err)
	}
	errOut.Reset()
	if code := run([]string{"-iso", makeISO(t, "cidata", ec2Files), "-sources", "config-drive"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "does not exist") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
	for _, args := range [][]string{nil, {"-iso", "x.iso", "-sources", "http"}, {"-iso", "x.iso", "extra"}} {
		if code := run(args, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
