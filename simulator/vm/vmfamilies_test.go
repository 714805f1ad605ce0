package vm_test

import (
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

func TestTags(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.Deploy(t, e.Params("cpivm-tags"))
	tags := map[string]string{"director": "bosh-1", "deployment": "cf"}
	if _, err := e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{vm.Id}, "UserVm", tags)); err != nil {
		t.Fatal(err)
	}
	listed := e.VM(t, vm.Id)
	if len(listed.Tags) != 2 || listed.Tags[0].Key != "deployment" || listed.Tags[0].Resourcetype != "UserVm" ||
		listed.Tags[0].Resourceid != vm.Id || listed.Tags[0].Account != "admin" {
		t.Fatalf("VM tags = %+v", listed.Tags)
	}
	// A key already on the resource fails the job; nothing of it is created.
	_, err := e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{vm.Id}, "uservm",
		map[string]string{"Director": "other", "new": "x"}))
	simtesting.WantJobError(t, err, 530, "tag Director already on UserVm with id "+vm.Id)
	_, err = e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{vm.Id}, "UserVm",
		map[string]string{"long": strings.Repeat("v", 256)}))
	simtesting.WantJobError(t, err, 431, "can't be longer than 255 characters")
	_, err = e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{"1b7ab5e4-0000-4000-8000-000000000000"}, "UserVm", tags))
	simtesting.WantJobError(t, err, 431, "Unable to find resource by uuid 1b7ab5e4-0000-4000-8000-000000000000 and type UserVm")
	_, err = e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{vm.Id}, "Gadget", tags))
	simtesting.WantJobError(t, err, 431, "Invalid resource type Gadget")

	lt := e.CS.Resourcetags.NewListTagsParams()
	lt.SetResourceid(vm.Id)
	if l, err := e.CS.Resourcetags.ListTags(lt); err != nil || l.Count != 2 {
		t.Fatalf("listTags = %+v, %v", l, err)
	}
	lp := e.CS.VirtualMachine.NewListVirtualMachinesParams()
	lp.SetTags(map[string]string{"director": "bosh-1"})
	if l, err := e.CS.VirtualMachine.ListVirtualMachines(lp); err != nil || l.Count != 1 {
		t.Fatalf("listVirtualMachines tags = %+v, %v", l, err)
	}

	// Volumes take tags too.
	root := e.Volumes(t, vm.Id)[0]
	if _, err := e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{root.Id}, "Volume", tags)); err != nil {
		t.Fatal(err)
	}
	if v := e.Volumes(t, vm.Id)[0]; len(v.Tags) != 2 {
		t.Fatalf("volume tags = %+v", v.Tags)
	}

	// deleteTags with a value deletes only that pair; without tags, all.
	dp := e.CS.Resourcetags.NewDeleteTagsParams([]string{vm.Id}, "UserVm")
	dp.SetTags(map[string]string{"director": "not-this-value"})
	_, err = e.CS.Resourcetags.DeleteTags(dp)
	simtesting.WantJobError(t, err, 530, "Failed to delete tags")
	dp.SetTags(map[string]string{"director": "bosh-1"})
	if _, err := e.CS.Resourcetags.DeleteTags(dp); err != nil {
		t.Fatal(err)
	}
	if l := e.VM(t, vm.Id); len(l.Tags) != 1 || l.Tags[0].Key != "deployment" {
		t.Fatalf("tags after deleting one = %+v", l.Tags)
	}
	if _, err := e.CS.Resourcetags.DeleteTags(e.CS.Resourcetags.NewDeleteTagsParams([]string{vm.Id}, "UserVm")); err != nil {
		t.Fatal(err)
	}
	if l := e.VM(t, vm.Id); len(l.Tags) != 0 {
		t.Fatalf("tags after deleting all = %+v", l.Tags)
	}
}

