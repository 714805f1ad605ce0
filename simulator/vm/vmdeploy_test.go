package vm_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// vmEnv is simtesting's VM environment, for this package's own helpers on
// it: &vmEnv{simtesting.NewVMEnv(t, opts)}.
type vmEnv struct{ *simtesting.VMEnv }

var macPattern = regexp.MustCompile(`^02:00(:[0-9a-f]{2}){4}$`)

func TestDeployWithNetworkIDs(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	p := e.Params("cpivm-one")
	p.SetNetworkids([]string{e.Net})
	p.SetDisplayname("CPI VM one")
	p.SetGroup("bosh")
	vm := e.Deploy(t, p)
	if vm.State != "Running" || vm.Name != "cpivm-one" || vm.Displayname != "CPI VM one" || vm.Hostid == "" ||
		vm.Hypervisor != "XenServer" || vm.Serviceofferingname != "Small Instance" || vm.Cpunumber != 1 ||
		vm.Memory != 512 || vm.Templateid != e.Template || vm.Zoneid != e.Zone || vm.Group != "bosh" ||
		!regexp.MustCompile(`^i-2-\d+-VM$`).MatchString(vm.Instancename) {
		t.Fatalf("deployed VM = %+v", vm)
	}
	if len(vm.Nic) != 1 || !vm.Nic[0].Isdefault || vm.Nic[0].Networkid != e.Net || !macPattern.MatchString(vm.Nic[0].Macaddress) ||
		!netip.MustParsePrefix("10.1.1.0/24").Contains(netip.MustParseAddr(vm.Nic[0].Ipaddress)) ||
		vm.Nic[0].Ipaddress == "10.1.1.1" || vm.Nic[0].Gateway != "10.1.1.1" {
		t.Fatalf("NIC = %+v", vm.Nic)
	}
	listed := e.VM(t, vm.Id)
	if listed.State != "Running" || listed.Ipaddress != vm.Nic[0].Ipaddress || listed.Userdata != "" {
		t.Fatalf("listed VM = %+v", listed)
	}
	vols := e.Volumes(t, vm.Id)
	if len(vols) != 1 || vols[0].Type != "ROOT" || vols[0].Deviceid != 0 || vols[0].Size != 2<<30 ||
		vols[0].State != "Ready" || vols[0].Storage != "PS0" || vols[0].Path == "" || vols[0].Vmstate != "Running" {
		t.Fatalf("volumes = %+v", vols)
	}
}

// TestDeployWithoutNameUsesDefaultNetwork: no networks in an advanced zone
// means the account's isolated network; no name means VM-<uuid>.
func TestDeployWithoutNameUsesDefaultNetwork(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.Deploy(t, e.Params(""))
	if vm.Name != "VM-"+vm.Id || vm.Displayname != vm.Name || len(vm.Nic) != 1 || vm.Nic[0].Networkid != e.Net {
		t.Fatalf("VM = %+v", vm)
	}
}

func TestDeployWithIPToNetworkList(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	second := e.AddNetwork(t, "second-network", "10.1.2.0/24", "10.1.2.1")
	p := e.Params("cpivm-two-nics")
	p.SetIptonetworklist([]map[string]string{
		{"networkid": e.Net, "ip": "10.1.1.50"},
		{"networkid": second, "mac": "02:AA:BB:CC:DD:EE"},
	})
	vm := e.Deploy(t, p)
	if len(vm.Nic) != 2 || vm.Nic[0].Ipaddress != "10.1.1.50" || !vm.Nic[0].Isdefault || vm.Nic[1].Isdefault ||
		vm.Nic[1].Networkid != second || vm.Nic[1].Macaddress != "02:aa:bb:cc:dd:ee" || vm.Nic[1].Deviceid != "" ||
		!strings.HasPrefix(vm.Nic[1].Ipaddress, "10.1.2.") || vm.Ipaddress != "10.1.1.50" {
		t.Fatalf("NICs = %+v", vm.Nic)
	}
	// networkids and iptonetworklist together.
	p.SetName("cpivm-both")
	p.SetNetworkids([]string{e.Net})
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 431, "ipToNetworkMap can't be specified along with networkIds or ipAddress")
}

