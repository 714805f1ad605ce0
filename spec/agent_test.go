package spec

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	toolsMu    sync.Mutex
	toolsBuilt = map[string]string{}
)

// tool builds a command of tools/ (the real bosh-agent's code, in its own
// module) once per test binary and returns its path.
func tool(t testing.TB, name string) string {
	t.Helper()
	toolsMu.Lock()
	defer toolsMu.Unlock()
	if bin, ok := toolsBuilt[name]; ok {
		return bin
	}
	bin := filepath.Join(filepath.Dir(cpiBin), name)
	cmd := exec.Command("go", "build", "-o", bin, "./"+name)
	cmd.Dir = "../tools"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building tools/%s: %v\n%s", name, err, out)
	}
	toolsBuilt[name] = bin
	return bin
}

// agentSettingsTool is tools/agentsettings: bosh-agent's settings source.
func agentSettingsTool(t *testing.T) string { return tool(t, "agentsettings") }

// TestTheRealAgentReadsTheSettings boots nothing: it points bosh-agent
// v2.769.0's HTTP settings source at the simulator's metadata service for a
// VM create_vm made, as the CloudStack stemcell's agent.json does.
func TestTheRealAgentReadsTheSettings(t *testing.T) {
	tool := agentSettingsTool(t)
	e := newEnv(t, func(cfg map[string]any) {
		section(cfg, "agent")["mbus"] = "nats://nats:4222"
		section(cfg, "agent")["ntp"] = []string{"0.pool.ntp.org"}
		section(cfg, "agent")["blobstore"] = map[string]any{"provider": "dav",
			"options": map[string]any{"endpoint": "http://10.1.1.6:25250"}}
	})
	stemcell := e.stemcell()
	var result []json.RawMessage
	e.call("create_vm", "agent-real", stemcell, smallVM, map[string]any{"default": manualNet("10.1.1.70")},
		[]string{}, boshEnv).ok(t).decode(t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	out, err := exec.Command(tool, "-uri", e.sim.Base+"/metadata/"+cid).Output()
	if err != nil {
		t.Fatalf("the agent could not read its settings: %v\n%s", err, out)
	}
	var got struct {
		Settings struct {
			AgentID  string `json:"agent_id"`
			Mbus     string `json:"mbus"`
			Networks map[string]struct {
				IP      string   `json:"ip"`
				Mac     string   `json:"mac"`
				Default []string `json:"default"`
			} `json:"networks"`
			Disks struct {
				System    string `json:"system"`
				Ephemeral any    `json:"ephemeral"`
			} `json:"disks"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s := got.Settings
	vm := e.vm(cid)
	net := s.Networks["default"]
	if s.AgentID != "agent-real" || s.Mbus != "nats://nats:4222" || net.IP != "10.1.1.70" ||
		net.Mac != vm.Nic[0].Macaddress || len(net.Default) != 2 || s.Disks.System == "" || s.Disks.Ephemeral == nil {
		t.Fatalf("the agent read %+v", s)
	}
}
