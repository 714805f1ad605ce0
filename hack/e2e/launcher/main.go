// Command launcher plays the guests of the e2e harness: for every VM the
// simulator runs it starts a real bosh-agent, as the VM's stemcell would at
// boot, and stops it when the VM stops or is destroyed. A VM rebooted by
// rebootVirtualMachine (which never leaves Running) is seen through its
// finished async job, and its agent is restarted.
//
//	CS_API_KEY=… CS_SECRET_KEY=… launcher -api http://127.0.0.1:8080/client/api \
//	    -agent bin/bosh-agent -dir hack/e2e/_out/agents
//
// Each agent runs with the dummy platform and job supervisor (`-P dummy -M
// dummy`: no host networking, disks, users or monit are touched) in its own
// base directory DIR/<vm-uuid>. A VM with an ISO attached (the CPI's
// CONFIG-2 config drive for bosh.io's OpenStack stemcells on KVM and
// XenServer, its env CD-ROM for the vSphere stemcell on VMware) gets its
// settings from that ISO, read from the simulator's /metadata/<vm>/sim/iso
// as the guest's CD-ROM; any other VM gets an agent.json whose one HTTP
// settings source is the simulator's metadata service for that VM, as the
// CloudStack stemcell's agent.json points at the virtual router's. Agents
// die with the launcher (Pdeathsig), whichever way it ends.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

func main() {
	if err := run(); err != nil {
		log.Fatal("launcher: ", err)
	}
}

func run() error {
	api := flag.String("api", "http://127.0.0.1:8080/client/api", "the CloudStack API URL")
	metadata := flag.String("metadata", "", "the metadata service base URL (default: the API's host, /metadata)")
	agent := flag.String("agent", "bosh-agent", "the bosh-agent binary")
	dir := flag.String("dir", "agents", "where each agent gets its base directory")
	interval := flag.Duration("interval", 300*time.Millisecond, "how often VMs are listed")
	flag.Parse()
	key, secret := os.Getenv("CS_API_KEY"), os.Getenv("CS_SECRET_KEY")
	if key == "" || secret == "" {
		return errors.New("CS_API_KEY and CS_SECRET_KEY must be set")
	}
	if *metadata == "" {
		*metadata = strings.TrimSuffix(*api, "/client/api") + "/metadata"
	}
	bin, err := filepath.Abs(*agent)
	if err != nil {
		return err
	}
	base, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	l := &launcher{cs: cloudstack.NewClient(*api, key, secret, false), agentBin: bin, dir: base,
		metadata: *metadata, http: &http.Client{Timeout: 10 * time.Second}, agents: map[string]*agentProc{}, seenJobs: map[string]bool{}}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return l.loop(ctx, *interval)
}

type launcher struct {
	cs       *cloudstack.CloudStackClient
	agentBin string
	dir      string
	metadata string
	http     *http.Client
	agents   map[string]*agentProc // by VM id
	seenJobs map[string]bool       // finished async jobs already acted on
	primed   bool                  // jobs finished before the launcher started are not acted on
}

type agentProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

func (l *launcher) loop(ctx context.Context, interval time.Duration) error {
	defer l.stopAll()
	log.Printf("launcher: watching %s every %s", l.metadata, interval)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := l.tick(); err != nil {
			// The simulator may be restarting: keep the agents, try again.
			log.Printf("launcher: %v", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// tick brings the agents in line with the VMs: agents of VMs no longer
// Running stop first (so a recreated VM's agent finds port 6868 free), then
// rebooted VMs' agents restart, then every Running VM without a live agent
// gets one.
func (l *launcher) tick() error {
	running, err := l.runningVMs()
	if err != nil {
		return err
	}
	for id := range l.agents {
		if !running[id] {
			l.stop(id, "the VM is no longer Running")
		}
	}
	rebooted, err := l.rebooted()
	if err != nil {
		return err
	}
	for _, id := range rebooted {
		if l.agents[id] != nil {
			l.stop(id, "the VM was rebooted")
		}
	}
	for id := range running {
		if a := l.agents[id]; a != nil {
			select {
			case <-a.exited:
				log.Printf("launcher: the agent of VM %s exited (%v); restarting it", id, a.cmd.ProcessState)
				delete(l.agents, id)
			default:
				continue
			}
		}
		if err := l.start(id); err != nil {
			log.Printf("launcher: starting the agent of VM %s: %v", id, err)
		}
	}
	return nil
}

// runningVMs are the Running VMs of every account and every project. A
// list without projectid leaves project VMs out (buildACLSearchParameters'
// SkipProjectResources) and projectid=-1 gives an admin project VMs only
// (ListProjectResourcesOnly), so it takes both lists: the VPC phase's VM is
// a project's.
func (l *launcher) runningVMs() (map[string]bool, error) {
	running := map[string]bool{}
	for _, project := range []string{"", "-1"} {
		p := l.cs.VirtualMachine.NewListVirtualMachinesParams()
		p.SetListall(true)
		if project != "" {
			p.SetProjectid(project)
		}
		vms, err := l.cs.VirtualMachine.ListVirtualMachines(p)
		if err != nil {
			return nil, fmt.Errorf("listVirtualMachines projectid=%q: %w", project, err)
		}
		for _, vm := range vms.VirtualMachines {
			if vm.State == "Running" {
				running[vm.Id] = true
			}
		}
	}
	return running, nil
}

// rebooted are the VMs whose rebootVirtualMachine job finished since the
// last call.
func (l *launcher) rebooted() ([]string, error) {
	p := l.cs.Asyncjob.NewListAsyncJobsParams()
	p.SetListall(true)
	jobs, err := l.cs.Asyncjob.ListAsyncJobs(p)
	if err != nil {
		return nil, fmt.Errorf("listAsyncJobs: %w", err)
	}
	var out []string
	for _, j := range jobs.AsyncJobs {
		if j.Jobstatus == 0 || l.seenJobs[j.JobID] {
			continue // pending, or done with
		}
		l.seenJobs[j.JobID] = true
		// RebootVMCmd and RebootVMCmdByAdmin; 1 is SUCCEEDED.
		if l.primed && j.Jobstatus == 1 && strings.Contains(j.Cmd, ".RebootVMCmd") {
			out = append(out, j.Jobinstanceid)
		}
	}
	l.primed = true
	return out, nil
}

// agentConfig is the stemcell's /var/vcap/bosh/agent.json with the given
// settings sources and device path resolution.
func agentConfig(sources []map[string]any, resolution string) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"Platform": map[string]any{"Linux": map[string]any{
			"DevicePathResolutionType":         resolution,
			"CreatePartitionIfNoEphemeralDisk": true,
		}},
		"Infrastructure": map[string]any{"Settings": map[string]any{"Sources": sources}},
	}, "", "  ")
}