func TestDeployIPChecks(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	first := e.Params("cpivm-ip")
	first.SetIpaddress("10.1.1.20")
	if vm := e.Deploy(t, first); vm.Nic[0].Ipaddress != "10.1.1.20" {
		t.Fatalf("requested address not used: %+v", vm.Nic)
	}
	for _, ip := range []string{"10.1.1.20", "10.9.9.9", "10.1.1.1", "10.1.1.255"} {
		p := e.Params("cpivm-other")
		p.SetIpaddress(ip)
		_, err := e.CS.VirtualMachine.DeployVirtualMachine(p)
		simtesting.WantAPIError(t, err, 533, `Unable to acquire Guest IP address for network Network {"id": `)
	}
	p := e.Params("cpivm-other")
	p.SetIpaddress("10.1.1.300")
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 431, "Invalid specified IPv4 address 10.1.1.300")
	if l, _ := e.CS.VirtualMachine.ListVirtualMachines(e.CS.VirtualMachine.NewListVirtualMachinesParams()); l.Count != 1 {
		t.Fatalf("refused deployments left VMs: %d", l.Count)
	}
}

func TestDeployCustomOffering(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	p := e.CustomParams("cpivm-custom", 2, 2000, 3072)
	p.SetRootdisksize(20)
	vm := e.Deploy(t, p)
	if vm.Cpunumber != 2 || vm.Cpuspeed != 2000 || vm.Memory != 3072 || vm.Serviceofferingname != "Custom" ||
		vm.Details["cpuNumber"] != "2" || vm.Details["rootdisksize"] != "20" {
		t.Fatalf("custom VM = %+v", vm)
	}
	if vols := e.Volumes(t, vm.Id); len(vols) != 1 || vols[0].Size != 20<<30 {
		t.Fatalf("root volume = %+v", vols)
	}
	missing := e.Params("cpivm-nodetails")
	missing.SetServiceofferingid(e.Custom)
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(missing)
	simtesting.WantAPIError(t, err, 431, "Need to specify custom parameter values cpu, cpu speed and memory when using custom offering")
	noMem := e.Params("cpivm-nomem")
	noMem.SetServiceofferingid(e.Custom)
	noMem.SetDetails(map[string]string{"cpuNumber": "1", "cpuSpeed": "500"})
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(noMem)
	simtesting.WantAPIError(t, err, 431, "Invalid memory value, specify a value between 32 and 2147483647")
	small := e.Params("cpivm-smallroot")
	small.SetRootdisksize(1)
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(small)
	simtesting.WantAPIError(t, err, 431, "Unsupported: rootdisksize override (1 GB) is smaller than template size 2.00 GB")
}

func TestDeployWithDataDisk(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	p := e.Params("cpivm-data")
	p.SetDiskofferingid(e.DiskSmall)
	vm := e.Deploy(t, p)
	vols := e.Volumes(t, vm.Id)
	if len(vols) != 2 || vols[1].Type != "DATADISK" || vols[1].Deviceid != 1 || vols[1].Size != 5<<30 ||
		vols[1].Diskofferingid != e.DiskSmall || !strings.HasPrefix(vols[0].Name, "ROOT-") ||
		vols[1].Name != "DATA-"+strings.TrimPrefix(vols[0].Name, "ROOT-") {
		t.Fatalf("volumes = %+v", vols)
	}
	lp := e.CS.Volume.NewListVolumesParams()
	lp.SetType("DATADISK")
	if l, err := e.CS.Volume.ListVolumes(lp); err != nil || l.Count != 1 || l.Volumes[0].Virtualmachineid != vm.Id {
		t.Fatalf("listVolumes type=DATADISK = %+v, %v", l, err)
	}
	custom := e.Params("cpivm-customdata")
	custom.SetDiskofferingid(e.DiskCustom)
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(custom)
	simtesting.WantAPIError(t, err, 431, "This disk offering requires a custom size specified")
	custom.SetSize(50)
	vm2 := e.Deploy(t, custom)
	if vols := e.Volumes(t, vm2.Id); len(vols) != 2 || vols[1].Size != 50<<30 {
		t.Fatalf("custom data disk = %+v", vols)
	}
}