func TestAffinityGroups(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	types, err := e.CS.AffinityGroup.ListAffinityGroupTypes(e.CS.AffinityGroup.NewListAffinityGroupTypesParams())
	if err != nil || types.Count != 2 || types.AffinityGroupTypes[0].Type != "host anti-affinity" {
		t.Fatalf("listAffinityGroupTypes = %+v, %v", types, err)
	}
	p := e.CS.AffinityGroup.NewCreateAffinityGroupParams("bosh-ag", "host anti-affinity")
	p.SetDescription("spread the instances")
	g, err := e.CS.AffinityGroup.CreateAffinityGroup(p)
	if err != nil || g.Name != "bosh-ag" || g.Description != "spread the instances" || g.Account != "admin" {
		t.Fatalf("createAffinityGroup = %+v, %v", g, err)
	}
	_, err = e.CS.AffinityGroup.CreateAffinityGroup(e.CS.AffinityGroup.NewCreateAffinityGroupParams("BOSH-ag", "host affinity"))
	simtesting.WantAPIError(t, err, 431, "Unable to create affinity group, a group with name BOSH-ag already exists.")
	_, err = e.CS.AffinityGroup.CreateAffinityGroup(e.CS.AffinityGroup.NewCreateAffinityGroupParams("x", "rack anti-affinity"))
	simtesting.WantAPIError(t, err, 431, "Unable to create affinity group, invalid affinity group type: rack anti-affinity")

	vp := e.Params("cpivm-ag")
	vp.SetAffinitygroupnames([]string{"bosh-ag"})
	vm := e.Deploy(t, vp)
	lp := e.CS.AffinityGroup.NewListAffinityGroupsParams()
	lp.SetVirtualmachineid(vm.Id)
	if l, err := e.CS.AffinityGroup.ListAffinityGroups(lp); err != nil || l.Count != 1 || l.AffinityGroups[0].Id != g.Id {
		t.Fatalf("listAffinityGroups virtualmachineid = %+v, %v", l, err)
	}
	dp := e.CS.AffinityGroup.NewDeleteAffinityGroupParams()
	dp.SetName("bosh-ag")
	if _, err := e.CS.AffinityGroup.DeleteAffinityGroup(dp); err != nil {
		t.Fatal(err)
	}
	if l, _ := e.CS.AffinityGroup.ListAffinityGroups(e.CS.AffinityGroup.NewListAffinityGroupsParams()); l.Count != 0 {
		t.Fatalf("groups after delete: %+v", l.AffinityGroups)
	}
	if v := e.VM(t, vm.Id); len(v.Affinitygroup) != 0 {
		t.Fatalf("VM still in deleted group: %+v", v.Affinitygroup)
	}
	_, err = e.CS.AffinityGroup.DeleteAffinityGroup(dp)
	simtesting.WantJobError(t, err, 431, "Unable to find affinity group bosh-ag")
}

