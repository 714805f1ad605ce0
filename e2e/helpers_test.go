//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// suite is one run's configuration and API client.
type suite struct {
	config
	cs *cloudstack.CloudStackClient
}

// deployment is what bosh's state file says create-env made.
type deployment struct {
	VM       string
	Disk     string
	DiskSize int
	Stemcell string
}

// run runs the create-env script (create-env or delete-env) with the
// variables that size the VM and the disk.
func (s *suite) run(t *testing.T, action, offering string, diskSize int, greeting string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", s.CreateEnv, action)
	cmd.Env = append(os.Environ(), "E2E_COMPUTE_OFFERING="+offering, fmt.Sprintf("E2E_DISK_SIZE=%d", diskSize),
		"E2E_GREETING="+greeting)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", s.CreateEnv, action, err, out)
	}
	t.Logf("%s took %s", action, time.Since(start).Round(time.Second))
}

// state reads the deployment bosh recorded.
func (s *suite) state(t *testing.T) deployment {
	t.Helper()
	b, err := os.ReadFile(s.BoshState)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		CurrentVMCID      string `json:"current_vm_cid"`
		CurrentStemcellID string `json:"current_stemcell_id"`
		CurrentDiskID     string `json:"current_disk_id"`
		Disks             []struct {
			ID, CID string
			Size    int
		} `json:"disks"`
		Stemcells []struct{ ID, CID string } `json:"stemcells"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("%s: %v", s.BoshState, err)
	}
	d := deployment{VM: st.CurrentVMCID}
	for _, disk := range st.Disks {
		if disk.ID == st.CurrentDiskID {
			d.Disk, d.DiskSize = disk.CID, disk.Size
		}
	}
	for _, sc := range st.Stemcells {
		if sc.ID == st.CurrentStemcellID {
			d.Stemcell = sc.CID
		}
	}
	return d
}

func (s *suite) vm(t *testing.T, id string) *cloudstack.VirtualMachine {
	t.Helper()
	p := s.cs.VirtualMachine.NewListVirtualMachinesParams()
	p.SetId(id)
	p.SetListall(true)
	r, err := s.cs.VirtualMachine.ListVirtualMachines(p)
	if err != nil {
		t.Fatalf("listVirtualMachines id=%s: %v", id, err)
	}
	if r.Count == 0 {
		return nil
	}
	return r.VirtualMachines[0]
}

// gone reports whether a VM is no longer there: listed no more, or being
// expunged (a destroyed VM stays listed until the expunge thread runs).
func (s *suite) vmGone(t *testing.T, id string) bool {
	vm := s.vm(t, id)
	return vm == nil || vm.State == "Expunging" || vm.State == "Destroyed"
}

func (s *suite) volume(t *testing.T, id string) *cloudstack.Volume {
	t.Helper()
	p := s.cs.Volume.NewListVolumesParams()
	p.SetId(id)
	p.SetListall(true)
	r, err := s.cs.Volume.ListVolumes(p)
	if err != nil {
		t.Fatalf("listVolumes id=%s: %v", id, err)
	}
	if r.Count == 0 {
		return nil
	}
	return r.Volumes[0]
}

func (s *suite) template(t *testing.T, id string) *cloudstack.Template {
	t.Helper()
	p := s.cs.Template.NewListTemplatesParams("self")
	p.SetId(id)
	p.SetListall(true)
	r, err := s.cs.Template.ListTemplates(p)
	if err != nil {
		t.Fatalf("listTemplates id=%s: %v", id, err)
	}
	if r.Count == 0 {
		return nil
	}
	return r.Templates[0]
}

func (s *suite) tags(t *testing.T, resourceID string) []*cloudstack.Tag {
	t.Helper()
	p := s.cs.Resourcetags.NewListTagsParams()
	p.SetResourceid(resourceID)
	p.SetListall(true)
	r, err := s.cs.Resourcetags.ListTags(p)
	if err != nil {
		t.Fatalf("listTags resourceid=%s: %v", resourceID, err)
	}
	return r.Tags
}

// publicIPs are the public addresses associated with a VM (static NAT).
func (s *suite) publicIPs(t *testing.T, vmID string) []*cloudstack.PublicIpAddress {
	t.Helper()
	p := s.cs.Address.NewListPublicIpAddressesParams()
	p.SetListall(true)
	r, err := s.cs.Address.ListPublicIpAddresses(p)
	if err != nil {
		t.Fatalf("listPublicIpAddresses: %v", err)
	}
	var out []*cloudstack.PublicIpAddress
	for _, ip := range r.PublicIpAddresses {
		if ip.Virtualmachineid == vmID {
			out = append(out, ip)
		}
	}
	return out
}

// eventually retries check until it returns "" or the time is up; the
// last complaint fails the test.
func eventually(t *testing.T, d time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// agentBase is the base directory the launcher gave the VM's agent, or ""
// when the agents do not run beside the suite.
func (s *suite) agentBase(vmID string) string {
	if s.AgentDir == "" {
		return ""
	}
	return filepath.Join(s.AgentDir, vmID)
}

// mount is one entry of the dummy platform's bosh/mounts.json.
type mount struct {
	MountDir string
	DiskCid  string
}

func readJSONFile(t *testing.T, path string, v any) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return true
}

// mounts are the persistent disks the VM's agent has mounted.
func (s *suite) mounts(t *testing.T, vmID string) []mount {
	t.Helper()
	var m []mount
	readJSONFile(t, filepath.Join(s.agentBase(vmID), "bosh", "mounts.json"), &m)
	return m
}

// boshInt reads one value of bosh's vars store.
func (s *suite) boshInt(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(s.Bosh, "int", s.Creds, "--path", path).Output()
	if err != nil {
		t.Fatalf("bosh int %s --path %s: %v", s.Creds, path, err)
	}
	return strings.TrimSpace(string(out))
}

// agentCall sends one request to the agent's HTTPS mbus at the static IP,
// as bosh create-env does, and returns its "value".
func (s *suite) agentCall(t *testing.T, method string, args ...any) (json.RawMessage, error) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(s.boshInt(t, "/mbus_bootstrap_ssl/ca"))) {
		t.Fatal("no CA in the vars store's mbus_bootstrap_ssl")
	}
	client := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: s.StaticIP}}}
	if args == nil {
		args = []any{}
	}
	body, _ := json.Marshal(map[string]any{"method": method, "arguments": args, "reply_to": "e2e-suite"})
	req, err := http.NewRequest(http.MethodPost, "https://"+s.StaticIP+":6868/agent", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("mbus", s.boshInt(t, "/mbus_bootstrap_password"))
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Value     json.RawMessage `json:"value"`
		Exception *struct {
			Message string `json:"message"`
		} `json:"exception"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d: %v", method, resp.StatusCode, err)
	}
	if r.Exception != nil {
		return nil, fmt.Errorf("%s: %s", method, r.Exception.Message)
	}
	return r.Value, nil
}
