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

// suite is one run's configuration and API client, and the environment
// it deploys.
type suite struct {
	config
	env
	cs *cloudstack.CloudStackClient
}

// scope limits a listing to the environment's CloudStack project, when it
// has one: without projectid CloudStack leaves project resources out of
// every list (AccountManagerImpl.buildACLSearchParameters).
func (s *suite) scope(p cloudstack.ProjectIDSetter) {
	if s.ProjectID != "" {
		p.SetProjectid(s.ProjectID)
	}
}

// inProject is the suite listing the resources of project id ("": those
// of no project).
func (s *suite) inProject(id string) *suite {
	o := *s
	o.ProjectID = id
	return &o
}

// newSuite is a suite deploying e, which must be the only environment of
// the harness deployed: both put their VM on the static IP, whose mbus port
// only one agent can hold, so any other one still there (a test run
// before, or one that failed half-way) is deleted first.
func newSuite(t *testing.T, c config, e env) *suite {
	t.Helper()
	s := &suite{config: c, env: e, cs: cloudstack.NewClient(c.APIURL, c.APIKey, c.SecretKey, true)}
	s.assertCloudStackVersion(t)
	for _, other := range []env{c.Lifecycle, c.BoshDeployment, c.VPC} {
		if other == e || other.BoshState == "" {
			continue
		}
		o := &suite{config: c, env: other, cs: s.cs}
		if vm := o.deployedVM(t); vm != "" {
			t.Logf("%s still has VM %s on %s: deleting that environment first", other.BoshState, vm, c.StaticIP)
			o.run(t, "delete-env", c.ComputeOffering, c.DiskSize, "")
		}
	}
	return s
}

// assertCloudStackVersion: the phase runs on the CloudStack release the
// harness started the simulator as (listCapabilities' cloudstackversion).
func (s *suite) assertCloudStackVersion(t *testing.T) {
	t.Helper()
	if s.CloudStackVersion == "" {
		return
	}
	r, err := s.cs.Configuration.ListCapabilities(s.cs.Configuration.NewListCapabilitiesParams())
	if err != nil {
		t.Fatalf("listCapabilities: %v", err)
	}
	if v := r.Capabilities.Cloudstackversion; !strings.HasPrefix(v, s.CloudStackVersion+".") {
		t.Fatalf("CloudStack is %q, not the %s E2E_CLOUDSTACK_VERSION names", v, s.CloudStackVersion)
	}
	t.Logf("CloudStack %s", r.Capabilities.Cloudstackversion)
}

// deployment is what bosh's state file says create-env made.
type deployment struct {
	VM       string
	Disk     string
	DiskSize int
	Stemcell string
	// Template is the stemcell's template: its CID, less the prefix the
	// CPI puts before the template id of a stemcell whose VMs get a
	// settings ISO (bosh.io's OpenStack and vSphere stemcells).
	Template string
}

// The prefixes of the CPI's stemcell CIDs whose VMs get a settings ISO:
// the config drive of bosh.io's OpenStack stemcells, the env CD-ROM of its
// vSphere stemcells.
const (
	configDriveCIDPrefix = "configdrive-"
	cdromCIDPrefix       = "cdrom-"
)

