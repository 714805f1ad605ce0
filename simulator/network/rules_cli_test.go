package network_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// cliJSON runs a CLI command and decodes its JSON answer (an async
// command's answer is its job result; an empty list prints nothing).
func cliJSON(t *testing.T, s *simtesting.Sim, args ...string) map[string]any {
	t.Helper()
	out, errOut, err := simtesting.RunCLI(t, s, simtesting.Secret, args...)
	v := map[string]any{}
	if err != nil || (strings.TrimSpace(out) != "" && json.Unmarshal([]byte(out), &v) != nil) {
		t.Fatalf("%v: %v\nstdout: %s\nstderr: %s", args, err, out, errOut)
	}
	return v
}

// TestCLINetworkRules drives the three rule families with Debian's
// cloudstack CLI, an independent client that decodes any JSON.
func TestCLINetworkRules(t *testing.T) {
	e := &vmEnv{simtesting.NewVMEnv(t, simulator.Options{})}
	vm := e.Deploy(t, e.Params("cpivm-cli-rules"))
	lbIP, natIP := e.Associate(t), e.Associate(t)

	if got := cliJSON(t, e.Sim, "listIpForwardingRules", "virtualmachineid="+vm.Id); len(got) != 0 {
		t.Fatalf("listIpForwardingRules without rules = %v", got)
	}
	lb := cliJSON(t, e.Sim, "createLoadBalancerRule", "publicipid="+lbIP.Id, "name=web", "publicport=80",
		"privateport=8080", "algorithm=source", "zoneid="+e.Zone)["loadbalancer"].(map[string]any)
	if lb["name"] != "web" || lb["publicport"] != "80" || lb["algorithm"] != "source" || lb["state"] != "Add" {
		t.Fatalf("createLoadBalancerRule = %v", lb)
	}
	lbID := lb["id"].(string)
	if got := cliJSON(t, e.Sim, "assignToLoadBalancerRule", "id="+lbID, "virtualmachineids="+vm.Id); got["success"] != true {
		t.Fatalf("assignToLoadBalancerRule = %v", got)
	}
	out, errOut, err := simtesting.RunCLI(t, e.Sim, simtesting.Secret, "assignToLoadBalancerRule", "id="+lbID,
		"vmidipmap[0].vmid="+vm.Id, "vmidipmap[0].vmip=not-an-ip")
	if err == nil || !strings.Contains(errOut, "Job failure") ||
		!strings.Contains(out, "Invalid ip address not-an-ip passed in vmidipmap for vmid "+vm.Id) {
		t.Fatalf("vmidipmap with a bad address: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	inst := cliJSON(t, e.Sim, "listLoadBalancerRuleInstances", "id="+lbID, "lbvmips=true")
	pairs, _ := inst["lbrulevmidip"].([]any)
	if inst["count"] != 1.0 || len(pairs) != 1 || pairs[0].(map[string]any)["loadbalancerruleinstance"].(map[string]any)["id"] != vm.Id {
		t.Fatalf("listLoadBalancerRuleInstances = %v", inst)
	}
	if got := cliJSON(t, e.Sim, "listLoadBalancerRules", "name=web"); got["count"] != 1.0 {
		t.Fatalf("listLoadBalancerRules = %v", got)
	}

	fw := cliJSON(t, e.Sim, "createFirewallRule", "ipaddressid="+natIP.Id, "protocol=udp", "startport=500",
		"endport=600", "cidrlist=10.0.0.0/8,192.168.0.0/16")["firewallrule"].(map[string]any)
	if fw["cidrlist"] != "10.0.0.0/8,192.168.0.0/16" || fw["startport"] != 500.0 || fw["endport"] != 600.0 {
		t.Fatalf("createFirewallRule = %v", fw)
	}
	cliJSON(t, e.Sim, "enableStaticNat", "ipaddressid="+natIP.Id, "virtualmachineid="+vm.Id)
	fwd := cliJSON(t, e.Sim, "createIpForwardingRule", "ipaddressid="+natIP.Id, "protocol=tcp", "startport=22",
		"endport=23")["ipforwardingrule"].(map[string]any)
	if fwd["ipaddressid"] != float64(e.internalIPID(t, natIP.Id)) || fwd["endport"] != 23.0 || fwd["virtualmachineid"] != vm.Id {
		t.Fatalf("createIpForwardingRule = %v", fwd)
	}
	if got := cliJSON(t, e.Sim, "listIpForwardingRules", "virtualmachineid="+vm.Id); got["count"] != 1.0 {
		t.Fatalf("listIpForwardingRules = %v", got)
	}
	for _, del := range [][]string{{"deleteIpForwardingRule", "id=" + fwd["id"].(string)},
		{"deleteFirewallRule", "id=" + fw["id"].(string)}, {"deleteLoadBalancerRule", "id=" + lbID}} {
		if got := cliJSON(t, e.Sim, del...); got["success"] != true {
			t.Fatalf("%v = %v", del, got)
		}
	}
	for _, list := range []string{"listFirewallRules", "listLoadBalancerRules", "listIpForwardingRules"} {
		if got := cliJSON(t, e.Sim, list); len(got) != 0 {
			t.Fatalf("%s after the deletes = %v", list, got)
		}
	}
}
