package configdrive_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"

	"github.com/bosh-cloudstack/cloudstack-cpi/configdrive"
)

const (
	secret     = "s3cr3t-nats-password"
	instanceID = "vm-6f1c2b8e-3a4d-4e5f-9a0b-1c2d3e4f5a6b"
	publicKey  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA bosh@director"
	diskCID    = "0b7f3c2a-1d4e-4f6a-8b9c-0d1e2f3a4b5c"
	diskSerial = "0b7f3c2a1d4e4f6a8b9c"
)

// settingsDoc is agent settings as a CPI API v2 create_vm hands them to a
// KVM VM: typical size, with credentials and a CA certificate.
func settingsDoc(t *testing.T) []byte {
	t.Helper()
	doc := map[string]any{
		"agent_id":  "agent-7d1c",
		"vm":        map[string]any{"name": instanceID},
		"mbus":      "nats://nats:" + secret + "@10.0.0.6:4222",
		"ntp":       []string{"0.pool.ntp.org"},
		"blobstore": map[string]any{"provider": "dav", "options": map[string]any{"endpoint": "http://10.0.0.6:25250", "user": "agent", "password": secret}},
		"networks": map[string]any{"default": map[string]any{
			"type": "manual", "ip": "10.0.0.10", "netmask": "255.255.255.0", "gateway": "10.0.0.1",
			"dns": []string{"10.0.0.2"}, "default": []string{"dns", "gateway"}, "mac": "02:00:5e:10:00:0a",
		}},
		"disks": map[string]any{"system": "/dev/vda", "ephemeral": "/dev/vdb", "persistent": map[string]any{
			diskCID: map[string]any{"path": "/dev/disk/by-id/virtio-" + diskSerial, "id": diskSerial}}},
		"env": map[string]any{"bosh": map[string]any{
			"mbus": map[string]any{"cert": map[string]any{"ca": strings.Repeat("MIIDXTCCAkWgAwIBAgIJ", 60)}},
		}},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// build builds an image that the test's end removes.
func build(t *testing.T, settings []byte, md configdrive.MetaData) *configdrive.Image {
	t.Helper()
	img, err := configdrive.Build(t.TempDir(), settings, md)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := img.Close(); err != nil {
			t.Error(err)
		}
	})
	return img
}

// openISO reads an image back with go-diskfs, the library the agent tool
// reads it with too.
func openISO(t *testing.T, path string) *iso9660.FileSystem {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	iso, err := iso9660.Read(file.New(f, true), st.Size(), 0, 0)
	if err != nil {
		t.Fatalf("reading the ISO back: %v", err)
	}
	return iso
}

