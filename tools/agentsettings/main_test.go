package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	boshinf "github.com/cloudfoundry/bosh-agent/v2/infrastructure"
	boshsettings "github.com/cloudfoundry/bosh-agent/v2/settings"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

const (
	vmUUID     = "6f1c2b8e-3a4d-4e5f-9a0b-1c2d3e4f5a6b"
	instanceID = "i-" + vmUUID
	publicKey  = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 bosh@director"
	volumeUUID = "0b7f3c2a-1d4e-4f6a-8b9c-0d1e2f3a4b5c"
)

// settingsDoc is the user data a CPI API v2 would hand a CloudStack VM.
var settingsDoc = map[string]any{
	"agent_id": "agent-7d1c",
	"vm":       map[string]any{"name": "vm-" + vmUUID},
	"mbus":     "nats://nats:secret@10.0.0.6:4222",
	"ntp":      []string{"0.pool.ntp.org"},
	"blobstore": map[string]any{
		"provider": "dav",
		"options":  map[string]any{"endpoint": "http://10.0.0.6:25250"},
	},
	"networks": map[string]any{
		"default": map[string]any{
			"type":    "manual",
			"ip":      "10.0.0.10",
			"netmask": "255.255.255.0",
			"gateway": "10.0.0.1",
			"dns":     []string{"10.0.0.2"},
			"default": []string{"dns", "gateway"},
			"mac":     "02:00:5e:10:00:0a",
		},
	},
	"disks": map[string]any{
		"system":    "/dev/xvda",
		"ephemeral": "/dev/xvdb",
		"persistent": map[string]any{
			"vol-1234": map[string]any{"path": "/dev/xvdc", "volume_id": "2", "id": strings.ReplaceAll(volumeUUID, "-", "")},
		},
	},
	"env": map[string]any{
		"bosh": map[string]any{
			"password":         "$6$salt$hash",
			"remove_dev_tools": true,
			"authorized_keys":  []string{"ssh-ed25519 AAAAC3Nz operator"},
		},
		"persistent_disk_fs": "ext4",
	},
}

// v1Envelope is user data without agent_id: a registry-only envelope.
var v1Envelope = map[string]any{
	"server":   map[string]any{"name": "vm-" + vmUUID},
	"registry": map[string]any{"endpoint": "http://admin:admin@10.0.0.6:25777"},
	"dns":      map[string]any{"nameserver": []string{"10.0.0.2"}},
}

// metadataServer serves one VM's metadata under /metadata/<vm-uuid>/, as
// an HTTP metadata service the -uri flag points at. It records the paths
// requested.
type metadataServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newMetadataServer(t *testing.T, userData []byte) *metadataServer {
	t.Helper()
	ms := &metadataServer{}
	prefix := "/metadata/" + vmUUID
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+prefix+"/latest/user-data", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(userData)
	})
	mux.HandleFunc("GET "+prefix+"/latest/meta-data/instance-id", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, instanceID)
	})
	mux.HandleFunc("GET "+prefix+"/latest/meta-data/public-keys", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, publicKey)
	})
	ms.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ms.mu.Lock()
		ms.paths = append(ms.paths, r.URL.Path)
		ms.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(ms.Close)
	return ms
}

