package spec

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// stemcell publishes a small stemcell and returns its CID.
func (e *env) stemcell() string {
	e.t.Helper()
	var cid string
	e.call("create_stemcell", writeImage(e.t, bzippedVHD(e.t)), stemcellMF("cloudstack", "xen", "vhdx")).ok(e.t).decode(e.t, &cid)
	return cid
}

func manualNet(ip string) map[string]any {
	return map[string]any{"type": "manual", "ip": ip, "netmask": "255.255.255.0", "gateway": "10.1.1.1",
		"dns": []string{"10.1.1.2"}, "default": []string{"dns", "gateway"},
		"cloud_properties": map[string]any{"name": "guest-network"}}
}

var smallVM = map[string]any{"compute_offering": "Small Instance", "ephemeral_disk_size": 2048,
	"ephemeral_disk_offering": "Custom"}

var boshEnv = map[string]any{"bosh": map[string]any{"group": "spec-director-deployment-web", "groups": []string{"web"}}}

func (e *env) vms() []*csgo.VirtualMachine {
	e.t.Helper()
	c := e.client()
	p := c.VirtualMachine.NewListVirtualMachinesParams()
	p.SetListall(true)
	e.inProject(p)
	resp, err := c.VirtualMachine.ListVirtualMachines(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.VirtualMachines
}

func (e *env) vm(id string) *csgo.VirtualMachine {
	e.t.Helper()
	for _, vm := range e.vms() {
		if vm.Id == id {
			return vm
		}
	}
	e.t.Fatalf("VM %s is not in listVirtualMachines", id)
	return nil
}

func (e *env) volumes() []*csgo.Volume {
	e.t.Helper()
	c := e.client()
	p := c.Volume.NewListVolumesParams()
	p.SetListall(true)
	e.inProject(p)
	resp, err := c.Volume.ListVolumes(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.Volumes
}

// metadata reads a path of a VM's metadata service as its agent would.
func (e *env) metadata(vmID, path string) string {
	e.t.Helper()
	resp, err := http.Get(e.sim.Base + "/metadata/" + vmID + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("metadata %s: %d %s", path, resp.StatusCode, body)
	}
	return string(body)
}

type settingsDoc struct {
	AgentID  string `json:"agent_id"`
	Networks map[string]struct {
		Type, IP, MAC string
		Default       []string
	} `json:"networks"`
	Disks struct {
		System     string         `json:"system"`
		Ephemeral  map[string]any `json:"ephemeral"`
		Persistent map[string]any `json:"persistent"`
	} `json:"disks"`
	Env map[string]any `json:"env"`
}

func (e *env) settingsOf(vmID string) settingsDoc {
	e.t.Helper()
	raw := e.metadata(vmID, "/latest/user-data")
	var s settingsDoc
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		decoded, derr := base64.StdEncoding.DecodeString(raw)
		if derr != nil || json.Unmarshal(decoded, &s) != nil {
			e.t.Fatalf("user data is neither settings JSON nor base64 of it: %q", raw)
		}
	}
	return s
}

func TestCreateVMV2WithManualNetworkAndEphemeralDisk(t *testing.T) {
	createVMV2WithManualNetworkAndEphemeralDisk(t, newEnv(t, nil))
}

// createVMV2WithManualNetworkAndEphemeralDisk is the VM lifecycle, run
// outside and inside a CloudStack project.
func createVMV2WithManualNetworkAndEphemeralDisk(t *testing.T, e *env) {
	stemcell := e.stemcell()
	e.resetCalls()
	r := e.call("create_vm", "agent-1", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.10")}, []string{}, boshEnv).ok(t)
	var result []json.RawMessage
	r.decode(t, &result)
	var cid string
	if len(result) != 2 || json.Unmarshal(result[0], &cid) != nil {
		t.Fatalf("v2 create_vm answered %s", r.Result)
	}
	calls := e.calls()
	if total(calls) > 10+e.projectLookups() {
		t.Errorf("create_vm made %d CloudStack calls (target 10): %v", total(calls), calls)
	}
	vm := e.vm(cid)
	if vm.State != "Running" || len(vm.Nic) != 1 || vm.Nic[0].Ipaddress != "10.1.1.10" {
		t.Fatalf("VM %+v", vm)
	}
	s := e.settingsOf(cid)
	net := s.Networks["default"]
	if s.AgentID != "agent-1" || net.IP != "10.1.1.10" || net.MAC != vm.Nic[0].Macaddress || s.Disks.Ephemeral == nil {
		t.Fatalf("agent settings %+v, NIC MAC %s", s, vm.Nic[0].Macaddress)
	}
	var data []*csgo.Volume
	for _, v := range e.volumes() {
		if v.Type == "DATADISK" && v.Virtualmachineid == cid {
			data = append(data, v)
		}
	}
	if len(data) != 1 || data[0].Size != 2<<30 {
		t.Fatalf("ephemeral disk: %+v", data)
	}

	e.resetCalls()
	e.call("delete_vm", cid).ok(t)
	calls = e.calls()
	if total(calls) > 6+e.projectLookups() {
		t.Errorf("delete_vm made %d CloudStack calls (target 6): %v", total(calls), calls)
	}
	for _, v := range e.vms() {
		if v.Id == cid && v.State != "Expunging" {
			t.Fatalf("VM still %s after delete_vm", v.State)
		}
	}
	for _, v := range e.volumes() {
		if v.Id == data[0].Id {
			t.Fatal("the ephemeral disk survived delete_vm")
		}
	}
	e.call("delete_vm", cid).ok(t) // idempotent
	var has bool
	e.call("has_vm", cid).ok(t).decode(t, &has)
	if has {
		t.Fatal("has_vm true after delete_vm")
	}
}

func TestCreateVMV1ReturnsTheCID(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	e.apiVersion = 1
	var cid string
	e.call("create_vm", "agent-1", stemcell, map[string]any{"compute_offering": "Small Instance"},
		map[string]any{"default": manualNet("10.1.1.11")}, []string{}, boshEnv).ok(t).decode(t, &cid)
	if e.vm(cid).State != "Running" {
		t.Fatal("not running")
	}
}

func TestCreateVMBadInputLeavesNothing(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	nets := map[string]any{"default": manualNet("10.1.1.20")}
	huge := map[string]any{"bosh": map[string]any{"blob": strings.Repeat("x", 40000)}}
	cases := []struct {
		name     string
		stemcell string
		props    map[string]any
		networks map[string]any
		env      map[string]any
		want     string
	}{
		{"unknown offering", stemcell, map[string]any{"compute_offering": "Huge"}, nets, boshEnv, `no compute offering "Huge"`},
		{"unknown zone", stemcell, map[string]any{"compute_offering": "Small Instance", "zone": "atlantis"}, nets, boshEnv, `no zone "atlantis"`},
		{"unknown key", stemcell, map[string]any{"compute_offering": "Small Instance", "instance_type": "m1"}, nets, boshEnv, "instance_type"},
		{"unknown network", stemcell, smallVM, map[string]any{"default": map[string]any{"type": "manual", "ip": "10.1.1.5",
			"cloud_properties": map[string]any{"name": "nowhere"}}}, boshEnv, `no network "nowhere"`},
		{"network without name", stemcell, smallVM, map[string]any{"default": map[string]any{"type": "manual", "ip": "10.1.1.5"}}, boshEnv, "cloud_properties.name"},
		{"ip outside the network", stemcell, smallVM, map[string]any{"default": manualNet("10.9.9.9")}, boshEnv, "10.9.9.9"},
		{"netmask not a netmask", stemcell, smallVM, map[string]any{"default": withNet(manualNet("10.1.1.5"), "netmask", "x")}, boshEnv,
			`manual network "default": netmask "x" is not an IPv4 netmask`},
		{"user data over the limit", stemcell, smallVM, nets, huge, "vm.userdata.max.length"},
		{"unknown stemcell", "0d6f3e4a-1111-4111-8111-111111111111", smallVM, nets, boshEnv, ""},
		{"ip taken", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.99")}, boshEnv,
			"static IP 10.1.1.99 on CloudStack network guest-network is in use by VM"},
		{"vip of another VM", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.21"),
			"public": map[string]any{"type": "vip", "ip": "192.168.2.99"}}, boshEnv, "already static NAT"},
		{"security groups in an advanced zone", stemcell, map[string]any{"compute_offering": "Small Instance",
			"security_groups": []string{"default"}}, nets, boshEnv, "security group"},
		{"two vips", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.22"),
			"a": map[string]any{"type": "vip", "ip": "192.168.2.70"}, "b": map[string]any{"type": "vip", "ip": "192.168.2.71"}},
			boshEnv, "only one vip"},
	}
	// 10.1.1.99 and 192.168.2.99 belong to a VM that exists already.
	e.call("create_vm", "agent-owner", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.99"),
		"public": map[string]any{"type": "vip", "ip": "192.168.2.99"}}, []string{}, boshEnv).ok(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.call("create_vm", "agent-x", c.stemcell, c.props, c.networks, []string{}, c.env).failed(t, "VMCreationFailed", c.want)
			if r.Error.Retry {
				t.Errorf("bad input marked ok_to_retry: %s", r.Error.Message)
			}
		})
	}
	if vms, vols, ips := e.live(); vms != 1 || vols != 1 || ips != 1 {
		t.Fatalf("bad input left things behind: %d VMs, %d data volumes, %d public IPs beside the owner's", vms, vols, ips)
	}
}

