// Package simtest is the one way tests, benchmarks and tools start the
// CloudStack simulator: in this process (Serve), or as a process of the
// built binary (Launch, Start). Either is ready when it returns, on a free
// loopback port, and is stopped gracefully — a process with SIGTERM, as
// monit and an operator stop it, so it saves its state and removes its
// image directories.
package simtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
	srv, err := simulator.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		if err := srv.Close(); err != nil {
			t.Errorf("closing the simulator: %v", err)
		}
	})
	return at(hs.URL + "/client/api")
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
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // how it exited, once exited is closed
}

// Launch starts bin listening on a free loopback port with args added and
// returns once it announces its address. Its log goes to stderr (nil
// discards it).
func Launch(bin string, stderr io.Writer, args ...string) (*Process, error) {
	announced := &announcement{url: make(chan string, 1)}
	cmd := exec.Command(bin, append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	cmd.Stdout, cmd.Stderr = announced, stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	select {
	case url := <-announced.url:
		p.Sim = at(url)
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("the simulator exited before it listened: %w", p.err)
	case <-time.After(readyTimeout):
		_ = p.Stop()
		return nil, fmt.Errorf("the simulator did not say it was listening within %s", readyTimeout)
	}
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
	select {
	case <-p.exited:
		return p.err
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	return p.err
}

// listening is the line the binary prints once it accepts connections.
var listening = regexp.MustCompile(`listening on (http://\S+/client/api)`)

// announcement is the binary's stdout: it passes on the first address
// announced and discards the rest.
type announcement struct {
	mu   sync.Mutex
	line []byte
	done bool
	url  chan string
}

func (a *announcement) Write(b []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return len(b), nil
	}
	a.line = append(a.line, b...)
	for {
		i := bytes.IndexByte(a.line, '\n')
		if i < 0 {
			return len(b), nil
		}
		if m := listening.FindSubmatch(a.line[:i]); m != nil {
			a.done, a.line = true, nil
			a.url <- string(m[1])
			return len(b), nil
		}
		a.line = a.line[i+1:]
	}
}