func TestDeployHostNameRules(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	const rule = `Invalid name. Vm name can contain ASCII letters 'a' through 'z', the digits '0' through '9', ` +
		`and the hyphen ('-'), must be between 1 and 63 characters long, and can't start or end with "-" and can't start with digit`
	for _, name := range []string{"1vm", "-vm", "vm-", "vm_1", "vm.example", strings.Repeat("a", 64)} {
		_, err := e.CS.VirtualMachine.DeployVirtualMachine(e.Params(name))
		simtesting.WantAPIError(t, err, 431, rule)
	}
	for _, name := range []string{"a", "CPI-vm-9", strings.Repeat("a", 63)} {
		if vm := e.Deploy(t, e.Params(name)); vm.Name != name {
			t.Fatalf("name %q became %q", name, vm.Name)
		}
	}
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(e.Params("CPI-vm-9"))
	simtesting.WantAPIError(t, err, 431, "The vm with hostName CPI-vm-9 already exists in the network domain: cs2cloud.internal; network=guest-network")
}

func TestDeployRefusals(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	p := e.Params("cpivm-key")
	p.SetKeypair("nosuchkey")
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 431, "Not all specified keypairs exist")

	p = e.Params("cpivm-ud")
	p.SetUserdata(strings.Repeat("QUFB", 8193)) // 32772 characters
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 431, "User data has exceeded configurable max length : 32768")
	p.SetUserdata("not base64!")
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 431, "User data is not base64 encoded")
	p.SetUserdata(strings.Repeat("QUFB", 8192)) // exactly 32768
	e.Deploy(t, p)

	p = e.Params("cpivm-sg")
	p.SetSecuritygroupnames([]string{"default"})
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 431, "Can't create vm with security groups; security group feature is not enabled per zone")

	p = e.Params("cpivm-ag")
	p.SetAffinitygroupnames([]string{"nosuchgroup"})
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantAPIError(t, err, 431, "Unable to find affinity group by name nosuchgroup")

	// A missing required parameter is caught before the handler.
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(&cloudstack.DeployVirtualMachineParams{})
	simtesting.WantAPIError(t, err, 431, "Unable to execute API command deployvirtualmachine due to missing parameter")
}

// TestDeployCapacityExhaustion fills every 4×8000 MHz / 8 GiB host.
func TestDeployCapacityExhaustion(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	hosts := map[string]bool{}
	n := e.hostCount(t)
	for i := 1; i <= n; i++ {
		vm := e.Deploy(t, e.CustomParams(fmt.Sprintf("big-%d", i), 4, 8000, 8192))
		hosts[vm.Hostid] = true
	}
	if len(hosts) != n {
		t.Fatalf("%d full-host VMs on %d hosts", n, len(hosts))
	}
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(e.CustomParams("one-more", 1, 500, 256))
	simtesting.WantJobError(t, err, 533, `Unable to create a deployment for VM instance {"id": "`)
	lp := e.CS.VirtualMachine.NewListVirtualMachinesParams()
	lp.SetName("one-more")
	l, _ := e.CS.VirtualMachine.ListVirtualMachines(lp)
	if l.Count != 1 || l.VirtualMachines[0].State != "Error" || len(l.VirtualMachines[0].Nic) != 0 {
		t.Fatalf("failed VM = %+v", l.VirtualMachines)
	}
	// A VM larger than any host never fits.
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(e.CustomParams("huge", 5, 100, 256))
	simtesting.WantJobError(t, err, 533, "Unable to create a deployment for VM instance")
	// Stopping one frees its host.
	if _, err := e.CS.VirtualMachine.StopVirtualMachine(e.CS.VirtualMachine.NewStopVirtualMachineParams(e.vmByName(t, "big-1").Id)); err != nil {
		t.Fatal(err)
	}
	e.Deploy(t, e.CustomParams("big-again", 4, 8000, 8192))
}

// hostCount is how many hosts the seeded zone has.
func (e *vmEnv) hostCount(t *testing.T) int {
	t.Helper()
	l, err := e.Raw.Host.ListHosts(e.Raw.Host.NewListHostsParams())
	if err != nil {
		t.Fatal(err)
	}
	return l.Count
}

