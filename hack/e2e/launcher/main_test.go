package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/simtest"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

const testKey, testSecret = "launcher-key", "launcher-secret"

// fakeAgent is a stand-in for bosh-agent that records each start (its
// pid, arguments and environment) in its base directory and then waits to
// be stopped. The pid goes last: the test reads the arguments once it sees
// the start, and on a loaded machine the script may be between two lines.
const fakeAgent = `#!/bin/sh
base=$(dirname "$TMPDIR")
echo "$@" >"$base/args"
echo "$BOSH_PACKAGES_DIR $BOSH_JOBS_DIR" >"$base/dirs"
echo $$ >>"$base/starts"
exec sleep 300
`

type fixture struct {
	t   *testing.T
	cs  *cloudstack.CloudStackClient
	dir string
	api string
}

func newFixture(t *testing.T) (*fixture, *launcher) {
	t.Helper()
	sim := simtest.Serve(t, simulator.Options{AdminAPIKey: testKey, AdminSecretKey: testSecret, JobLatency: time.Millisecond})
	dir := t.TempDir()
	agent := filepath.Join(dir, "bosh-agent")
	if err := os.WriteFile(agent, []byte(fakeAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	api := sim.URL
	f := &fixture{t: t, cs: cloudstack.NewAsyncClient(api, testKey, testSecret, false), dir: filepath.Join(dir, "agents"), api: api}
	l := &launcher{cs: cloudstack.NewClient(api, testKey, testSecret, false), agentBin: agent, dir: f.dir,
		metadata: sim.Base + "/metadata", http: http.DefaultClient, agents: map[string]*agentProc{}, seenJobs: map[string]bool{}}
	return f, l
}

// deploy starts a Small Instance VM of the builtin template, in the
// project with that id if there is one.
func (f *fixture) deploy(project ...string) string {
	f.t.Helper()
	zones, err := f.cs.Zone.ListZones(f.cs.Zone.NewListZonesParams())
	if err != nil || zones.Count == 0 {
		f.t.Fatalf("listZones: %v", err)
	}
	offerings, err := f.cs.ServiceOffering.ListServiceOfferings(f.cs.ServiceOffering.NewListServiceOfferingsParams())
	if err != nil || offerings.Count == 0 {
		f.t.Fatalf("listServiceOfferings: %v", err)
	}
	tp := f.cs.Template.NewListTemplatesParams("featured")
	templates, err := f.cs.Template.ListTemplates(tp)
	if err != nil || templates.Count == 0 {
		f.t.Fatalf("listTemplates: %v", err)
	}
	p := f.cs.VirtualMachine.NewDeployVirtualMachineParams(offerings.ServiceOfferings[0].Id, templates.Templates[0].Id,
		zones.Zones[0].Id)
	for _, id := range project {
		p.SetProjectid(id)
		p.SetNetworkids([]string{f.projectNetwork(id, zones.Zones[0].Id)})
	}
	vm, err := f.cs.VirtualMachine.DeployVirtualMachine(p)
	if err != nil {
		f.t.Fatalf("deployVirtualMachine: %v", err)
	}
	return vm.Id
}

// projectNetwork creates an isolated network in a project, of the
// offering of the network the builtin VMs get: a project has no default
// network of its own.
func (f *fixture) projectNetwork(projectID, zoneID string) string {
	f.t.Helper()
	nets, err := f.cs.Network.ListNetworks(f.cs.Network.NewListNetworksParams())
	if err != nil || nets.Count == 0 {
		f.t.Fatalf("listNetworks: %v", err)
	}
	p := f.cs.Network.NewCreateNetworkParams("launcher-net", nets.Networks[0].Networkofferingid, zoneID)
	p.SetProjectid(projectID)
	n, err := f.cs.Network.CreateNetwork(p)
	if err != nil {
		f.t.Fatalf("createNetwork in project %s: %v", projectID, err)
	}
	return n.Id
}

// starts are the pids of the agents started for a VM, oldest first.
func (f *fixture) starts(vmID string) []int {
	b, _ := os.ReadFile(filepath.Join(f.dir, vmID, "starts"))
	var pids []int
	for _, line := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(line); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLauncherFollowsTheVMs drives one VM through deploy, reboot, stop,
// start and destroy, and checks the launcher starts, restarts and stops its
// agent each time, and that stopping the launcher stops the agents.
func TestLauncherFollowsTheVMs(t *testing.T) {
	f, l := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.loop(ctx, 20*time.Millisecond) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the loop ended with %v", err)
		}
	}()

	vm := f.deploy()
	waitFor(t, "an agent runs for the deployed VM", func() bool { return len(f.starts(vm)) == 1 })
	base := filepath.Join(f.dir, vm)
	args, _ := os.ReadFile(filepath.Join(base, "args"))
	if want := "-P dummy -M dummy -b " + base + " -C " + filepath.Join(base, "agent.json"); strings.TrimSpace(string(args)) != want {
		t.Errorf("agent arguments %q, want %q", args, want)
	}
	dirs, _ := os.ReadFile(filepath.Join(base, "dirs"))
	if want := filepath.Join(base, "packages") + " " + filepath.Join(base, "jobs"); strings.TrimSpace(string(dirs)) != want {
		t.Errorf("BOSH_PACKAGES_DIR and BOSH_JOBS_DIR %q, want %q", dirs, want)
	}
	var cfg struct {
		Infrastructure struct {
			Settings struct{ Sources []map[string]string }
		}
	}
	b, _ := os.ReadFile(filepath.Join(base, "agent.json"))
	if err := json.Unmarshal(b, &cfg); err != nil || len(cfg.Infrastructure.Settings.Sources) != 1 ||
		cfg.Infrastructure.Settings.Sources[0]["URI"] != l.metadata+"/"+vm ||
		cfg.Infrastructure.Settings.Sources[0]["Type"] != "HTTP" {
		t.Errorf("agent.json: %s (%v)", b, err)
	}

	if _, err := f.cs.VirtualMachine.RebootVirtualMachine(f.cs.VirtualMachine.NewRebootVirtualMachineParams(vm)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rebooted VM's agent is restarted", func() bool {
		s := f.starts(vm)
		return len(s) == 2 && !alive(s[0])
	})

	if _, err := f.cs.VirtualMachine.StopVirtualMachine(f.cs.VirtualMachine.NewStopVirtualMachineParams(vm)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the stopped VM's agent is stopped", func() bool { return !alive(f.starts(vm)[1]) })

	if _, err := f.cs.VirtualMachine.StartVirtualMachine(f.cs.VirtualMachine.NewStartVirtualMachineParams(vm)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the started VM gets an agent again", func() bool { return len(f.starts(vm)) == 3 })

	second := f.deploy()
	waitFor(t, "a second VM gets its own agent", func() bool { return len(f.starts(second)) == 1 })

	p := f.cs.VirtualMachine.NewDestroyVirtualMachineParams(vm)
	p.SetExpunge(true)
	if _, err := f.cs.VirtualMachine.DestroyVirtualMachine(p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the destroyed VM's agent is stopped", func() bool { return !alive(f.starts(vm)[2]) })
	if !alive(f.starts(second)[0]) {
		t.Error("the other VM's agent stopped too")
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done <- nil // for the deferred receive
	if alive(f.starts(second)[0]) {
		t.Error("an agent outlived the launcher's loop")
	}
}

// TestLauncherStartsProjectVMsAgents checks a VM of a CloudStack project
// (which listVirtualMachines leaves out without projectid) gets an agent
// beside a VM of no project, as the VPC phase's VM must.
func TestLauncherStartsProjectVMsAgents(t *testing.T) {
	f, l := newFixture(t)
	prj, err := f.cs.Project.CreateProject(f.cs.Project.NewCreateProjectParams("the launcher's project", "launcher"))
	if err != nil {
		t.Fatalf("createProject: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.loop(ctx, 20*time.Millisecond) }()
	inProject, outside := f.deploy(prj.Id), f.deploy()
	waitFor(t, "both VMs have an agent", func() bool {
		return len(f.starts(inProject)) == 1 && len(f.starts(outside)) == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
