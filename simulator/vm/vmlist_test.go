package vm_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// TestListVirtualMachinesFiltersAsSearchForUserVMIdsAndCount checks the
// filters of QueryManagerImpl.searchForUserVMIdsAndCount through
// cloudstack-go: keyword (names LIKE, state EQ, the NICs' addresses, the
// instance name for a root admin), the any-pair tag join, and the refusals.
func TestListVirtualMachinesFiltersAsSearchForUserVMIdsAndCount(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	alpha := e.Deploy(t, e.Params("alpha"))
	beta := e.Deploy(t, e.Params("beta"))
	list := func(set func(p *cloudstack.ListVirtualMachinesParams)) (*cloudstack.ListVirtualMachinesResponse, error) {
		p := e.CS.VirtualMachine.NewListVirtualMachinesParams()
		set(p)
		return e.CS.VirtualMachine.ListVirtualMachines(p)
	}
	count := func(what string, want int, set func(p *cloudstack.ListVirtualMachinesParams)) {
		t.Helper()
		l, err := list(set)
		if err != nil || l.Count != want {
			t.Fatalf("%s: %+v, %v; want %d VMs", what, l, err, want)
		}
	}
	// Addresses are picked at random and keyword is LIKE %keyword%: beta's
	// 10.1.1.2 also finds alpha's 10.1.1.23.
	sameStart := 1
	if strings.Contains(alpha.Nic[0].Ipaddress, beta.Nic[0].Ipaddress) {
		sameStart = 2
	}
	count("keyword=<beta's address>", sameStart, func(p *cloudstack.ListVirtualMachinesParams) { p.SetKeyword(beta.Nic[0].Ipaddress) })
	count("keyword=Run (state is EQ)", 0, func(p *cloudstack.ListVirtualMachinesParams) { p.SetKeyword("Run") })
	count("keyword=running", 2, func(p *cloudstack.ListVirtualMachinesParams) { p.SetKeyword("running") })
	count("keyword=<instance name>", 1, func(p *cloudstack.ListVirtualMachinesParams) { p.SetKeyword(alpha.Instancename) })
	count("name=alph (EQ)", 0, func(p *cloudstack.ListVirtualMachinesParams) { p.SetName("alph") })
	count("name=ALPHA", 1, func(p *cloudstack.ListVirtualMachinesParams) { p.SetName("ALPHA") })

	for id, tags := range map[string]map[string]string{alpha.Id: {"role": "a"}, beta.Id: {"tier": "b"}} {
		if _, err := e.CS.Resourcetags.CreateTags(e.CS.Resourcetags.NewCreateTagsParams([]string{id}, "UserVm", tags)); err != nil {
			t.Fatal(err)
		}
	}
	count("tags role=a or tier=b", 2, func(p *cloudstack.ListVirtualMachinesParams) {
		p.SetTags(map[string]string{"role": "a", "tier": "b"})
	})
	count("tags role=a, other=x", 1, func(p *cloudstack.ListVirtualMachinesParams) {
		p.SetTags(map[string]string{"role": "a", "other": "x"})
	})

	_, err := list(func(p *cloudstack.ListVirtualMachinesParams) { p.SetHypervisor("Xen") })
	simtesting.WantAPIError(t, err, 431, "Invalid HypervisorType Xen")
	_, err = list(func(p *cloudstack.ListVirtualMachinesParams) { p.SetId(alpha.Id); p.SetIds([]string{beta.Id}) })
	simtesting.WantAPIError(t, err, 431, "Specify either id or ids but not both parameters")
}