// withNet is network n with key set to value.
func withNet(n map[string]any, key string, value any) map[string]any {
	n[key] = value
	return n
}

func TestCapacityErrorsAreRetriable(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	r := e.call("create_vm", "agent-big", stemcell, map[string]any{"cpu": 64, "ram": 1 << 20},
		map[string]any{"default": manualNet("10.1.1.23")}, []string{}, boshEnv).failed(t, "VMCreationFailed", "Unable to create a deployment")
	if !r.Error.Retry {
		t.Fatal("a capacity error must be ok_to_retry")
	}
	if vms, vols, ips := e.live(); vms+vols+ips != 0 {
		t.Fatalf("left %d VMs, %d volumes, %d IPs", vms, vols, ips)
	}
}

func (e *env) publicIPs() []*csgo.PublicIpAddress {
	e.t.Helper()
	c := e.client()
	p := c.Address.NewListPublicIpAddressesParams()
	p.SetAllocatedonly(true)
	p.SetListall(true)
	e.inProject(p)
	resp, err := c.Address.ListPublicIpAddresses(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.PublicIpAddresses
}

// live counts what a failed create_vm could leave behind: VMs not on their
// way out, data volumes, and public IPs other than source NAT.
func (e *env) live() (vms, volumes, ips int) {
	e.t.Helper()
	for _, vm := range e.vms() {
		if vm.State != "Expunging" && vm.State != "Destroyed" {
			vms++
		}
	}
	for _, v := range e.volumes() {
		if v.Type == "DATADISK" {
			volumes++
		}
	}
	for _, ip := range e.publicIPs() {
		if !ip.Issourcenat {
			ips++
		}
	}
	return
}

func TestCreateVMWithTwoNICsAVipAndAnAffinityGroup(t *testing.T) {
	createVMWithTwoNICsAVipAndAnAffinityGroup(t, newEnv(t, nil))
}

// createVMWithTwoNICsAVipAndAnAffinityGroup runs outside and inside a
// CloudStack project.
func createVMWithTwoNICsAVipAndAnAffinityGroup(t *testing.T, e *env) {
	stemcell := e.stemcell()
	e.ownNetwork(apiKey, secretKey, "second-network")
	networks := map[string]any{
		"default": manualNet("10.1.1.30"),
		"second":  map[string]any{"type": "dynamic", "cloud_properties": map[string]any{"name": "second-network"}},
		"public":  map[string]any{"type": "vip", "ip": "192.168.2.50"},
	}
	props := map[string]any{"compute_offering": "Small Instance", "affinity_group": "web-spread"}
	r := e.call("create_vm", "agent-2", stemcell, props, networks, []string{}, boshEnv).ok(t)
	var result []json.RawMessage
	r.decode(t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	var nets map[string]map[string]any
	_ = json.Unmarshal(result[1], &nets)
	if nets["second"]["ip"] == nil || nets["second"]["ip"] == "" {
		t.Errorf("the dynamic network came back without CloudStack's address: %v", nets["second"])
	}
	vm := e.vm(cid)
	if len(vm.Nic) != 2 || vm.Nic[0].Ipaddress != "10.1.1.30" || !vm.Nic[0].Isdefault || vm.Publicip != "192.168.2.50" {
		t.Fatalf("VM NICs %+v public %q", vm.Nic, vm.Publicip)
	}
	if len(vm.Affinitygroup) != 1 || vm.Affinitygroup[0].Name != "web-spread" {
		t.Fatalf("affinity groups %+v", vm.Affinitygroup)
	}
	s := e.settingsOf(cid)
	if s.Networks["default"].MAC != vm.Nic[0].Macaddress || s.Networks["second"].MAC != vm.Nic[1].Macaddress {
		t.Fatalf("settings MACs %+v, NICs %+v", s.Networks, vm.Nic)
	}
	e.call("delete_vm", cid).ok(t)
	if _, _, ips := e.live(); ips != 0 {
		t.Fatal("delete_vm kept the vip the CPI acquired")
	}
}

// CloudStack keys a VM's NICs by network (BaseDeployVMCmd.getIpToNetworkMap):
// two BOSH networks on one CloudStack network would become one NIC, so they
// are refused before anything is created.
func TestTwoBOSHNetworksOnOneCloudStackNetworkAreRefused(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	e.resetCalls()
	networks := map[string]any{
		"default": manualNet("10.1.1.30"),
		"second":  map[string]any{"type": "dynamic", "cloud_properties": map[string]any{"name": "guest-network"}},
	}
	e.call("create_vm", "agent-twice", stemcell, map[string]any{"compute_offering": "Small Instance"}, networks,
		[]string{}, boshEnv).failed(t, "VMCreationFailed", `networks "default" and "second" are both CloudStack network guest-network`)
	if vms, _, _ := e.live(); vms != 0 || e.calls()["deployVirtualMachine"] != 0 {
		t.Fatalf("%d VMs, %d deploys after a refused network plan", vms, e.calls()["deployVirtualMachine"])
	}
}

// The first VM implements the network, which gets a source NAT address;
// naming that address as a vip is refused before anything is created,
// because CloudStack cannot static-NAT it.
func TestVipThatIsTheSourceNATIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	props := map[string]any{"compute_offering": "Small Instance"}
	e.call("create_vm", "agent-snat-1", stemcell, props, map[string]any{"default": manualNet("10.1.1.31")},
		[]string{}, boshEnv).ok(t)
	var snat string
	for _, ip := range e.publicIPs() {
		if ip.Issourcenat {
			snat = ip.Ipaddress
		}
	}
	if snat == "" {
		t.Fatal("the implemented network has no source NAT address")
	}
	vms, _, _ := e.live()
	e.resetCalls()
	networks := map[string]any{"default": manualNet("10.1.1.32"), "public": map[string]any{"type": "vip", "ip": snat}}
	e.call("create_vm", "agent-snat-2", stemcell, props, networks, []string{}, boshEnv).
		failed(t, "VMCreationFailed", "source NAT address")
	if after, _, _ := e.live(); after != vms || e.calls()["deployVirtualMachine"] != 0 {
		t.Fatalf("a refused vip left %d VMs (had %d), deploys sent: %d", after, vms, e.calls()["deployVirtualMachine"])
	}
}

func TestVMMetadataRebootAndCloudProperties(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	var result []json.RawMessage
	e.call("create_vm", "agent-3", stemcell, map[string]any{"compute_offering": "Small Instance"},
		map[string]any{"default": manualNet("10.1.1.40")}, []string{}, boshEnv).ok(t).decode(t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	meta := map[string]any{"director": "d", "deployment": "dep", "instance_group": "web", "index": "0",
		"name": "web/4f3c", "id": "4f3c", "long": strings.Repeat("v", 300)}
	e.call("set_vm_metadata", cid, meta).ok(t)
	meta["index"] = "1"
	e.call("set_vm_metadata", cid, meta).ok(t) // a changed value replaces the old one
	vm := e.vm(cid)
	tags := map[string]string{}
	for _, tag := range vm.Tags {
		tags[tag.Key] = tag.Value
	}
	if tags["index"] != "1" || tags["deployment"] != "dep" || len(tags["long"]) != 255 || vm.Displayname != "web_4f3c" {
		t.Fatalf("tags %v display name %q", tags, vm.Displayname)
	}
	e.call("reboot_vm", cid).ok(t)
	if e.vm(cid).State != "Running" {
		t.Fatal("not running after reboot")
	}
	e.call("set_vm_metadata", "0d6f3e4a-2222-4222-8222-222222222222", meta).failed(t, "VMNotFound", "not found")

	var props map[string]any
	e.call("calculate_vm_cloud_properties", map[string]any{"cpu": 1, "ram": 1000, "ephemeral_disk_size": 4096}).ok(t).decode(t, &props)
	if props["compute_offering"] != "Medium Instance" || props["ephemeral_disk_size"] != float64(4096) {
		t.Fatalf("calculate_vm_cloud_properties = %v", props)
	}
	e.call("calculate_vm_cloud_properties", map[string]any{"cpu": 8, "ram": 65536, "ephemeral_disk_size": 0}).ok(t).decode(t, &props)
	if props["cpu"] != float64(8) || props["ram"] != float64(65536) {
		t.Fatalf("a size no fixed offering has should use the customized one: %v", props)
	}
}

func TestFaultAtEachCreateVMCallLeavesNothingAndARetrySucceeds(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	networks := map[string]any{"default": manualNet("10.1.1.60"), "public": map[string]any{"type": "vip", "ip": "192.168.2.60"}}
	props := map[string]any{"compute_offering": "Small Instance", "ephemeral_disk_size": 1024,
		"ephemeral_disk_offering": "Custom", "affinity_group": "faulty"}
	e.resetCalls()
	var result []json.RawMessage
	e.call("create_vm", "agent-f", stemcell, props, networks, []string{}, boshEnv).ok(t).decode(t, &result)
	commands := e.calls()
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	e.call("delete_vm", cid).ok(t)
	for command := range commands {
		t.Run(command, func(t *testing.T) {
			defer e.clearFaults()
			// A new group each time, so createAffinityGroup is among the calls.
			props["affinity_group"] = "faulty-" + command
			if err := e.sim.Admin.AddFault(simulator.Fault{Command: command, ErrorCode: 530, ErrorText: "injected"}); err != nil {
				t.Fatal(err)
			}
			r := e.call("create_vm", "agent-f", stemcell, props, networks, []string{}, boshEnv)
			if r.Error == nil {
				// The CPI got past the fault (a lost answer to
				// createAffinityGroup is found by listing again).
				var got []json.RawMessage
				r.decode(t, &got)
				var id string
				_ = json.Unmarshal(got[0], &id)
				e.call("delete_vm", id).ok(t)
			}
			if vms, vols, ips := e.live(); vms+vols+ips != 0 {
				t.Fatalf("a fault in %s left %d VMs, %d data volumes, %d public IPs", command, vms, vols, ips)
			}
			var again []json.RawMessage
			e.call("create_vm", "agent-f", stemcell, props, networks, []string{}, boshEnv).ok(t).decode(t, &again)
			var id string
			_ = json.Unmarshal(again[0], &id)
			e.call("delete_vm", id).ok(t)
		})
	}
}

func TestAutoAntiAffinityKeyPairAndRootDisk(t *testing.T) {
	e := newEnv(t, func(cfg map[string]any) { section(cfg, "cloudstack")["auto_anti_affinity"] = true })
	stemcell := e.stemcell()
	c := e.client()
	key := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHvR1Ztl5nhsbxhF0Hm4sGbjYvPJw4M4X6tG0Sg9B0m4 bosh"
	if _, err := c.SSH.RegisterSSHKeyPair(c.SSH.NewRegisterSSHKeyPairParams("bosh-key", key)); err != nil {
		t.Fatal(err)
	}
	props := map[string]any{"compute_offering": "Small Instance", "keypair": "bosh-key", "root_disk_size": 10240}
	var result []json.RawMessage
	e.call("create_vm", "agent-k", stemcell, props, map[string]any{"default": manualNet("10.1.1.50")}, []string{},
		boshEnv).ok(t).decode(t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	vm := e.vm(cid)
	if len(vm.Affinitygroup) != 1 || vm.Affinitygroup[0].Name != "spec-director-spec-director-deployment-web" ||
		vm.Affinitygroup[0].Type != "host anti-affinity" {
		t.Fatalf("affinity groups %+v", vm.Affinitygroup)
	}
	if got := e.metadata(cid, "/latest/meta-data/public-keys"); !strings.Contains(got, "AAAAC3NzaC1lZDI1NTE5") {
		t.Fatalf("public-keys %q", got)
	}
	for _, v := range e.volumes() {
		if v.Virtualmachineid == cid && v.Type == "ROOT" && v.Size != 10<<30 {
			t.Fatalf("root disk %d bytes, want 10 GiB", v.Size)
		}
	}
}

func TestDeleteVMWithoutExpungePermission(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	var result []json.RawMessage
	e.call("create_vm", "agent-e", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.51")}, []string{},
		boshEnv).ok(t).decode(t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	err := e.sim.Admin.AddFault(noExpungeFault)
	if err != nil {
		t.Fatal(err)
	}
	r := e.call("delete_vm", cid).ok(t)
	if !strings.Contains(r.Stderr, "destroying without expunge") {
		t.Errorf("no warning about the fallback in the log:\n%s", r.Stderr)
	}
	if state := e.vm(cid).State; state != "Destroyed" {
		t.Fatalf("VM %s after the fallback", state)
	}
	var has bool
	e.call("has_vm", cid).ok(t).decode(t, &has)
	if has {
		t.Fatal("a Destroyed VM is gone for the director")
	}
	// A retry finds the VM Destroyed, and may not expunge it either
	// (UserVmManagerImpl.expungeVm's refusal): success, with a warning.
	if err := e.sim.Admin.AddFault(simulator.Fault{Command: "expungeVirtualMachine", ErrorCode: 530,
		ErrorText: "Expunging a vm can only be done by an Admin. Or when the allow.user.expunge.recover.vm key is set."}); err != nil {
		t.Fatal(err)
	}
	r = e.call("delete_vm", cid).ok(t)
	if !strings.Contains(r.Stderr, "may not expunge it") || !strings.Contains(r.Stderr, "expunge.delay") {
		t.Errorf("no warning that the destroyed VM keeps its addresses:\n%s", r.Stderr)
	}
}

// noExpungeFault is UserVmManagerImpl.destroyVm's refusal of expunge=true
// for an account that is not an admin while allow.user.expunge.recover.vm
// is false (its default): a PermissionDeniedException in the job, which
// ApiAsyncJobDispatcher reports as a 530.
var noExpungeFault = simulator.Fault{Command: "destroyVirtualMachine", ErrorCode: 530,
	ErrorText: "Parameter expunge can be passed by Admin only. Or when the allow.user.expunge.recover.vm key is set."}

// TestRecreateWithSameIPWithoutExpungePermission is BOSH's recreate (delete_vm,
// then create_vm with the same static IP) for an account that may not
// expunge: the Destroyed VM keeps its guest IP until CloudStack's expunge
// thread removes it (expunge.delay after the destroy), so create_vm fails
// until then, naming the VM that holds the address, and passes after.
func TestRecreateWithSameIPWithoutExpungePermission(t *testing.T) {
	e := newEnv(t, nil, "-expunge-interval", "1", "-expunge-delay", "2")
	stemcell := e.stemcell()
	networks := map[string]any{"default": manualNet("10.1.1.56")}
	var result []json.RawMessage
	e.call("create_vm", "agent-r", stemcell, smallVM, networks, []string{}, boshEnv).ok(t).decode(t, &result)
	var old string
	_ = json.Unmarshal(result[0], &old)
	if err := e.sim.Admin.AddFault(noExpungeFault); err != nil {
		t.Fatal(err)
	}
	e.call("delete_vm", old).ok(t)
	destroyed := time.Now()
	r := e.call("create_vm", "agent-r", stemcell, smallVM, networks, []string{}, boshEnv).failed(t, "VMCreationFailed",
		"static IP 10.1.1.56 on CloudStack network guest-network is still held by VM "+old)
	if !strings.Contains(r.Error.Message, "destroyed but not yet expunged") || !strings.Contains(r.Error.Message, "expunge.delay") ||
		r.Error.Retry {
		t.Fatalf("create_vm error %+v", r.Error)
	}
	for e.vmState(old) == "Destroyed" {
		if time.Since(destroyed) > 15*time.Second {
			t.Fatal("CloudStack's expunge thread did not expunge the destroyed VM")
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.call("create_vm", "agent-r", stemcell, smallVM, networks, []string{}, boshEnv).ok(t)
}

// vmState is the VM's state, "" once it is expunged.
func (e *env) vmState(id string) string {
	for _, vm := range e.vms() {
		if vm.Id == id {
			return vm.State
		}
	}
	return ""
}

// TestDeleteVMKeepsVolumesItDidNotCreate: only the ephemeral disk
// (deployVirtualMachine's DATA- volume) goes with the VM; a volume an
// operator or an earlier CPI attached survives.
func TestDeleteVMKeepsVolumesItDidNotCreate(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	var result []json.RawMessage
	e.call("create_vm", "agent-v", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.52")}, []string{},
		boshEnv).ok(t).decode(t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	c := e.client()
	offerings, err := c.DiskOffering.ListDiskOfferings(c.DiskOffering.NewListDiskOfferingsParams())
	if err != nil {
		t.Fatal(err)
	}
	var small string
	for _, o := range offerings.DiskOfferings {
		if o.Name == "Small" {
			small = o.Id
		}
	}
	p := c.Volume.NewCreateVolumeParams()
	p.SetName("volume-operators-data")
	p.SetDiskofferingid(small)
	p.SetZoneid(e.vm(cid).Zoneid)
	vol, err := c.Volume.CreateVolume(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Volume.AttachVolume(c.Volume.NewAttachVolumeParams(vol.Id, cid)); err != nil {
		t.Fatal(err)
	}
	var disks []string
	e.call("get_disks", cid).ok(t).decode(t, &disks)
	if len(disks) != 1 || disks[0] != vol.Id {
		t.Fatalf("get_disks = %v; want the attached volume %s and not the ephemeral disk", disks, vol.Id)
	}
	e.call("delete_vm", cid).ok(t)
	for _, v := range e.volumes() {
		if v.Id == vol.Id {
			return
		}
	}
	t.Fatal("delete_vm deleted a volume it did not create")
}

func TestDeleteVMExpungesAVMDestroyedByHand(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	var result []json.RawMessage
	props := map[string]any{"compute_offering": "Custom", "cpu": 2, "ram": 2048}
	e.call("create_vm", "agent-h", stemcell, props, map[string]any{"default": manualNet("10.1.1.53")}, []string{},
		boshEnv).ok(t).decode(t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	if vm := e.vm(cid); vm.Cpunumber != 2 || vm.Memory != 2048 {
		t.Fatalf("custom offering VM has %d CPUs, %d MiB", vm.Cpunumber, vm.Memory)
	}
	c := e.client()
	if _, err := c.VirtualMachine.DestroyVirtualMachine(c.VirtualMachine.NewDestroyVirtualMachineParams(cid)); err != nil {
		t.Fatal(err)
	}
	e.call("delete_vm", cid).ok(t)
	for _, vm := range e.vms() {
		if vm.Id == cid && vm.State == "Destroyed" {
			t.Fatal("delete_vm left a Destroyed VM holding its name and address")
		}
	}
	// Its address is free again.
	e.call("create_vm", "agent-h2", stemcell, props, map[string]any{"default": manualNet("10.1.1.53")}, []string{},
		boshEnv).ok(t)
}