// settingsSources are the agent's settings sources for the VM and its
// device path resolution. With an ISO (the CPI's config drive for bosh.io's
// OpenStack stemcells, its env CD-ROM for the vSphere stemcell): a File
// source pointed at the settings the launcher read from the ISO (readDisc),
// which the agent parses as its ConfigDrive or CDROM source would (the
// settings JSON); the dummy platform reads no disks, so the launcher has
// read the ISO. Without one: the CloudStack stemcell's
// (bosh_cloudstack_agent_settings) HTTP source at the simulator's metadata
// service.
func (l *launcher) settingsSources(vmID, base string) ([]map[string]any, string, error) {
	img, err := l.fetchISO(vmID)
	if errors.Is(err, errNoISO) {
		return []map[string]any{{
			"Type": "HTTP", "URI": l.metadata + "/" + vmID,
			"UserDataPath": "/latest/user-data", "InstanceIDPath": "/latest/meta-data/instance-id",
			"SSHKeysPath": "/latest/meta-data/public-keys",
		}}, "virtio", nil
	}
	if err != nil {
		return nil, "", err
	}
	d, err := readDisc(img)
	if err != nil {
		return nil, "", fmt.Errorf("the ISO of VM %s: %w", vmID, err)
	}
	settings, err := d.write(base)
	if err != nil {
		return nil, "", err
	}
	log.Printf("launcher: VM %s has a %s ISO (%d bytes): its agent reads %s", vmID, d.Kind, len(img), d.Settings)
	return []map[string]any{{"Type": "File", "SettingsPath": settings}}, d.Resolution, nil
}

func (l *launcher) start(vmID string) error {
	base := filepath.Join(l.dir, vmID)
	tmp := filepath.Join(base, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	sources, resolution, err := l.settingsSources(vmID, base)
	if err != nil {
		return err
	}
	cfg, err := agentConfig(sources, resolution)
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(base, "agent.json")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		return err
	}
	out, err := os.OpenFile(filepath.Join(base, "agent.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(l.agentBin, "-P", "dummy", "-M", "dummy", "-b", base, "-C", cfgPath)
	// The stemcell's agent installs packages and jobs in /var/vcap/packages
	// and /var/vcap/jobs, where packaging scripts and bin/cpi look by
	// default; here they are in the base directory, so say where.
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "BOSH_PACKAGES_DIR="+filepath.Join(base, "packages"),
		"BOSH_JOBS_DIR="+filepath.Join(base, "jobs"))
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so stopping it ends the job scripts it runs;
	// Pdeathsig, so no agent outlives a killed launcher.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	a := &agentProc{cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(a.exited) }()
	l.agents[vmID] = a
	log.Printf("launcher: started the agent of VM %s (pid %d) in %s", vmID, cmd.Process.Pid, base)
	return nil
}

// stop ends an agent's process group: SIGTERM, then SIGKILL after 5 s.
func (l *launcher) stop(vmID, why string) {
	a := l.agents[vmID]
	delete(l.agents, vmID)
	pgid := -a.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-a.exited
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL) // what the agent started and left
	log.Printf("launcher: stopped the agent of VM %s: %s", vmID, why)
}

func (l *launcher) stopAll() {
	for id := range l.agents {
		l.stop(id, "the launcher is stopping")
	}
}
