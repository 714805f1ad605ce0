// Package launch starts what a test talks to, and ends it when the test
// does: a child process, ready when a line of its output says it listens
// and stopped as monit and an operator stop it, with SIGTERM, SIGKILL if
// that does not end it in time (Start: the simulator's binary through
// internal/simtest, `cloudstack-cpi serve` in spec/); or a handler on a
// loopback httptest server (Serve: the simulator in-process, through
// internal/simtest and in the simulator's own tests).
package launch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Serve serves h on a loopback port until the test ends, then closes the
// server and calls closeH (an error fails the test, named what).
func Serve(t testing.TB, what string, h http.Handler, closeH func() error) *httptest.Server {
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		if err := closeH(); err != nil {
			t.Errorf("closing %s: %v", what, err)
		}
	})
	return hs
}

// Process is a started child process.
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // how it exited, once exited is closed
}

// Start starts cmd, sets *out (&cmd.Stdout or &cmd.Stderr) to hand each
// line of that stream to line, and returns once line says the process
// listens; line sees every later line too. It fails, naming the process
// what, when the process exits first, or does not listen within timeout
// (it is then stopped).
func Start(what string, cmd *exec.Cmd, out *io.Writer, line func(string) (listening bool), timeout time.Duration) (*Process, error) {
	ready := make(chan struct{})
	*out = &lines{line: line, ready: ready}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	select {
	case <-ready:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited before it listened: %w", what, p.err)
	case <-time.After(timeout):
		_, _ = p.Stop(timeout)
		return nil, fmt.Errorf("%s did not say it was listening within %s", what, timeout)
	}
}

// Stop sends SIGTERM and waits for the exit, SIGKILL if it has not come
// within grace (killed says so); err is how the process exited, nil for a
// clean exit. Stopping a stopped process returns the same.
func (p *Process) Stop(grace time.Duration) (killed bool, err error) {
	select {
	case <-p.exited:
		return false, p.err
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.exited:
	case <-time.After(grace):
		killed = true
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	return killed, p.err
}

// Kill ends the process at once, as a crash or a power cut would, and
// waits for its exit.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// lines splits what the process writes into lines for line, and closes
// ready the first time line says so.
type lines struct {
	mu      sync.Mutex
	buf     []byte
	line    func(string) bool
	ready   chan struct{}
	isReady bool
}

func (l *lines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		text := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		if l.line(text) && !l.isReady {
			l.isReady = true
			close(l.ready)
		}
	}
}