func TestSSHKeyPairs(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	created, err := e.CS.SSH.CreateSSHKeyPair(e.CS.SSH.NewCreateSSHKeyPairParams("bosh-key"))
	if err != nil || !strings.HasPrefix(created.Privatekey, "-----BEGIN RSA PRIVATE KEY-----\n") ||
		len(strings.Split(created.Fingerprint, ":")) != 16 || created.Id == "" {
		t.Fatalf("createSSHKeyPair = %+v, %v", created, err)
	}
	_, err = e.CS.SSH.CreateSSHKeyPair(e.CS.SSH.NewCreateSSHKeyPairParams("bosh-key"))
	simtesting.WantAPIError(t, err, 431, "A key pair with name 'bosh-key' already exists.")

	blob := []byte("\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + strings.Repeat("k", 32))
	pub := "ssh-ed25519 " + base64.StdEncoding.EncodeToString(blob) + " operator@example"
	reg, err := e.CS.SSH.RegisterSSHKeyPair(e.CS.SSH.NewRegisterSSHKeyPairParams("operator", pub))
	sum := md5.Sum(blob)
	if err != nil || reg.Fingerprint[:5] != fmt.Sprintf("%02x:%02x", sum[0], sum[1]) {
		t.Fatalf("registerSSHKeyPair = %+v, %v", reg, err)
	}
	_, err = e.CS.SSH.RegisterSSHKeyPair(e.CS.SSH.NewRegisterSSHKeyPairParams("again", pub))
	simtesting.WantAPIError(t, err, 431, "already exists for this account.")
	_, err = e.CS.SSH.RegisterSSHKeyPair(e.CS.SSH.NewRegisterSSHKeyPairParams("bad", "not a key"))
	simtesting.WantAPIError(t, err, 431, "Public key is invalid")

	lp := e.CS.SSH.NewListSSHKeyPairsParams()
	lp.SetName("operator")
	if l, err := e.CS.SSH.ListSSHKeyPairs(lp); err != nil || l.Count != 1 || l.SSHKeyPairs[0].Fingerprint != reg.Fingerprint {
		t.Fatalf("listSSHKeyPairs name = %+v, %v", l, err)
	}
	lp.SetName("oper") // names match exactly
	if l, _ := e.CS.SSH.ListSSHKeyPairs(lp); l.Count != 0 {
		t.Fatalf("name is not an exact match")
	}

	vp := e.Params("cpivm-keyed")
	vp.SetKeypair("operator")
	vm := e.Deploy(t, vp)
	if vm.Keypairs != "operator" {
		t.Fatalf("keypairs = %q", vm.Keypairs)
	}
	if _, err := e.CS.SSH.DeleteSSHKeyPair(e.CS.SSH.NewDeleteSSHKeyPairParams("operator")); err != nil {
		t.Fatal(err)
	}
	_, err = e.CS.SSH.DeleteSSHKeyPair(e.CS.SSH.NewDeleteSSHKeyPairParams("operator"))
	simtesting.WantAPIError(t, err, 431, "A key pair with name 'operator' does not exist for account admin in specified domain id")
	// The VM keeps the key it was deployed with.
	if got := e.metadataGet(t, vm.Id, "latest/meta-data/public-keys"); got != "ssh-ed25519 "+base64.StdEncoding.EncodeToString(blob) {
		t.Fatalf("public-keys = %q", got)
	}
}

func TestSecurityGroups(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	l, err := e.CS.SecurityGroup.ListSecurityGroups(e.CS.SecurityGroup.NewListSecurityGroupsParams())
	if err != nil || l.Count != 1 || l.SecurityGroups[0].Name != "default" {
		t.Fatalf("listSecurityGroups = %+v, %v", l, err)
	}
	g, err := e.CS.SecurityGroup.CreateSecurityGroup(e.CS.SecurityGroup.NewCreateSecurityGroupParams("web"))
	if err != nil || g.Name != "web" {
		t.Fatalf("createSecurityGroup = %+v, %v", g, err)
	}
	_, err = e.CS.SecurityGroup.CreateSecurityGroup(e.CS.SecurityGroup.NewCreateSecurityGroupParams("default"))
	simtesting.WantAPIError(t, err, 431, "Unable to create security group, a group with name default already exists.")
	p := e.Params("cpivm-sg")
	p.SetSecuritygroupids([]string{g.Id})
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 431, "Can't create vm with security groups; security group feature is not enabled per zone")
}