// TestDeployMACsAndIPToNetworkMapAsBaseDeployVMCmd checks
// BaseDeployVMCmd.getMacAddress (NetUtils.isValidMac, isUnicastMac,
// standardizeMacAddress) and getIpToNetworkMap's one entry per network.
func TestDeployMACsAndIPToNetworkMapAsBaseDeployVMCmd(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	for i, c := range []struct{ mac, want string }{
		{"2:0:0:a:b:c", "02:00:00:0a:0b:0c"},
		{"02.00.00.00.00.0D", "02:00:00:00:00:0d"},
		{"02-00-00-00-01-0e", "02:00:00:00:01:0e"},
	} {
		p := e.Params(fmt.Sprintf("mac-%d", i))
		p.SetMacaddress(c.mac)
		// Fixed addresses: a random one could take 10.1.1.61, which the
		// last deploy asks for.
		p.SetIpaddress(fmt.Sprintf("10.1.1.%d", 50+i))
		if vm := e.Deploy(t, p); vm.Nic[0].Macaddress != c.want {
			t.Fatalf("macaddress=%s: NIC MAC %s, want %s", c.mac, vm.Nic[0].Macaddress, c.want)
		}
	}
	for _, c := range []struct{ mac, text string }{
		{"0200.0000.0001", "Mac address is not valid: 0200.0000.0001"},
		{"02:00-00:00:00:01", "Mac address is not valid: 02:00-00:00:00:01"},
		{"02:00:00:00:001:01", "Mac address is not valid: 02:00:00:00:001:01"},
		{"01:00:5e:00:00:01", "Mac address is not unicast: 01:00:5e:00:00:01"},
	} {
		p := e.Params("mac-bad")
		p.SetMacaddress(c.mac)
		_, err := e.CS.VirtualMachine.DeployVirtualMachine(p)
		simtesting.WantAPIError(t, err, 431, c.text)
	}
	p := e.Params("twice")
	p.SetIptonetworklist([]map[string]string{{"networkid": e.Net, "ip": "10.1.1.60"}, {"networkid": e.Net, "ip": "10.1.1.61"}})
	if vm := e.Deploy(t, p); len(vm.Nic) != 1 || vm.Nic[0].Ipaddress != "10.1.1.61" {
		t.Fatalf("a network named twice in iptonetworklist: NICs %+v, want one with 10.1.1.61", vm.Nic)
	}
}

// TestDeployRefusesTemplatesNotReadyInTheZone checks the template checks of
// deployVirtualMachine's create phase: no copy in the zone is 431 (
// UserVmManagerImpl), a copy not DOWNLOADED is 530
// (TemplateManagerImpl.getTemplateSize).
func TestDeployRefusesTemplatesNotReadyInTheZone(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	e.Srv.Mu.Lock()
	tmpl, _ := model.ByID(e.Srv.State.Templates, e.Template)
	cp := tmpl.CopyIn(e.Zone)
	internal, zoneInternal := tmpl.InternalID, e.Srv.State.Zone(e.Zone).InternalID
	cp.DownloadState = "DOWNLOAD_IN_PROGRESS"
	e.Srv.Mu.Unlock()
	_, err := e.CS.VirtualMachine.DeployVirtualMachine(e.Params("not-ready"))
	simtesting.WantAPIError(t, err, 530, fmt.Sprintf("Template %d has not been completely downloaded to zone %d", internal, zoneInternal))

	e.Srv.Mu.Lock()
	now := time.Now()
	cp.Removed = &now
	e.Srv.Mu.Unlock()
	_, err = e.CS.VirtualMachine.DeployVirtualMachine(e.Params("not-in-zone"))
	simtesting.WantAPIError(t, err, 431, fmt.Sprintf("The template %d is not available for use", internal))
}

// TestDeployOnARequestedHostIgnoresAffinity: planDeployment's specified-host
// branch returns before the affinity processors run.
func TestDeployOnARequestedHostIgnoresAffinity(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	g, err := e.CS.AffinityGroup.CreateAffinityGroup(e.CS.AffinityGroup.NewCreateAffinityGroupParams("spread", "host anti-affinity"))
	if err != nil {
		t.Fatal(err)
	}
	first := e.Params("first")
	first.SetAffinitygroupids([]string{g.Id})
	vm := e.Deploy(t, first)
	second := e.Params("second")
	second.SetAffinitygroupids([]string{g.Id})
	second.SetHostid(vm.Hostid)
	if got := e.Deploy(t, second); got.Hostid != vm.Hostid {
		t.Fatalf("the requested host %s was not used: %s", vm.Hostid, got.Hostid)
	}
}
