package manifests_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/loopback"
)

// TestCtlRunsTheServeDaemon renders the director's job with registry.yml
// (moved to loopback ports and temporary directories) and drives bin/cpi_ctl
// as monit does: start leaves the daemon's pid in the pidfile and its logs
// in sys/log/cloudstack_cpi, the registry and the WebDAV daemon answer, and
// stop ends the process and removes the pidfile.
func TestCtlRunsTheServeDaemon(t *testing.T) {
	dirs := t.TempDir()
	registryAddr, webdavAddr := loopback.FreeAddr(t), loopback.FreeAddr(t)
	manifest := withProperties(t, interpolate(t, []string{"cpi.yml", "registry.yml"}, baseVars), map[string]any{
		"registry.listen":    registryAddr,
		"registry.store_dir": filepath.Join(dirs, "store", "registry"),
		"webdav.dir":         filepath.Join(dirs, "store", "webdav"),
		"webdav.listen":      webdavAddr,
		"webdav.daemon_url":  "http://" + webdavAddr,
	})
	r := render(t, manifest, "director")
	r.install(t, filepath.Join(bins, "cloudstack-cpi"))
	vcap := filepath.Dir(r.jobsDir)

	start := r.ctl("start", vcap)
	if err := start.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- start.Wait() }()
	t.Cleanup(func() { _ = start.Process.Kill() })
	pidfile := filepath.Join(vcap, "sys", "run", "cloudstack_cpi", "serve.pid")

	waitFor(t, "the registry and the WebDAV daemon to answer", func() bool {
		return answers("http://"+registryAddr+"/instances/x/settings", http.StatusUnauthorized) &&
			answers("http://"+webdavAddr+"/", 0)
	}, exited)
	raw, err := os.ReadFile(pidfile)
	if err != nil || strings.TrimSpace(string(raw)) != strconv.Itoa(start.Process.Pid) {
		t.Errorf("pidfile holds %q (%v), want the daemon's pid %d", raw, err, start.Process.Pid)
	}
	for _, dir := range []string{"store/registry", "store/webdav"} {
		if _, err := os.Stat(filepath.Join(dirs, dir)); err != nil {
			t.Errorf("start did not make %s: %v", dir, err)
		}
	}

	if out, err := r.ctl("stop", vcap).CombinedOutput(); err != nil {
		t.Fatalf("cpi_ctl stop: %v\n%s", err, out)
	}
	select {
	case err := <-exited:
		t.Logf("the daemon exited: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("cpi_ctl stop left the daemon running")
	}
	if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
		t.Errorf("stop left the pidfile: %v", err)
	}
	logs, _ := filepath.Glob(filepath.Join(vcap, "sys", "log", "cloudstack_cpi", "serve.*.log"))
	if len(logs) != 2 {
		t.Errorf("logs in sys/log/cloudstack_cpi: %v, want serve.stdout.log and serve.stderr.log", logs)
	}
}

func (r rendered) ctl(action, vcap string) *exec.Cmd {
	cmd := exec.Command("/bin/bash", filepath.Join(r.dir(), "bin", "cpi_ctl"), action)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "CLOUDSTACK_CPI_VCAP=" + vcap,
		"BOSH_PACKAGES_DIR=" + r.packages, "BOSH_JOBS_DIR=" + r.jobsDir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// answers: GET url returns status (any status when 0).
func answers(url string, status int) bool {
	client := http.Client{Timeout: time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return status == 0 || resp.StatusCode == status
}

func waitFor(t *testing.T, what string, ok func() bool, exited <-chan error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok() {
		select {
		case err := <-exited:
			t.Fatalf("the daemon exited while waiting for %s: %v", what, err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