func TestPublicIPsAndStaticNAT(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	ips := e.PublicIPs(t, nil)
	if len(ips) != 1 || !ips[0].Issourcenat || ips[0].Ipaddress != "192.168.2.2" || ips[0].Associatednetworkid != e.Net ||
		ips[0].State != "Allocated" || ips[0].Vlanname != "vlan://50" {
		t.Fatalf("source NAT = %+v", ips)
	}
	all := e.CS.Address.NewListPublicIpAddressesParams()
	all.SetAllocatedonly(false)
	all.SetPagesize(-1)
	if got := len(e.PublicIPs(t, all)); got != 199 {
		t.Fatalf("public range has %d addresses, want 199", got)
	}

	ap := e.CS.Address.NewAssociateIpAddressParams()
	ap.SetNetworkid(e.Net)
	ip, err := e.CS.Address.AssociateIpAddress(ap)
	if err != nil || ip.Ipaddress != "192.168.2.3" || ip.State != "Allocated" || ip.Associatednetworkid != e.Net || ip.Issourcenat {
		t.Fatalf("associateIpAddress = %+v, %v", ip, err)
	}
	byZone := e.CS.Address.NewAssociateIpAddressParams()
	byZone.SetZoneid(e.Zone)
	byZone.SetIpaddress("192.168.2.100")
	ip2, err := e.CS.Address.AssociateIpAddress(byZone)
	if err != nil || ip2.Ipaddress != "192.168.2.100" || ip2.Associatednetworkid != e.Net {
		t.Fatalf("associateIpAddress zoneid ipaddress = %+v, %v", ip2, err)
	}
	_, err = e.CS.Address.AssociateIpAddress(byZone)
	simtesting.WantAPIError(t, err, 533, "Insufficient address capacity")
	_, err = e.CS.Address.AssociateIpAddress(e.CS.Address.NewAssociateIpAddressParams())
	simtesting.WantAPIError(t, err, 431, "Unable to figure out zone to assign IP to. Please specify either zoneId, or networkId, or vpcId in the call")

	vm1 := e.Deploy(t, e.Params("cpivm-nat1"))
	vm2 := e.Deploy(t, e.Params("cpivm-nat2"))
	if _, err := e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(ip.Id, vm1.Id)); err != nil {
		t.Fatal(err)
	}
	if v := e.VM(t, vm1.Id); v.Publicip != "192.168.2.3" || v.Publicipid != ip.Id {
		t.Fatalf("VM public IP = %q %q", v.Publicip, v.Publicipid)
	}
	_, err = e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(ip.Id, vm2.Id))
	simtesting.WantAPIError(t, err, 537, "Failed to enable static for the ip address Ip[192.168.2.3-1] and vm id=")
	_, err = e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(ip2.Id, vm1.Id))
	simtesting.WantAPIError(t, err, 431, "is already associated with another public ip 192.168.2.3")
	_, err = e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(ips[0].Id, vm2.Id))
	simtesting.WantAPIError(t, err, 431, "Can't enable static, ip address Ip[192.168.2.2-1] is a sourceNat ip address")

	nat := e.CS.Address.NewListPublicIpAddressesParams()
	nat.SetIsstaticnat(true)
	if l := e.PublicIPs(t, nat); len(l) != 1 || l[0].Virtualmachineid != vm1.Id || l[0].Vmipaddress != vm1.Nic[0].Ipaddress {
		t.Fatalf("static NAT addresses = %+v", l)
	}
	if _, err := e.CS.NAT.DisableStaticNat(e.CS.NAT.NewDisableStaticNatParams(ip.Id)); err != nil {
		t.Fatal(err)
	}
	_, err = e.CS.NAT.DisableStaticNat(e.CS.NAT.NewDisableStaticNatParams(ip.Id))
	simtesting.WantJobError(t, err, 431, "Specified IP address id is not associated with any vm Id")
	if _, err := e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(ip.Id, vm2.Id)); err != nil {
		t.Fatal(err)
	}
	// Disassociating releases the address, static NAT and all.
	if _, err := e.CS.Address.DisassociateIpAddress(e.CS.Address.NewDisassociateIpAddressParams(ip.Id)); err != nil {
		t.Fatal(err)
	}
	if v := e.VM(t, vm2.Id); v.Publicip != "" {
		t.Fatalf("VM keeps a released address: %s", v.Publicip)
	}
	_, err = e.CS.Address.DisassociateIpAddress(e.CS.Address.NewDisassociateIpAddressParams(ips[0].Id))
	simtesting.WantJobError(t, err, 530, "ip address is used for source nat purposes and can not be disassociated.")
	if got := len(e.PublicIPs(t, nil)); got != 2 {
		t.Fatalf("%d allocated addresses, want source NAT and 192.168.2.100", got)
	}
}

