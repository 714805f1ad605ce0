package network_test

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

// vmEnv is simtesting's VM environment, for this package's own helpers on
// it: &vmEnv{simtesting.NewVMEnv(t, opts)}.
type vmEnv struct{ *simtesting.VMEnv }

func (e *vmEnv) firewallRules(t *testing.T, ipID string) []*cloudstack.FirewallRule {
	t.Helper()
	p := e.CS.Firewall.NewListFirewallRulesParams()
	if ipID != "" {
		p.SetIpaddressid(ipID)
	}
	l, err := e.CS.Firewall.ListFirewallRules(p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Count != len(l.FirewallRules) {
		t.Fatalf("count %d for %d rules", l.Count, len(l.FirewallRules))
	}
	return l.FirewallRules
}

func (e *vmEnv) fwParams(ipID, proto string, start, end int) *cloudstack.CreateFirewallRuleParams {
	p := e.CS.Firewall.NewCreateFirewallRuleParams(ipID, proto)
	p.SetStartport(start)
	p.SetEndport(end)
	return p
}

// rawAsync sends an async command signed by hand and returns its finished
// job result, for answers cloudstack-go cannot decode.
func (e *vmEnv) rawAsync(t *testing.T, params map[string]string) map[string]any {
	t.Helper()
	r := e.Call(params)
	inner := r.Inner(t, strings.ToLower(params["command"])+"response")
	jobID, _ := inner["jobid"].(string)
	if jobID == "" {
		t.Fatalf("%s: no job: %s", params["command"], r.Raw)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		q := e.Call(map[string]string{"command": "queryAsyncJobResult", "jobid": jobID}).Inner(t, "queryasyncjobresultresponse")
		if q["jobstatus"].(float64) != 0 {
			return q
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("job %s pending", jobID)
	return nil
}

func TestFirewallRules(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	ip := e.Associate(t)
	if got := e.firewallRules(t, ""); len(got) != 0 {
		t.Fatalf("rules before any: %+v", got)
	}
	ssh, err := e.CS.Firewall.CreateFirewallRule(e.fwParams(ip.Id, "TCP", 22, 22))
	if err != nil || ssh.Protocol != "tcp" || ssh.Startport != 22 || ssh.Endport != 22 || ssh.Cidrlist != "0.0.0.0/0" ||
		ssh.Ipaddressid != ip.Id || ssh.Ipaddress != ip.Ipaddress || ssh.Networkid != e.Net || ssh.State != "Active" ||
		ssh.Traffictype != "Ingress" || !ssh.Fordisplay {
		t.Fatalf("createFirewallRule = %+v, %v", ssh, err)
	}
	if !e.hasRules(t, ip.Id) || e.hasRules(t, e.PublicIPs(t, nil)[0].Id) {
		t.Fatal("hasrules is not true for exactly the address with a rule")
	}
	ping := e.CS.Firewall.NewCreateFirewallRuleParams(ip.Id, "icmp")
	icmp, err := e.CS.Firewall.CreateFirewallRule(ping)
	if err != nil || icmp.Icmptype != -1 || icmp.Icmpcode != -1 || icmp.Startport != 0 {
		t.Fatalf("icmp rule = %+v, %v", icmp, err)
	}
	_, err = e.CS.Firewall.CreateFirewallRule(ping)
	simtesting.WantAPIError(t, err, 431, "New rule conflicts with existing rule: Rule[")
	web := e.fwParams(ip.Id, "tcp", 20, 30)
	_, err = e.CS.Firewall.CreateFirewallRule(web)
	simtesting.WantAPIError(t, err, 537, "The range specified, 20-30, conflicts with rule Rule[1-Firewall-Active] which has 22-22")
	web.SetCidrlist([]string{"10.0.0.0/8"})
	if _, err := e.CS.Firewall.CreateFirewallRule(web); err != nil {
		t.Fatalf("another CIDR does not conflict: %v", err)
	}
	if _, err := e.CS.Firewall.CreateFirewallRule(e.fwParams(ip.Id, "udp", 22, 22)); err != nil {
		t.Fatalf("another protocol does not conflict: %v", err)
	}
	hidden := e.fwParams(ip.Id, "udp", 1000, 1000)
	hidden.SetFordisplay(false)
	if _, err := e.CS.Firewall.CreateFirewallRule(hidden); err != nil {
		t.Fatal(err)
	}
	onlyHidden := e.CS.Firewall.NewListFirewallRulesParams()
	onlyHidden.SetFordisplay(false)
	if l, err := e.CS.Firewall.ListFirewallRules(onlyHidden); err != nil || l.Count != 1 || l.FirewallRules[0].Fordisplay {
		t.Fatalf("fordisplay=false rules = %+v, %v", l, err)
	}

	for _, c := range []struct {
		p    *cloudstack.CreateFirewallRuleParams
		code int
		text string
	}{
		{e.fwParams(ip.Id, "tcp", 0, 10), 431, "publicPort is an invalid value: 0"},
		{e.fwParams(ip.Id, "tcp", 10, 70000), 431, "Public port range is an invalid value: 70000"},
		{e.fwParams(ip.Id, "tcp", 30, 20), 431, "Start port can't be bigger than end port"},
		{e.fwParams(ip.Id, "gre", 1, 2), 431, "Protocol gre is not supported in zone 1"},
		{e.fwParams(ip.Id, "icmp", 1, 2), 431, "Can't specify start/end port when protocol is ICMP"},
		{withICMP(e.fwParams(ip.Id, "tcp", 1, 2)), 431, "Can specify icmpCode and icmpType for ICMP protocol only"},
		{withCIDR(e.fwParams(ip.Id, "tcp", 1, 2), "10.0.0.0/33"), 431, "Source CIDRs formatting error 10.0.0.0/33"},
	} {
		_, err := e.CS.Firewall.CreateFirewallRule(c.p)
		simtesting.WantAPIError(t, err, c.code, c.text)
	}

	rules := e.firewallRules(t, ip.Id)
	if len(rules) != 4 || rules[0].Protocol != "udp" || rules[3].Id != ssh.Id {
		t.Fatalf("rules newest first = %+v", rules)
	}
	free := e.CS.Firewall.NewListFirewallRulesParams()
	free.SetIpaddressid(e.freeIP(t))
	_, err = e.CS.Firewall.ListFirewallRules(free)
	simtesting.WantAPIError(t, err, 431, "not ready for firewall rules yet")

	tag := e.CS.Resourcetags.NewCreateTagsParams([]string{ssh.Id}, "FirewallRule", map[string]string{"svc": "ssh"})
	if _, err := e.CS.Resourcetags.CreateTags(tag); err != nil {
		t.Fatal(err)
	}
	tagged := e.CS.Firewall.NewListFirewallRulesParams()
	tagged.SetTags(map[string]string{"svc": "ssh"})
	if l, err := e.CS.Firewall.ListFirewallRules(tagged); err != nil || l.Count != 1 || l.FirewallRules[0].Id != ssh.Id ||
		len(l.FirewallRules[0].Tags) != 1 {
		t.Fatalf("tagged firewall rules = %+v, %v", l, err)
	}
	if _, err := e.CS.Firewall.DeleteFirewallRule(e.CS.Firewall.NewDeleteFirewallRuleParams(ssh.Id)); err != nil {
		t.Fatal(err)
	}
	if l, err := e.CS.Resourcetags.ListTags(e.CS.Resourcetags.NewListTagsParams()); err != nil || l.Count != 0 {
		t.Fatalf("tags of a deleted rule = %+v, %v", l, err)
	}
	_, err = e.CS.Firewall.DeleteFirewallRule(e.CS.Firewall.NewDeleteFirewallRuleParams(ssh.Id))
	simtesting.WantAPIError(t, err, 431, "Unable to find firewall rule by ID=1")
	if got := e.firewallRules(t, ip.Id); len(got) != 3 {
		t.Fatalf("%d rules after delete, want 3", len(got))
	}
	// Releasing the address removes its rules.
	if _, err := e.CS.Address.DisassociateIpAddress(e.CS.Address.NewDisassociateIpAddressParams(ip.Id)); err != nil {
		t.Fatal(err)
	}
	if got := e.firewallRules(t, ""); len(got) != 0 {
		t.Fatalf("rules of a released address: %+v", got)
	}
}

// hasRules is an address's hasrules in listPublicIpAddresses.
func (e *vmEnv) hasRules(t *testing.T, id string) bool {
	t.Helper()
	p := e.CS.Address.NewListPublicIpAddressesParams()
	p.SetId(id)
	l := e.PublicIPs(t, p)
	if len(l) != 1 {
		t.Fatalf("address %s: %+v", id, l)
	}
	return l[0].Hasrules
}

func withICMP(p *cloudstack.CreateFirewallRuleParams) *cloudstack.CreateFirewallRuleParams {
	p.SetIcmptype(8)
	return p
}

func withCIDR(p *cloudstack.CreateFirewallRuleParams, cidr string) *cloudstack.CreateFirewallRuleParams {
	p.SetCidrlist([]string{cidr})
	return p
}

// freeIP is a public address nobody took.
func (e *vmEnv) freeIP(t *testing.T) string {
	t.Helper()
	p := e.CS.Address.NewListPublicIpAddressesParams()
	p.SetAllocatedonly(false)
	p.SetState("Free")
	l := e.PublicIPs(t, p)
	if len(l) == 0 {
		t.Fatal("no free address")
	}
	return l[len(l)-1].Id
}

func TestDeleteFirewallRuleOfAnotherPurpose(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	ip := e.Associate(t)
	lb := e.createLB(t, ip.Id, "web", 80)
	_, err := e.CS.Firewall.DeleteFirewallRule(e.CS.Firewall.NewDeleteFirewallRuleParams(lb.Id))
	simtesting.WantJobError(t, err, 431, fmt.Sprintf("Unable to find %d having purpose [Firewall, Ipv6Firewall]", 1))
}

func TestIpForwardingRules(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.Deploy(t, e.Params("cpivm-fwd"))
	// What the production CloudStack CPI asks at the start of every delete_vm.
	byVM := e.CS.NAT.NewListIpForwardingRulesParams()
	byVM.SetVirtualmachineid(vm.Id)
	l, err := e.CS.NAT.ListIpForwardingRules(byVM)
	if err != nil || l.Count != 0 || len(l.IpForwardingRules) != 0 {
		t.Fatalf("listIpForwardingRules without rules = %+v, %v", l, err)
	}
	free := e.CS.NAT.NewListIpForwardingRulesParams()
	free.SetIpaddressid(e.freeIP(t))
	_, err = e.CS.NAT.ListIpForwardingRules(free)
	simtesting.WantAPIError(t, err, 431, "not ready for port forwarding rules yet")
	ip := e.Associate(t)
	create := map[string]string{"command": "createIpForwardingRule", "ipaddressid": ip.Id, "protocol": "TCP", "startport": "22"}
	_, err = e.CS.NAT.CreateIpForwardingRule(e.CS.NAT.NewCreateIpForwardingRuleParams(ip.Id, "tcp", 22))
	simtesting.WantAPIError(t, err, 537, "Can't do static nat on ip address: "+ip.Ipaddress)
	if _, err := e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(ip.Id, vm.Id)); err != nil {
		t.Fatal(err)
	}
	res := e.rawAsync(t, create)
	rule, _ := res["jobresult"].(map[string]any)["ipforwardingrule"].(map[string]any)
	internal := e.internalIPID(t, ip.Id)
	if res["jobstatus"].(float64) != 1 || rule["protocol"] != "tcp" || rule["startport"] != 22.0 || rule["endport"] != 22.0 ||
		rule["ipaddressid"] != float64(internal) || rule["ipaddress"] != ip.Ipaddress || rule["virtualmachineid"] != vm.Id ||
		rule["virtualmachinename"] != "cpivm-fwd" || rule["state"] != "Active" {
		t.Fatalf("createIpForwardingRule job = %+v", res)
	}
	// IpForwardingRuleResponse's ipaddressid is a Long: cloudstack-go's
	// string field cannot take it, on a real CloudStack as here.
	_, err = e.CS.NAT.ListIpForwardingRules(byVM)
	if err == nil || !strings.Contains(err.Error(), "cannot unmarshal number") {
		t.Fatalf("cloudstack-go decoding a numeric ipaddressid: %v", err)
	}
	fw := e.firewallRules(t, ip.Id)
	if len(fw) != 1 || fw[0].Startport != 22 || fw[0].Cidrlist != "0.0.0.0/0" || fw[0].State != "Active" {
		t.Fatalf("opened firewall rule = %+v", fw)
	}
	again := e.Call(create).Inner(t, "createipforwardingruleresponse")
	if again["errorcode"] != 537.0 || !strings.Contains(again["errortext"].(string), "The range specified, 22-22, conflicts with rule Rule[") {
		t.Fatalf("same ports again = %+v", again)
	}
	udp := e.rawAsync(t, map[string]string{"command": "createIpForwardingRule", "ipaddressid": ip.Id, "protocol": "udp",
		"startport": "22", "openfirewall": "false"})
	if udp["jobstatus"].(float64) != 1 || len(e.firewallRules(t, ip.Id)) != 1 {
		t.Fatalf("udp on the same ports = %+v", udp)
	}
	list := e.Call(map[string]string{"command": "listIpForwardingRules", "virtualmachineid": vm.Id}).Inner(t, "listipforwardingrulesresponse")
	if list["count"] != 2.0 {
		t.Fatalf("listIpForwardingRules = %+v", list)
	}
	ruleID := rule["id"].(string)
	if _, err := e.CS.NAT.DeleteIpForwardingRule(e.CS.NAT.NewDeleteIpForwardingRuleParams(ruleID)); err != nil {
		t.Fatal(err)
	}
	if fw := e.firewallRules(t, ip.Id); len(fw) != 0 {
		t.Fatalf("the related firewall rule stays: %+v", fw)
	}
	_, err = e.CS.NAT.DeleteIpForwardingRule(e.CS.NAT.NewDeleteIpForwardingRuleParams(ruleID))
	simtesting.WantAPIError(t, err, 431, "Unable to find static NAT rule by ID: 1")
	// Disabling static NAT revokes the address's rules.
	if _, err := e.CS.NAT.DisableStaticNat(e.CS.NAT.NewDisableStaticNatParams(ip.Id)); err != nil {
		t.Fatal(err)
	}
	if l, err := e.CS.NAT.ListIpForwardingRules(e.CS.NAT.NewListIpForwardingRulesParams()); err != nil || l.Count != 0 {
		t.Fatalf("rules after disableStaticNat = %+v, %v", l, err)
	}
	cidr := map[string]string{"command": "createIpForwardingRule", "ipaddressid": ip.Id, "protocol": "tcp", "startport": "1",
		"cidrlist": "10.0.0.0/8"}
	e.Call(cidr).WantError(t, "createipforwardingruleresponse", 431, 4350,
		"Parameter cidrList is deprecated; if you need to open firewall rule for the specific CIDR, please refer to createFirewallRule command")
}

// internalIPID is an address's database id.
func (e *vmEnv) internalIPID(t *testing.T, id string) int64 {
	t.Helper()
	e.Srv.Mu.Lock()
	defer e.Srv.Mu.Unlock()
	ip, _ := model.ByID(e.Srv.State.PublicIPs, id)
	return ip.InternalID
}

func TestExpungeRemovesStaticNATRules(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.Deploy(t, e.Params("cpivm-nat-expunge"))
	ip := e.Associate(t)
	if _, err := e.CS.NAT.EnableStaticNat(e.CS.NAT.NewEnableStaticNatParams(ip.Id, vm.Id)); err != nil {
		t.Fatal(err)
	}
	e.rawAsync(t, map[string]string{"command": "createIpForwardingRule", "ipaddressid": ip.Id, "protocol": "tcp", "startport": "80"})
	d := e.CS.VirtualMachine.NewDestroyVirtualMachineParams(vm.Id)
	d.SetExpunge(true)
	if _, err := e.CS.VirtualMachine.DestroyVirtualMachine(d); err != nil {
		t.Fatal(err)
	}
	l, err := e.CS.NAT.ListIpForwardingRules(e.CS.NAT.NewListIpForwardingRulesParams())
	if err != nil || l.Count != 0 || len(e.firewallRules(t, ip.Id)) != 0 {
		t.Fatalf("rules of an expunged VM = %+v, %v", l, err)
	}
}
