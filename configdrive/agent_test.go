package configdrive_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/configdrive"
)

// agentTool builds tools/configdrivesettings: bosh-agent v2.769.0's
// ConfigDrive settings source, configured as the OpenStack stemcell's
// agent.json configures it, over a platform that reads the ISO.
func agentTool(t *testing.T) string { return buildTool(t, "configdrivesettings") }

// buildTool builds the tools module's command name into a temporary
// directory.
func buildTool(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, "./"+name)
	cmd.Dir = filepath.Join("..", "tools")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building tools/%s: %v\n%s", name, err, out)
	}
	return bin
}

// agentRead runs the tool on an ISO with the stemcell's sources
// ("stemcell": File, ConfigDrive, HTTP) or the ConfigDrive source alone
// ("config-drive"); it returns stdout, stderr and whether the agent read
// the settings.
func agentRead(t *testing.T, tool, iso, sources string) ([]byte, string, bool) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(tool, "-iso", iso, "-sources", sources)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), secret) {
		t.Errorf("the agent's errors hold the settings' secret: %s", stderr.String())
	}
	return stdout.Bytes(), stderr.String(), err == nil
}

// patched writes a copy of the image with from replaced by to (same
// length) where it first occurs from offset at on.
func patched(t *testing.T, img *configdrive.Image, at int, from, to string) string {
	t.Helper()
	b, err := os.ReadFile(img.Path())
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b[at:], []byte(from))
	if i < 0 || len(from) != len(to) {
		t.Fatalf("%q not on the image", from)
	}
	copy(b[at+i:], to)
	p := filepath.Join(t.TempDir(), "patched.iso")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// within fails unless every value of want is in got at the same place;
// the agent's settings.Settings adds its own defaults around them.
func within(t *testing.T, where string, want, got any) {
	t.Helper()
	wm, ok := want.(map[string]any)
	if !ok {
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: the agent read %#v, the CPI wrote %#v", where, got, want)
		}
		return
	}
	gm, ok := got.(map[string]any)
	if !ok {
		t.Errorf("%s: the agent read %#v, the CPI wrote an object", where, got)
		return
	}
	for k, v := range wm {
		within(t, where+"."+k, v, gm[k])
	}
}

type agentView struct {
	Settings  map[string]any `json:"settings"`
	PublicKey string         `json:"public_key"`
	Mounts    []string       `json:"mounts"`
}

// readsTheSettings fails unless the agent read, on the CONFIG-2 device,
// the settings the CPI wrote.
func readsTheSettings(t *testing.T, tool, iso, sources string) agentView {
	t.Helper()
	out, stderr, ok := agentRead(t, tool, iso, sources)
	if !ok {
		t.Fatalf("the agent could not read the drive: %s", stderr)
	}
	var got agentView
	var wrote map[string]any
	if err := errors.Join(json.Unmarshal(out, &got), json.Unmarshal(settingsDoc(t), &wrote)); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, key := range []string{"agent_id", "networks", "disks", "mbus", "blobstore"} {
		if wrote[key] == nil {
			t.Fatalf("the test's settings have no %s", key)
		}
		within(t, key, wrote[key], got.Settings[key])
	}
	for _, m := range got.Mounts {
		if m != "/dev/disk/by-label/CONFIG-2" {
			t.Errorf("mounted %v, want CONFIG-2 only", got.Mounts)
		}
	}
	return got
}

// TestTheRealAgentReadsTheDrive hands the ISO this package writes to
// bosh-agent's own settings sources, configured as the OpenStack
// stemcell's agent.json configures them, in the order its bootstrap asks:
// the public key, then the settings.
func TestTheRealAgentReadsTheDrive(t *testing.T) {
	tool := agentTool(t)
	img := build(t, settingsDoc(t), configdrive.MetaData{InstanceID: instanceID, PublicKey: publicKey})
	noMetaData := patched(t, img, 0, "meta-data.json", "meta-data.jsox") // the Rock Ridge name, as the guest sees it
	otherLabel := patched(t, img, 16*2048+40, "CONFIG-2", "CONFIG-3")    // the volume identifier

	// The stemcell's File source comes first and answers the key question
	// with "no key", so only user-data is read, once.
	t.Run("the stemcell reads the settings", func(t *testing.T) {
		got := readsTheSettings(t, tool, img.Path(), "stemcell")
		if got.PublicKey != "" || len(got.Mounts) != 1 {
			t.Errorf("public key %q, mounts %v: want none from the drive, one mount", got.PublicKey, got.Mounts)
		}
	})
	t.Run("the ConfigDrive source reads the key, then the settings", func(t *testing.T) {
		got := readsTheSettings(t, tool, img.Path(), "config-drive")
		if got.PublicKey != publicKey || len(got.Mounts) != 2 {
			t.Errorf("public key %q, mounts %v", got.PublicKey, got.Mounts)
		}
	})
	t.Run("the stemcell boots without meta-data.json", func(t *testing.T) {
		readsTheSettings(t, tool, noMetaData, "stemcell")
	})
	t.Run("the ConfigDrive source needs meta-data.json", func(t *testing.T) {
		_, stderr, ok := agentRead(t, tool, noMetaData, "config-drive")
		if ok || !strings.Contains(stderr, "Setting up ssh: Getting iaas public key") ||
			!strings.Contains(stderr, "Loading file 'ec2/latest/meta-data.json' from config drive") {
			t.Errorf("read %v, agent said %s", ok, stderr)
		}
	})
	// The bootstrap stops at the first question the sources cannot answer.
	for sources, says := range map[string]string{
		"stemcell":     "Fetching settings: Getting settings from all sources",
		"config-drive": "Setting up ssh: Getting iaas public key",
	} {
		t.Run("another label is no config drive for "+sources, func(t *testing.T) {
			_, stderr, ok := agentRead(t, tool, otherLabel, sources)
			if ok || !strings.Contains(stderr, says) {
				t.Errorf("read %v, agent said %s", ok, stderr)
			}
		})
	}
}