func (e *vmEnv) metadataGet(t *testing.T, vmID, path string) string {
	t.Helper()
	body, status := e.MetadataFetch(t, vmID, path)
	if status != http.StatusOK {
		t.Fatalf("GET metadata %s: %d %s", path, status, body)
	}
	return body
}

func TestMetadataService(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	userData := "#cloud-config\nhostname: bosh\n"
	p := e.Params("cpivm-meta")
	p.SetUserdata(base64.StdEncoding.EncodeToString([]byte(userData)))
	vm := e.Deploy(t, p)
	if got := e.metadataGet(t, vm.Id, "latest/user-data"); got != userData {
		t.Fatalf("user-data = %q", got)
	}
	index := e.metadataGet(t, vm.Id, "latest/meta-data/")
	if index != "service-offering\navailability-zone\nlocal-hostname\nlocal-ipv4\npublic-ipv4\ninstance-id\nvm-id\ncloud-identifier\n" {
		t.Fatalf("meta-data index = %q", index)
	}
	for path, want := range map[string]string{
		"latest/meta-data/instance-id":       vm.Id,
		"latest/meta-data/vm-id":             vm.Id,
		"latest/meta-data/local-ipv4":        vm.Nic[0].Ipaddress,
		"latest/meta-data/public-ipv4":       vm.Nic[0].Ipaddress,
		"latest/meta-data/local-hostname":    "cpivm-meta",
		"latest/meta-data/service-offering":  "Small Instance",
		"latest/meta-data/availability-zone": "Sandbox-simulator",
	} {
		if got := e.metadataGet(t, vm.Id, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	ap := e.CS.Address.NewAssociateIpAddressParams()
	ap.SetNetworkid(e.Net)
	ip, err := e.CS.Address.AssociateIpAddress(ap)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(ip.Id, vm.Id)); err != nil {
		t.Fatal(err)
	}
	if got := e.metadataGet(t, vm.Id, "latest/meta-data/public-ipv4"); got != ip.Ipaddress {
		t.Fatalf("public-ipv4 with static NAT = %q", got)
	}
	other := e.Deploy(t, e.Params("cpivm-nodata"))
	for _, path := range []string{"latest/user-data", "latest/meta-data/public-keys", "latest/meta-data/nonsense"} {
		if _, status := e.MetadataFetch(t, other.Id, path); status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, status)
		}
	}
	if _, status := e.MetadataFetch(t, "6f1c7d2e-0000-4000-8000-000000000000", "latest/meta-data/"); status != http.StatusNotFound {
		t.Errorf("unknown VM: %d", status)
	}
}

// TestVMCommandsGoThroughFaultsAndLog: the new commands use the common
// pipeline, so request-stage faults and the request log apply to them.
func TestVMCommandsGoThroughFaultsAndLog(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	simtesting.AddFault(t, e.Sim, kernel.Fault{Command: "listVolumes", ErrorCode: 530, ErrorText: "volumes down"})
	_, err := e.CS.Volume.ListVolumes(e.CS.Volume.NewListVolumesParams())
	simtesting.WantAPIError(t, err, 530, "volumes down")
	simtesting.AddFault(t, e.Sim, kernel.Fault{Command: "deployVirtualMachine", ErrorCode: 533, Stage: kernel.StageRequest})
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(e.Params("cpivm-req"))
	simtesting.WantAPIError(t, err, 533, kernel.DefaultErrorText)
	p := e.Params("cpivm-logged")
	p.SetUserdata("c2VjcmV0")
	e.Deploy(t, p)
	reqs, err := e.Admin.Requests()
	if err != nil {
		t.Fatal(err)
	}
	var seen bool
	for _, r := range reqs {
		if r.Command == "deployVirtualMachine" && r.Status == 200 {
			seen = true
			if r.Params["userdata"] != kernel.Redacted || r.JobID == "" {
				t.Fatalf("logged deploy = %+v", r)
			}
		}
	}
	if !seen {
		t.Fatal("deployVirtualMachine not logged")
	}
}