func (e *vmEnv) vmByName(t *testing.T, name string) *cloudstack.VirtualMachine {
	t.Helper()
	p := e.CS.VirtualMachine.NewListVirtualMachinesParams()
	p.SetName(name)
	l, err := e.CS.VirtualMachine.ListVirtualMachines(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, vm := range l.VirtualMachines {
		if vm.Name == name {
			return vm
		}
	}
	t.Fatalf("no VM named %s", name)
	return nil
}

func TestDeployAntiAffinity(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	g, err := e.CS.AffinityGroup.CreateAffinityGroup(e.CS.AffinityGroup.NewCreateAffinityGroupParams("spread", "host anti-affinity"))
	if err != nil || g.Type != "host anti-affinity" {
		t.Fatalf("createAffinityGroup = %+v, %v", g, err)
	}
	hosts := map[string]bool{}
	n := e.hostCount(t)
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("member-%d", i)
		p := e.Params(name)
		p.SetAffinitygroupids([]string{g.Id})
		vm := e.Deploy(t, p)
		if len(vm.Affinitygroup) != 1 || vm.Affinitygroup[0].Name != "spread" {
			t.Fatalf("affinity groups of %s = %+v", name, vm.Affinitygroup)
		}
		hosts[vm.Hostid] = true
	}
	if len(hosts) != n {
		t.Fatalf("%d members on %d distinct hosts", n, len(hosts))
	}
	p := e.Params("one-host-too-many")
	p.SetAffinitygroupnames([]string{"spread"})
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantJobError(t, err, 533, "Please check the affinity groups provided, there may not be sufficient capacity to follow them")

	lp := e.CS.AffinityGroup.NewListAffinityGroupsParams()
	lp.SetName("spread")
	l, err := e.CS.AffinityGroup.ListAffinityGroups(lp)
	if err != nil || l.Count != 1 || len(l.AffinityGroups[0].VirtualmachineIds) != n+1 {
		t.Fatalf("listAffinityGroups = %+v, %v", l, err)
	}

	// Host affinity keeps members together.
	together, err := e.CS.AffinityGroup.CreateAffinityGroup(e.CS.AffinityGroup.NewCreateAffinityGroupParams("together", "host affinity"))
	if err != nil {
		t.Fatal(err)
	}
	var host string
	for _, name := range []string{"pair-1", "pair-2"} {
		p := e.Params(name)
		p.SetAffinitygroupids([]string{together.Id})
		vm := e.Deploy(t, p)
		if host != "" && vm.Hostid != host {
			t.Fatalf("host affinity members on %s and %s", host, vm.Hostid)
		}
		host = vm.Hostid
	}
}

// TestDeployFaultInJob: a job-stage fault leaves the VM in Error without
// host or addresses, so the address can be deployed again.
func TestDeployFaultInJob(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	simtesting.AddFault(t, e.Sim, kernel.Fault{Command: "deployVirtualMachine", ErrorCode: 530, ErrorText: "injected"})
	p := e.Params("cpivm-fault")
	p.SetIpaddress("10.1.1.77")
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(p)
	simtesting.WantJobError(t, err, 530, "injected")
	vm := e.vmByName(t, "cpivm-fault")
	if vm.State != "Error" || vm.Hostid != "" || len(vm.Nic) != 0 {
		t.Fatalf("VM after failed job = %+v", vm)
	}
	lp := e.CS.VirtualMachine.NewListVirtualMachinesParams()
	lp.SetState("Running")
	if l, _ := e.CS.VirtualMachine.ListVirtualMachines(lp); l.Count != 0 {
		t.Fatalf("running VMs after the failed deploy: %+v", l.VirtualMachines)
	}
	for _, v := range e.Volumes(t, vm.Id) {
		if v.State != "Destroy" {
			t.Fatalf("volume left %s", v.State)
		}
	}
	again := e.Params("cpivm-fault")
	again.SetIpaddress("10.1.1.77")
	if vm := e.Deploy(t, again); vm.Nic[0].Ipaddress != "10.1.1.77" {
		t.Fatalf("redeploy = %+v", vm.Nic)
	}
}