func readFile(t *testing.T, iso *iso9660.FileSystem, name string) []byte {
	t.Helper()
	f, err := iso.OpenFile("/"+name, os.O_RDONLY)
	if err != nil {
		t.Fatalf("opening %s on the ISO: %v", name, err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("reading %s on the ISO: %v", name, err)
	}
	return b
}

func names(t *testing.T, iso *iso9660.FileSystem, dir string) []string {
	t.Helper()
	entries, err := iso.ReadDir(dir)
	if err != nil {
		t.Fatalf("listing %s on the ISO: %v", dir, err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// label is the volume identifier as blkid (and so udev's by-label link)
// reports it: the padding trimmed.
func label(iso *iso9660.FileSystem) string { return strings.TrimRight(iso.Label(), "\x00 ") }

// emptyDir fails unless dir holds nothing: no image, no staged settings.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("%d entries left behind in the temporary directory, first %s", len(entries), entries[0].Name())
	}
}

func TestImageHoldsTheSettingsUnderRockRidgeNames(t *testing.T) {
	settings := settingsDoc(t)
	img := build(t, settings, configdrive.MetaData{InstanceID: instanceID, PublicKey: publicKey})
	t.Logf("settings %d bytes -> ISO %d bytes", len(settings), img.Size())

	iso := openISO(t, img.Path())
	if got := label(iso); got != "CONFIG-2" {
		t.Errorf("label %q, want CONFIG-2", got)
	}
	if got := names(t, iso, "/"); !reflect.DeepEqual(got, []string{"ec2"}) {
		t.Errorf("root holds %v", got)
	}
	if got := names(t, iso, "/ec2"); !reflect.DeepEqual(got, []string{"latest"}) {
		t.Errorf("ec2 holds %v", got)
	}
	if got := names(t, iso, "/ec2/latest"); !reflect.DeepEqual(got, []string{"meta-data.json", "user-data"}) {
		t.Errorf("ec2/latest holds %v, want the Rock Ridge names meta-data.json and user-data", got)
	}
	if got := readFile(t, iso, configdrive.UserDataPath); !bytes.Equal(got, settings) {
		t.Errorf("user-data is not the settings as given (%d bytes, want %d)", len(got), len(settings))
	}
	var meta map[string]any
	if err := json.Unmarshal(readFile(t, iso, configdrive.MetaDataPath), &meta); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"instance-id": instanceID,
		"public-keys": map[string]any{"0": map[string]any{"openssh-key": publicKey}}}
	if !reflect.DeepEqual(meta, want) {
		t.Errorf("meta-data.json = %v, want %v", meta, want)
	}
}

// The ISO must pass the SSVM's format check (ImageStoreUtil.checkTemplateFormat
// wants `file` to say "ISO 9660", i.e. the CD001 descriptor at sector 16),
// and it takes whole 2 KiB sectors of secondary storage.
func TestImageIsAnISO9660FileOfWholeSectors(t *testing.T) {
	var buf bytes.Buffer
	n, err := configdrive.Write(&buf, t.TempDir(), settingsDoc(t), configdrive.MetaData{InstanceID: instanceID})
	if err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if n != int64(len(b)) {
		t.Errorf("Write reported %d bytes, wrote %d", n, len(b))
	}
	if len(b) < 0x8006 || string(b[0x8001:0x8006]) != "CD001" {
		t.Fatal("no ISO 9660 primary volume descriptor at sector 16")
	}
	if len(b)%2048 != 0 {
		t.Errorf("size %d is not whole 2048-byte sectors", len(b))
	}
	// A typical VM's drive: the fixed layout (system area, descriptors,
	// three directories, path tables) plus the two files' sectors.
	if len(b) > 64<<10 {
		t.Errorf("ISO of typical settings is %d bytes, more than 64 KiB", len(b))
	}
}

func TestNoPublicKeyMeansNoPublicKeys(t *testing.T) {
	img := build(t, []byte(`{"agent_id":"a"}`), configdrive.MetaData{InstanceID: instanceID})
	got := string(readFile(t, openISO(t, img.Path()), configdrive.MetaDataPath))
	if want := `{"instance-id":"` + instanceID + `"}`; got != want {
		t.Errorf("meta-data.json = %s, want %s", got, want)
	}
}

// clockBytes zeroes what go-diskfs takes from the clock: the primary
// volume descriptor's four dates (bytes 813-880 of sector 16) and each
// Rock Ridge TF entry's attribute-change stamp (short form: "TF", length
// 26, version 1, flags modify|access|attributes, three 7-byte stamps). It
// returns how many TF entries it found.
func clockBytes(b []byte) int {
	clear(b[16*2048+813 : 16*2048+881])
	tf := []byte{'T', 'F', 26, 1, 0x0e}
	n := 0
	for off := 0; ; n++ {
		i := bytes.Index(b[off:], tf)
		if i < 0 {
			return n
		}
		i += off
		clear(b[i+5+14 : i+5+21])
		off = i + 1
	}
}

// Where go-diskfs lets the input alone decide, two images agree byte for
// byte; the times on every entry are Epoch.
func TestImagesOfTheSameInputAgree(t *testing.T) {
	md := configdrive.MetaData{InstanceID: instanceID, PublicKey: publicKey}
	a := build(t, settingsDoc(t), md)
	b := build(t, settingsDoc(t), md)
	ab, errA := os.ReadFile(a.Path())
	bb, errB := os.ReadFile(b.Path())
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	// The records of ., .. and ec2 in the root, of ., .. and latest in
	// ec2, and of ., .. and the two files in latest.
	if na, nb := clockBytes(ab), clockBytes(bb); na != 10 || nb != 10 {
		t.Errorf("%d and %d Rock Ridge TF entries", na, nb)
	}
	if !bytes.Equal(ab, bb) {
		t.Error("two images of the same input differ beyond the clock's bytes")
	}
	for _, dir := range []string{"/", "/ec2", "/ec2/latest"} {
		entries, err := openISO(t, b.Path()).ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.ModTime().Equal(configdrive.Epoch) {
				t.Errorf("%s/%s dated %v, want %v", dir, e.Name(), e.ModTime(), configdrive.Epoch)
			}
		}
	}
}