// templateOf is the template id in a stemcell CID.
func templateOf(cid string) string {
	for _, prefix := range []string{configDriveCIDPrefix, cdromCIDPrefix} {
		if id, ok := strings.CutPrefix(cid, prefix); ok {
			return id
		}
	}
	return cid
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

// boshState is what bosh's state file records.
type boshState struct {
	CurrentVMCID      string `json:"current_vm_cid"`
	CurrentStemcellID string `json:"current_stemcell_id"`
	CurrentDiskID     string `json:"current_disk_id"`
	Disks             []struct {
		ID, CID string
		Size    int
	} `json:"disks"`
	Stemcells []struct{ ID, CID string } `json:"stemcells"`
}

// deployedVM is the VM bosh's state file names, "" when there is no state
// file or no VM (after delete-env).
func (s *suite) deployedVM(t *testing.T) string {
	t.Helper()
	var st boshState
	if !readJSONFile(t, s.BoshState, &st) {
		return ""
	}
	return st.CurrentVMCID
}

// state reads the deployment bosh recorded.
func (s *suite) state(t *testing.T) deployment {
	t.Helper()
	var st boshState
	if !readJSONFile(t, s.BoshState, &st) {
		t.Fatalf("no bosh state file %s", s.BoshState)
	}
	d := deployment{VM: st.CurrentVMCID}
	for _, disk := range st.Disks {
		if disk.ID == st.CurrentDiskID {
			d.Disk, d.DiskSize = disk.CID, disk.Size
		}
	}
	for _, sc := range st.Stemcells {
		if sc.ID == st.CurrentStemcellID {
			d.Stemcell, d.Template = sc.CID, templateOf(sc.CID)
		}
	}
	return d
}

// vms lists every VM, or with an id the one VM.
func (s *suite) vms(t *testing.T, id string) []*cloudstack.VirtualMachine {
	t.Helper()
	p := s.cs.VirtualMachine.NewListVirtualMachinesParams()
	s.scope(p)
	if id != "" {
		p.SetId(id)
	}
	p.SetListall(true)
	r, err := s.cs.VirtualMachine.ListVirtualMachines(p)
	if err != nil {
		t.Fatalf("listVirtualMachines id=%s: %v", id, err)
	}
	return r.VirtualMachines
}

func (s *suite) vm(t *testing.T, id string) *cloudstack.VirtualMachine { return first(s.vms(t, id)) }

// vmGone reports whether a VM is no longer there: listed no more, or gone.
func (s *suite) vmGone(t *testing.T, id string) bool {
	vm := s.vm(t, id)
	return vm == nil || gone(vm)
}

// gone: being destroyed or expunged (CloudStack lists a destroyed VM until
// its expunge thread runs).
func gone(vm *cloudstack.VirtualMachine) bool {
	return vm.State == "Expunging" || vm.State == "Destroyed"
}

// volumes lists the volumes listVolumes answers with the parameters set
// sets (nil: every volume).
func (s *suite) volumes(t *testing.T, set func(*cloudstack.ListVolumesParams)) []*cloudstack.Volume {
	t.Helper()
	p := s.cs.Volume.NewListVolumesParams()
	s.scope(p)
	if set != nil {
		set(p)
	}
	p.SetListall(true)
	r, err := s.cs.Volume.ListVolumes(p)
	if err != nil {
		t.Fatalf("listVolumes: %v", err)
	}
	return r.Volumes
}

func (s *suite) volume(t *testing.T, id string) *cloudstack.Volume {
	return first(s.volumes(t, func(p *cloudstack.ListVolumesParams) { p.SetId(id) }))
}

// volumesOf are the volumes attached to a VM.
func (s *suite) volumesOf(t *testing.T, vmID string) []*cloudstack.Volume {
	return s.volumes(t, func(p *cloudstack.ListVolumesParams) { p.SetVirtualmachineid(vmID) })
}

// templates lists the account's templates, or with an id the one template.
func (s *suite) templates(t *testing.T, id string) []*cloudstack.Template {
	t.Helper()
	p := s.cs.Template.NewListTemplatesParams("self")
	s.scope(p)
	if id != "" {
		p.SetId(id)
	}
	p.SetListall(true)
	r, err := s.cs.Template.ListTemplates(p)
	if err != nil {
		t.Fatalf("listTemplates id=%s: %v", id, err)
	}
	return r.Templates
}

func (s *suite) template(t *testing.T, id string) *cloudstack.Template {
	return first(s.templates(t, id))
}

// tags lists every tag, or with a resource id the resource's.
func (s *suite) tags(t *testing.T, resourceID string) []*cloudstack.Tag {
	t.Helper()
	p := s.cs.Resourcetags.NewListTagsParams()
	s.scope(p)
	if resourceID != "" {
		p.SetResourceid(resourceID)
	}
	p.SetListall(true)
	r, err := s.cs.Resourcetags.ListTags(p)
	if err != nil {
		t.Fatalf("listTags resourceid=%s: %v", resourceID, err)
	}
	return r.Tags
}

// allPublicIPs are the allocated public addresses.
func (s *suite) allPublicIPs(t *testing.T) []*cloudstack.PublicIpAddress {
	t.Helper()
	p := s.cs.Address.NewListPublicIpAddressesParams()
	s.scope(p)
	p.SetListall(true)
	r, err := s.cs.Address.ListPublicIpAddresses(p)
	if err != nil {
		t.Fatalf("listPublicIpAddresses: %v", err)
	}
	return r.PublicIpAddresses
}

// publicIPs are the public addresses associated with a VM (static NAT).
func (s *suite) publicIPs(t *testing.T, vmID string) []*cloudstack.PublicIpAddress {
	t.Helper()
	var out []*cloudstack.PublicIpAddress
	for _, ip := range s.allPublicIPs(t) {
		if ip.Virtualmachineid == vmID {
			out = append(out, ip)
		}
	}
	return out
}

// first is the first of a listing, nil for none.
func first[T any](list []*T) *T {
	if len(list) == 0 {
		return nil
	}
	return list[0]
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
		return nil, fmt.Errorf("%s: HTTP %d: %w", method, resp.StatusCode, err)
	}
	if r.Exception != nil {
		return nil, fmt.Errorf("%s: %s", method, r.Exception.Message)
	}
	return r.Value, nil
}