func (ms *metadataServer) uri() string { return ms.URL + "/metadata/" + vmUUID }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runTool runs the command's logic as `agentsettings -uri <uri>`.
func runTool(t *testing.T, uri string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run([]string{"-uri", uri}, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestStemcellOptions(t *testing.T) {
	opts, err := StemcellOptions("http://md.example:8080/metadata/x/")
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.Settings.Sources) != 1 {
		t.Fatalf("want exactly one settings source, got %#v", opts.Settings.Sources)
	}
	want := boshinf.HTTPSourceOptions{
		URI:            "http://md.example:8080/metadata/x",
		UserDataPath:   "/latest/user-data",
		InstanceIDPath: "/latest/meta-data/instance-id",
		SSHKeysPath:    "/latest/meta-data/public-keys",
	}
	got, ok := opts.Settings.Sources[0].(boshinf.HTTPSourceOptions)
	if !ok || got.URI != want.URI || got.UserDataPath != want.UserDataPath ||
		got.InstanceIDPath != want.InstanceIDPath || got.SSHKeysPath != want.SSHKeysPath ||
		got.TokenPath != "" || len(got.Headers) != 0 {
		t.Fatalf("source = %#v, want %#v", opts.Settings.Sources[0], want)
	}
}

func TestReadsSettings(t *testing.T) {
	raw := mustJSON(t, settingsDoc)
	cases := map[string][]byte{
		"raw JSON": raw,
		// The agent falls back to unpadded base64url (base64.RawURLEncoding),
		// and strips double quotes first.
		"base64url":        []byte(base64.RawURLEncoding.EncodeToString(raw)),
		"quoted base64url": []byte(`"` + base64.RawURLEncoding.EncodeToString(raw) + `"`),
	}
	for name, userData := range cases {
		t.Run(name, func(t *testing.T) {
			ms := newMetadataServer(t, userData)
			code, stdout, stderr := runTool(t, ms.uri())
			if code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			var res struct {
				Settings   boshsettings.Settings `json:"settings"`
				InstanceID string                `json:"instance_id"`
				PublicKey  string                `json:"public_key"`
			}
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("stdout is not the result JSON: %v\n%s", err, stdout)
			}
			s := res.Settings
			if s.AgentID != "agent-7d1c" {
				t.Errorf("agent_id = %q", s.AgentID)
			}
			if s.VM.Name != "vm-"+vmUUID {
				t.Errorf("vm.name = %q", s.VM.Name)
			}
			if s.GetMbusURL() != "nats://nats:secret@10.0.0.6:4222" {
				t.Errorf("mbus = %q", s.GetMbusURL())
			}
			net, ok := s.Networks["default"]
			if !ok || len(s.Networks) != 1 {
				t.Fatalf("networks = %#v", s.Networks)
			}
			if net.Type != "manual" || net.IP != "10.0.0.10" || net.Netmask != "255.255.255.0" ||
				net.Gateway != "10.0.0.1" || net.Mac != "02:00:5e:10:00:0a" {
				t.Errorf("network = %#v", net)
			}
			if !net.IsDefaultFor("gateway") || !net.IsDefaultFor("dns") {
				t.Errorf("network default = %v", net.Default)
			}
			if s.Disks.System != "/dev/xvda" {
				t.Errorf("disks.system = %q", s.Disks.System)
			}
			if eph := s.EphemeralDiskSettings(); eph.Path != "/dev/xvdb" {
				t.Errorf("ephemeral = %#v", eph)
			}
			pd, found := s.PersistentDiskSettings("vol-1234")
			if !found || pd.ID != "vol-1234" || pd.Path != "/dev/xvdc" || pd.VolumeID != "2" ||
				pd.DeviceID != strings.ReplaceAll(volumeUUID, "-", "") {
				t.Errorf("persistent disk = %#v (found %v)", pd, found)
			}
			if s.Env.Bosh.Password != "$6$salt$hash" || !s.Env.Bosh.RemoveDevTools ||
				len(s.Env.GetAuthorizedKeys()) != 1 || s.Env.PersistentDiskFS != "ext4" {
				t.Errorf("env = %#v", s.Env)
			}
			if s.GetBlobstore().Type != "dav" {
				t.Errorf("blobstore = %#v", s.Blobstore)
			}
			if res.InstanceID != instanceID {
				t.Errorf("instance_id = %q", res.InstanceID)
			}
			if res.PublicKey != publicKey {
				t.Errorf("public_key = %q", res.PublicKey)
			}
			ms.mu.Lock()
			defer ms.mu.Unlock()
			wantPaths := []string{
				"/metadata/" + vmUUID + "/latest/meta-data/public-keys",
				"/metadata/" + vmUUID + "/latest/user-data",
				"/metadata/" + vmUUID + "/latest/meta-data/instance-id",
			}
			if strings.Join(ms.paths, " ") != strings.Join(wantPaths, " ") {
				t.Errorf("requested %v, want %v", ms.paths, wantPaths)
			}
		})
	}
}

