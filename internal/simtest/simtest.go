// Package simtest is the one way tests, benchmarks and tools start the
// CloudStack simulator: in this process (Serve), or as a process of the
// built binary (Launch, Start). Either is ready when it returns, on a free
// loopback port, and is stopped gracefully — a process with SIGTERM, as
// monit and an operator stop it, so it saves its state and removes its
// image directories.
package simtest

import (
	"fmt"
	"io"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/launch"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// Command is the simulator binary's package.
const Command = "github.com/bosh-cloudstack/cloudstack-cpi/simulator/cmd/cloudstack-simulator"

const (
	readyTimeout = 10 * time.Second // until the binary announces its address
	stopTimeout  = 15 * time.Second // from SIGTERM until SIGKILL
)

// Sim is where a running simulator answers.
type Sim struct {
	URL   string // http://127.0.0.1:PORT/client/api
	Base  string // http://127.0.0.1:PORT: uploads, metadata, the admin API
	Admin *simulator.AdminClient
}

func at(apiURL string) *Sim {
	base := strings.TrimSuffix(apiURL, "/client/api")
	return &Sim{URL: apiURL, Base: base, Admin: &simulator.AdminClient{BaseURL: base}}
}

// Serve runs a simulator with opts in this process on a loopback port
// until the test ends; closing it is part of the test.
func Serve(t testing.TB, opts simulator.Options) *Sim {
	t.Helper()
	return ServeInProcess(t, opts).Sim
}

// InProcess is a simulator served in this process: its tests reach its
// state (Server) and can stop its listener early (HTTP).
type InProcess struct {
	*Sim
	Server *simulator.Server
	HTTP   *httptest.Server
}

// ServeInProcess is Serve keeping the server and its listener at hand, for
// the simulator's own tests.
func ServeInProcess(t testing.TB, opts simulator.Options) *InProcess {
	t.Helper()
	srv, err := simulator.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := launch.Serve(t, "the simulator", srv.Handler(), srv.Close)
	s := at(hs.URL + "/client/api")
	s.Admin.HTTP = hs.Client()
	return &InProcess{Sim: s, Server: srv, HTTP: hs}
}

// Build builds the simulator binary into dir.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "cloudstack-simulator")
	if out, err := exec.Command("go", "build", "-o", bin, Command).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", Command, err, out)
	}
	return bin, nil
}

// Process is a simulator binary running as a child process.
type Process struct {
	*Sim
	proc *launch.Process
}

// Launch starts bin listening on a free loopback port with args added and
// returns once it announces its address. Its log goes to stderr (nil
// discards it).
func Launch(bin string, stderr io.Writer, args ...string) (*Process, error) {
	cmd := exec.Command(bin, append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = stderr
	var url string
	proc, err := launch.Start("the simulator", cmd, &cmd.Stdout, func(line string) bool {
		if m := listening.FindStringSubmatch(line); m != nil && url == "" {
			url = m[1]
			return true
		}
		return false
	}, readyTimeout)
	if err != nil {
		return nil, err
	}
	return &Process{Sim: at(url), proc: proc}, nil
}

// Start is Launch for a test: it fails the test if the simulator does not
// start, and stops it when the test ends.
func Start(t testing.TB, bin string, args ...string) *Process {
	t.Helper()
	p, err := Launch(bin, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	return p
}

// Stop sends SIGTERM and waits for the exit, SIGKILL if it has not come
// within 15 s; it returns how the process exited, nil for a clean exit.
// Stopping a stopped process returns the same.
func (p *Process) Stop() error {
	_, err := p.proc.Stop(stopTimeout)
	return err
}

// listening is the line the binary prints once it accepts connections.
var listening = regexp.MustCompile(`listening on (http://\S+/client/api)`)