// TestDeployResultMatchesRecordedResponse compares the job result's VM keys
// with the deployVirtualMachine response cloudstack-go recorded.
func TestDeployResultMatchesRecordedResponse(t *testing.T) {
	dir := simtesting.ModuleDir(t, "github.com/apache/cloudstack-go/v2")
	b, err := os.ReadFile(filepath.Join(dir, "test", "testdata", "VirtualMachineService.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixtures map[string]map[string]map[string]any
	if err := json.Unmarshal(b, &fixtures); err != nil {
		t.Fatal(err)
	}
	recorded := fixtures["deployVirtualMachine"]["deployvirtualmachineresponse"]["jobresult"].(map[string]any)["virtualmachine"].(map[string]any)

	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	start, err := e.Raw.VirtualMachine.DeployVirtualMachine(e.Params("cpivm-keys"))
	if err != nil || start.JobID == "" || start.Id == "" {
		t.Fatalf("first answer = %+v, %v", start, err)
	}
	job := simtesting.QueryJob(t, e.Sim, start.JobID)
	if job["jobinstancetype"] != "VirtualMachine" || job["jobinstanceid"] != start.Id ||
		job["cmd"] != "org.apache.cloudstack.api.command.admin.vm.DeployVMCmdByAdmin" {
		t.Fatalf("job = %v", job)
	}
	got := job["jobresult"].(map[string]any)["virtualmachine"].(map[string]any)
	notYet := map[string]bool{"templatename": true, "templatedisplaytext": true, // MERGE: from the template table
		"jobid": true, "jobstatus": true}
	for key := range recorded {
		if _, ok := got[key]; !ok && !notYet[key] {
			t.Errorf("job result lacks %q", key)
		}
	}
	nic := got["nic"].([]any)[0].(map[string]any)
	for key := range recorded["nic"].([]any)[0].(map[string]any) {
		if _, ok := nic[key]; !ok {
			t.Errorf("NIC lacks %q", key)
		}
	}
}

func TestUserDataShownOnlyOnRequest(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	p := e.Params("cpivm-userdata")
	p.SetUserdata(base64.RawStdEncoding.EncodeToString([]byte("#!/bin/sh\necho hi\n"))) // no padding
	vm := e.Deploy(t, p)
	if vm.Userdata != "" {
		t.Fatalf("deploy result shows user data %q", vm.Userdata)
	}
	lp := e.CS.VirtualMachine.NewListVirtualMachinesParams()
	lp.SetId(vm.Id)
	lp.SetUserdata(true)
	l, err := e.CS.VirtualMachine.ListVirtualMachines(lp)
	if err != nil || l.VirtualMachines[0].Userdata != base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\necho hi\n")) {
		t.Fatalf("listVirtualMachines userdata=true = %+v, %v", l.VirtualMachines, err)
	}
}

// TestDeployConstrainedOffering: the seeded custom constrained offering
// (1-2 CPUs, 512-4096 MB, 1000 MHz) takes cpuNumber and memory within its
// limits and refuses a cpuSpeed, as validateCustomParameters does.
func TestDeployConstrainedOffering(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	e.Srv.Mu.Lock()
	cc := e.Srv.State.ServiceOfferings[3]
	e.Srv.Mu.Unlock()
	deploy := func(name string, details map[string]string) (*cloudstack.DeployVirtualMachineResponse, error) {
		p := e.Params(name)
		p.SetServiceofferingid(cc.ID)
		p.SetDetails(details)
		return e.CS.VirtualMachine.DeployVirtualMachine(p)
	}
	vm, err := deploy("cpivm-cc", map[string]string{"cpuNumber": "2", "memory": "512"})
	if err != nil || vm.Cpunumber != 2 || vm.Cpuspeed != 1000 || vm.Memory != 512 {
		t.Fatalf("constrained VM = %+v, %v", vm, err)
	}
	refusals := []struct {
		details map[string]string
		text    string
	}{
		{map[string]string{"cpuNumber": "2", "cpuSpeed": "2000", "memory": "1024"},
			"The cpu speed of this offering id:" + cc.ID + " is not customizable. This is predefined in the template."},
		{map[string]string{"cpuNumber": "3", "memory": "1024"}, "Invalid cpu cores value, specify a value between 1 and 2"},
		{map[string]string{"memory": "1024"}, "Invalid cpu cores value, specify a value between 1 and 2"},
		{map[string]string{"cpuNumber": "2", "memory": "4097"}, "Invalid memory value, specify a value between 512 and 4096"},
		{map[string]string{"cpuNumber": "2", "memory": "256"}, "Invalid memory value, specify a value between 512 and 4096"},
	}
	for i, r := range refusals {
		_, err := deploy(fmt.Sprintf("cpivm-refused-%d", i), r.details)
		simtesting.WantAPIError(t, err, 431, r.text)
	}
	fixed := e.Params("cpivm-fixed-speed")
	fixed.SetDetails(map[string]string{"cpuSpeed": "100"})
	if vm, err := e.CS.VirtualMachine.DeployVirtualMachine(fixed); err != nil || vm.Cpuspeed != 500 {
		t.Fatalf("a fixed offering takes no custom parameters into account: %+v, %v", vm, err)
	}
	if l, _ := e.CS.VirtualMachine.ListVirtualMachines(e.CS.VirtualMachine.NewListVirtualMachinesParams()); l.Count != 2 {
		t.Fatalf("refused deployments left VMs: %d", l.Count)
	}
}