func TestRefusesUserDataWithoutAgentID(t *testing.T) {
	for name, userData := range map[string][]byte{
		"v1 registry envelope":  mustJSON(t, v1Envelope),
		"base64url v1 envelope": []byte(base64.RawURLEncoding.EncodeToString(mustJSON(t, v1Envelope))),
		"settings without agent_id": func() []byte {
			doc := map[string]any{}
			for k, v := range settingsDoc {
				if k != "agent_id" {
					doc[k] = v
				}
			}
			return mustJSON(t, doc)
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			ms := newMetadataServer(t, userData)
			code, stdout, stderr := runTool(t, ms.uri())
			if code != 1 {
				t.Fatalf("exit %d, want 1; stdout:\n%s", code, stdout)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			want := "Fetching settings: Getting settings from all sources: Metadata does not provide settings"
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, want)
			}
		})
	}
}

// The agent accepts only unpadded base64url: standard, padded base64 is refused.
func TestRefusesPaddedStandardBase64(t *testing.T) {
	raw := mustJSON(t, settingsDoc)
	for len(raw)%3 == 0 { // make sure the encoding carries '=' padding
		raw = append(raw, ' ')
	}
	ms := newMetadataServer(t, []byte(base64.StdEncoding.EncodeToString(raw)))
	code, _, stderr := runTool(t, ms.uri())
	if code != 1 || !strings.Contains(stderr, "Decoding url encoded user data") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// A VM the metadata service does not know: the agent's HTTP client makes 10
// attempts, 1 s apart, for every non-2xx answer. A 404 on the public keys
// then counts as "no key"; a 404 on the user data is an error.
func TestMissingUserDataFails(t *testing.T) {
	ms := newMetadataServer(t, nil)
	code, _, stderr := runTool(t, ms.URL+"/metadata/unknown-vm")
	if code != 1 || !strings.Contains(stderr, "invalid status from url "+ms.URL+"/metadata/unknown-vm/latest/user-data: 404") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	count := map[string]int{}
	ms.mu.Lock()
	for _, p := range ms.paths {
		count[p]++
	}
	ms.mu.Unlock()
	want := map[string]int{
		"/metadata/unknown-vm/latest/meta-data/public-keys": 10,
		"/metadata/unknown-vm/latest/user-data":             10,
	}
	if len(count) != len(want) || count["/metadata/unknown-vm/latest/meta-data/public-keys"] != 10 ||
		count["/metadata/unknown-vm/latest/user-data"] != 10 {
		t.Errorf("requests %v, want %v", count, want)
	}
}

// The HTTP source would run DHCP on eth0 if the platform reported no
// configured interface; the tool's platform reports eth0 and is never asked
// to set up networking.
func TestNoHostNetworkingChanges(t *testing.T) {
	ms := newMetadataServer(t, mustJSON(t, settingsDoc))
	p := NoopPlatform()
	src := boshinf.NewHTTPMetadataService(ms.uri(), nil, "/latest/user-data", "", "", "", p,
		boshlog.NewLogger(boshlog.LevelNone))
	if _, err := src.Settings(); err != nil {
		t.Fatal(err)
	}
	if p.GetConfiguredNetworkInterfacesCallCount() == 0 {
		t.Error("the agent's code did not check the configured interfaces")
	}
	if n := p.SetupNetworkingCallCount(); n != 0 {
		t.Errorf("SetupNetworking called %d times", n)
	}

	// Without a configured interface the agent asks for DHCP on eth0; the
	// fake refuses and the read fails instead of touching the host.
	p.GetConfiguredNetworkInterfacesReturns(nil, nil)
	_, err := src.Settings()
	if err == nil || !strings.Contains(err.Error(), "Setting up initial DHCP network") {
		t.Fatalf("err = %v", err)
	}
	nets, _ := p.SetupNetworkingArgsForCall(0)
	if nets["eth0"].Type != boshsettings.NetworkTypeDynamic {
		t.Errorf("SetupNetworking(%#v)", nets)
	}
}

func TestUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"extra"}, &stdout, &stderr); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if code := run([]string{"-log-level", "LOUD"}, &stdout, &stderr); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
}