// TestVMFamiliesSurviveRestart: the new tables are part of the state file.
func TestVMFamiliesSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{StatePath: path})}
	if _, err := e.CS.SSH.CreateSSHKeyPair(e.CS.SSH.NewCreateSSHKeyPairParams("persisted")); err != nil {
		t.Fatal(err)
	}
	p := e.Params("cpivm-persist")
	p.SetDiskofferingid(e.DiskSmall)
	p.SetKeypair("persisted")
	vm := e.Deploy(t, p)
	if _, err := e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{vm.Id}, "UserVm",
		map[string]string{"k": "v"})); err != nil {
		t.Fatal(err)
	}
	ap := e.CS.Address.NewAssociateIpAddressParams()
	ap.SetNetworkid(e.Net)
	ip, err := e.CS.Address.AssociateIpAddress(ap)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(ip.Id, vm.Id)); err != nil {
		t.Fatal(err)
	}
	e.Stop()

	e2 := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{StatePath: path})}
	got := e2.VM(t, vm.Id)
	if got.State != "Running" || len(got.Tags) != 1 || got.Publicip != ip.Ipaddress || got.Keypairs != "persisted" {
		t.Fatalf("VM after restart = %+v", got)
	}
	if vols := e2.Volumes(t, vm.Id); len(vols) != 2 {
		t.Fatalf("volumes after restart = %+v", vols)
	}
	if l, _ := e2.CS.SSH.ListSSHKeyPairs(e2.CS.SSH.NewListSSHKeyPairsParams()); l.Count != 1 {
		t.Fatalf("key pairs after restart: %d", l.Count)
	}
	if got := len(e2.PublicIPs(t, nil)); got != 2 {
		t.Fatalf("%d allocated addresses after restart", got)
	}
	_, err = e2.CS.VirtualMachine.DeployVirtualMachine(e2.Params("cpivm-persist"))
	simtesting.WantAPIError(t, err, 431, "The vm with hostName cpivm-persist already exists")
}

// TestConcurrentDeploys races deployments against each other; run with
// -race. Every VM gets its own address and the hosts are never overfilled.
func TestConcurrentDeploys(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{JobLatency: time.Millisecond})}
	// Each host takes two 2×8000 MHz VMs: six more racers than fit.
	fit := 2 * e.hostCount(t)
	racers := fit + 6
	var wg sync.WaitGroup
	errs := make(chan error, racers)
	for i := 0; i < racers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cs := cloudstack.NewClient(e.API, simtesting.Key, simtesting.Secret, false)
			p := cs.VirtualMachine.NewDeployVirtualMachineParams(e.Custom, e.Template, e.Zone)
			p.SetName(fmt.Sprintf("racer-%d", i))
			p.SetDetails(map[string]string{"cpuNumber": "2", "cpuSpeed": "8000", "memory": "2048"})
			r, err := cs.VirtualMachine.DeployVirtualMachine(p)
			for err == nil {
				j, qerr := cs.Asyncjob.QueryAsyncJobResult(cs.Asyncjob.NewQueryAsyncJobResultParams(r.JobID))
				switch {
				case qerr != nil:
					err = qerr
				case j.Jobstatus == 2:
					err = fmt.Errorf("job failed: %s", j.Jobresult)
				case j.Jobstatus == 1:
					errs <- nil
					return
				}
				time.Sleep(time.Millisecond)
			}
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed != 6 {
		t.Fatalf("%d deployments failed, want 6", failed)
	}
	lp := e.CS.VirtualMachine.NewListVirtualMachinesParams()
	lp.SetState("Running")
	l, _ := e.CS.VirtualMachine.ListVirtualMachines(lp)
	seen := map[string]bool{}
	for _, vm := range l.VirtualMachines {
		if seen[vm.Ipaddress] {
			t.Fatalf("address %s given twice", vm.Ipaddress)
		}
		seen[vm.Ipaddress] = true
	}
	if l.Count != fit {
		t.Fatalf("%d running VMs, want %d", l.Count, fit)
	}
}