func TestBadInputIsRefusedWithoutItsContent(t *testing.T) {
	md := configdrive.MetaData{InstanceID: instanceID}
	big := append([]byte(`{"mbus":"nats://nats:`+secret+`@10.0.0.6:4222","pad":"`),
		bytes.Repeat([]byte("x"), configdrive.MaxSettingsSize)...)
	big = append(big, `"}`...)
	cases := []struct {
		name     string
		settings []byte
		md       configdrive.MetaData
		says     []string
	}{
		{"empty", nil, md, []string{"empty"}},
		{"too large", big, md, []string{strconv.Itoa(configdrive.MaxSettingsSize), strconv.Itoa(len(big))}},
		{"not JSON", []byte(`mbus: nats://nats:` + secret + `@x`), md, []string{"not a JSON object"}},
		{"a JSON array", []byte(`["` + secret + `"]`), md, []string{"not a JSON object"}},
		{"no instance id", settingsDoc(t), configdrive.MetaData{}, []string{"instance id"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			var buf bytes.Buffer
			_, err := configdrive.Write(&buf, tmp, c.settings, c.md)
			if !errors.Is(err, configdrive.ErrBadInput) {
				t.Fatalf("error %v, want one wrapping ErrBadInput", err)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q holds the secret", err)
			}
			if buf.Len() != 0 {
				t.Errorf("%d bytes written", buf.Len())
			}
			emptyDir(t, tmp)
		})
	}
}

func TestSettingsOfExactlyTheBoundAreTaken(t *testing.T) {
	s := append([]byte(`{"agent_id":"a","pad":"`), bytes.Repeat([]byte("x"), configdrive.MaxSettingsSize)...)
	s = append(s[:configdrive.MaxSettingsSize-2], `"}`...)
	img := build(t, s, configdrive.MetaData{InstanceID: instanceID})
	if got := readFile(t, openISO(t, img.Path()), configdrive.UserDataPath); !bytes.Equal(got, s) {
		t.Errorf("user-data of %d bytes read back as %d", len(s), len(got))
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestNothingIsLeftBehind(t *testing.T) {
	tmp := t.TempDir()
	md := configdrive.MetaData{InstanceID: instanceID}
	if _, err := configdrive.Write(io.Discard, tmp, settingsDoc(t), md); err != nil {
		t.Fatal(err)
	}
	emptyDir(t, tmp)

	_, err := configdrive.Write(failingWriter{}, tmp, settingsDoc(t), md)
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("error %v: want one, without the settings", err)
	}
	emptyDir(t, tmp)

	img, err := configdrive.Build(tmp, settingsDoc(t), md)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(filepath.Dir(img.Path())) != tmp {
		t.Errorf("image %s is not in its own directory under %s", img.Path(), tmp)
	}
	st, err := os.Stat(filepath.Dir(img.Path()))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("the image's directory has mode %v, want 0700", st.Mode().Perm())
	}
	if err := img.Close(); err != nil {
		t.Fatal(err)
	}
	emptyDir(t, tmp)

	if _, err := configdrive.Build(filepath.Join(tmp, "missing"), settingsDoc(t), md); err == nil {
		t.Error("no error for a temporary directory that does not exist")
	}
	emptyDir(t, tmp)
}
