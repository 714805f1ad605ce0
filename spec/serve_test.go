package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/launch"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testimages"
)

const (
	regUser = "registry-admin"
	regPass = "registry-pw-5c1d"
	davUser = "cpi"
	davPass = "webdav-pw-0e7a"
)

// serveProc is one `cloudstack-cpi serve` process.
type serveProc struct {
	proc   *launch.Process
	urls   map[string]string // "registry", "webdav" → http://127.0.0.1:port
	mu     sync.Mutex
	logs   bytes.Buffer
	killed bool // by kill9: stop has nothing to check
}

// serveListening is serve's line for each listener; one listener for
// both services is "registry+webdav".
var serveListening = regexp.MustCompile(`(registry\+webdav|registry|webdav) listening on (\S+)`)

// startServe runs `serve` with cfg until the test ends (SIGTERM) and waits
// until every configured service listens.
func startServe(t testing.TB, cfg map[string]any) *serveProc {
	t.Helper()
	want := 0
	for _, s := range []string{"registry", "webdav"} {
		if _, ok := cfg[s]; ok {
			want++
		}
	}
	p := &serveProc{urls: map[string]string{}}
	cmd := exec.Command(cpiBin, "serve", "-configPath", writeJSON(t, cfg))
	proc, err := launch.Start("serve", cmd, &cmd.Stderr, func(line string) bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.logs.WriteString(line + "\n")
		if m := serveListening.FindStringSubmatch(line); m != nil {
			for _, name := range strings.Split(m[1], "+") {
				p.urls[name] = m[2]
			}
		}
		return len(p.urls) == want
	}, 10*time.Second)
	if err != nil {
		t.Fatalf("%v:\n%s", err, p.log())
	}
	p.proc = proc
	t.Cleanup(func() { p.stop(t) })
	return p
}

func (p *serveProc) url(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.urls[name]
}

func (p *serveProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// stop sends SIGTERM and waits; a process already gone is fine.
func (p *serveProc) stop(t testing.TB) {
	if p.killed {
		return
	}
	if killed, _ := p.proc.Stop(40 * time.Second); killed {
		t.Errorf("serve did not stop on SIGTERM:\n%s", p.log())
	}
	for _, secret := range []string{regPass, davPass} {
		if strings.Contains(p.log(), secret) {
			t.Errorf("a password reached serve's log:\n%s", p.log())
		}
	}
}

// kill9 ends the process at once, as a crash or a power cut would.
func (p *serveProc) kill9() {
	p.killed = true
	p.proc.Kill()
}

func daemonConfig(dir string, extra ...any) map[string]any {
	w := map[string]any{"listen": "127.0.0.1:0", "dir": dir, "username": davUser, "password": davPass}
	for i := 0; i+1 < len(extra); i += 2 {
		w[extra[i].(string)] = extra[i+1]
	}
	return map[string]any{"webdav": w}
}

// daemonImages lists what the daemon's directory holds besides its empty
// incoming area.
func daemonImages(t testing.TB, dir string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && !(d.IsDir() && d.Name() == ".incoming") {
			rel, _ := filepath.Rel(dir, p)
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestStemcellThroughTheWebDAVDaemon(t *testing.T) {
	for _, mode := range []string{"same host", "upload"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			daemon := startServe(t, daemonConfig(dir))
			e := newEnv(t, func(cfg map[string]any) {
				section(cfg, "stemcell")["publish"] = "webdav"
				w := section(cfg, "webdav")
				w["daemon_url"] = daemon.url("webdav")
				if mode == "same host" {
					w["dir"] = dir // no credentials needed: the file moves on disk
				} else {
					w["dir"] = filepath.Join(t.TempDir(), "elsewhere")
					w["username"], w["password"] = davUser, davPass
				}
			})
			var cid string
			r := e.call("create_stemcell", writeImage(t, bzippedVHD(t)), stemcellMF("cloudstack", "xen", "vhdx")).ok(t)
			r.decode(t, &cid)
			tpls := e.ourTemplates()
			if len(tpls) != 1 || tpls[0].Id != cid || !tpls[0].Isready || tpls[0].Format != "VHD" {
				t.Fatalf("templates after create_stemcell: %+v", tpls)
			}
			if !strings.HasPrefix(tpls[0].Url, daemon.url("webdav")+"/") || !strings.HasSuffix(tpls[0].Url, ".vhd.bz2") {
				t.Fatalf("registered from %q, not the daemon %s", tpls[0].Url, daemon.url("webdav"))
			}
			if calls := e.calls(); calls["registerTemplate"] != 1 || calls["getUploadParamsForTemplate"] != 0 {
				t.Fatalf("calls %v", calls)
			}
			// CloudStack has the template: the image is gone from the daemon.
			if left := daemonImages(t, dir); len(left) != 0 {
				t.Fatalf("the daemon still holds %v after the template was ready", left)
			}
			if code, _, err := getStatus(tpls[0].Url); err != nil || code != http.StatusNotFound {
				t.Fatalf("the image URL still answers: %d %v", code, err)
			}
			if !strings.Contains(r.Stderr, "removed the image") {
				t.Errorf("stderr does not say the image was removed:\n%s", r.Stderr)
			}
			e.call("delete_stemcell", cid).ok(t)
			e.assertNoTemplatesLeft()
			if left := daemonImages(t, dir); len(left) != 0 {
				t.Fatalf("left on the daemon: %v", left)
			}
		})
	}
}

func TestWebDAVDaemonFailuresLeaveNothing(t *testing.T) {
	// The CPI reads only the bzip2 data's first and last blocks, which are
	// sound: only CloudStack's own check of the whole image finds the
	// damaged block between them.
	vhd := testimages.VHD(64 << 20)
	damaged := damagedBetween(t, vhd)
	xen := stemcellMF("cloudstack", "xen", "vhdx")
	dir := t.TempDir()
	daemon := startServe(t, daemonConfig(dir))
	config := func(user, pass string) func(map[string]any) {
		return func(cfg map[string]any) {
			section(cfg, "stemcell")["publish"] = "webdav"
			w := section(cfg, "webdav")
			w["daemon_url"], w["username"], w["password"] = daemon.url("webdav"), user, pass
		}
	}
	t.Run("CloudStack refuses the image", func(t *testing.T) {
		e := newEnv(t, config(davUser, davPass))
		r := e.call("create_stemcell", writeImage(t, damaged), xen).failed(t, "CloudError", "bzip2 data invalid")
		if !strings.Contains(r.Error.Message, "deleted") {
			t.Errorf("the error should say the template was deleted: %s", r.Error.Message)
		}
		e.assertNoTemplatesLeft()
		if left := daemonImages(t, dir); len(left) != 0 {
			t.Fatalf("a failed template left %v on the daemon", left)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		e := newEnv(t, config(davUser, "not-the-password"))
		r := e.call("create_stemcell", writeImage(t, vhd), xen).failed(t, "CloudError", "refused webdav.username")
		if strings.Contains(r.Stdout+r.Stderr, "not-the-password") {
			t.Fatal("the password reached the CPI's output")
		}
		if calls := e.calls(); calls["registerTemplate"] != 0 {
			t.Fatalf("registered a template without an image: %v", calls)
		}
	})
	t.Run("daemon down", func(t *testing.T) {
		e := newEnv(t, func(cfg map[string]any) {
			config(davUser, davPass)(cfg)
			section(cfg, "webdav")["daemon_url"] = "http://127.0.0.1:9"
		})
		e.call("create_stemcell", writeImage(t, vhd), xen).failed(t, "CloudError", "cloudstack-cpi serve")
		e.assertNoTemplatesLeft()
	})
}

// A CPI that dies between handing an image over and taking it back leaves
// it on the daemon; the daemon removes it after webdav.max_age.
func TestWebDAVDaemonCollectsForgottenImages(t *testing.T) {
	dir := t.TempDir()
	daemon := startServe(t, daemonConfig(dir, "max_age", "2s"))
	url := daemon.url("webdav") + "/" + strings.Repeat("5a", 16) + "/forgotten.vhd"
	req, _ := http.NewRequest(http.MethodPut, url, strings.NewReader("an image nobody took back"))
	req.SetBasicAuth(davUser, davPass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT: %v %v", resp, err)
	}
	resp.Body.Close()
	if code, _, err := getStatus(url); code != http.StatusOK {
		t.Fatalf("the image is not served: %d %v", code, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(daemonImages(t, dir)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("not collected after 10s: %v\n%s", daemonImages(t, dir), daemon.log())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, _, err := getStatus(url); code != http.StatusNotFound {
		t.Fatalf("a collected image is still served: %d %v", code, err)
	}
	if !strings.Contains(daemon.log(), "garbage-collected") {
		t.Errorf("the log does not say so:\n%s", daemon.log())
	}
}

func registryConfig(storeDir string) map[string]any {
	return map[string]any{"registry": map[string]any{"listen": "127.0.0.1:0", "store_dir": storeDir,
		"username": regUser, "password": regPass}}
}

// registryPut PUTs settings and reports the status, or 0 when no answer came.
func registryPut(client *http.Client, base, id string, body []byte) int {
	req, _ := http.NewRequest(http.MethodPut, base+"/instances/"+id+"/settings", bytes.NewReader(body))
	req.SetBasicAuth(regUser, regPass)
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// registryGet reads settings as an old agent does: credentials in the URL.
func registryGet(t testing.TB, base, id string) (int, string) {
	t.Helper()
	resp, err := http.Get(strings.Replace(base, "http://", "http://"+regUser+":"+regPass+"@", 1) + "/instances/" + id + "/settings")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Status   string `json:"status"`
		Settings string `json:"settings"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("GET %s: %d %q is not the registry envelope", id, resp.StatusCode, b)
	}
	return resp.StatusCode, env.Settings
}

// TestRegistrySurvivesKill9 streams PUTs from several writers, kills the
// registry with SIGKILL mid-stream, restarts it on the same store and
// checks that every acknowledged write reads back byte for byte (or the
// write that was in flight for that id, which may or may not have landed)
// and that the store holds only whole JSON files. Three rounds.
func TestRegistrySurvivesKill9(t *testing.T) {
	store := t.TempDir()
	const writers, idsPerWriter = 8, 16
	slots := map[string]*slot{}
	var mu sync.Mutex
	for round := 0; round < 3; round++ {
		proc := startServe(t, registryConfig(store))
		base := proc.url("registry")
		// Everything acknowledged before, in earlier rounds, is there.
		for id, s := range slots {
			s.settle(t, id, base)
		}
		var acked int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
				for seq := 0; ; seq++ {
					select {
					case <-stop:
						return
					default:
					}
					id := fmt.Sprintf("vm-%d-%d", w, rand.IntN(idsPerWriter))
					body := []byte(fmt.Sprintf(`{"agent_id":%q,"round":%d,"seq":%d,"pad":%q}`,
						id, round, seq, strings.Repeat("x", rand.IntN(4096))))
					mu.Lock()
					s := slots[id]
					if s == nil {
						s = &slot{}
						slots[id] = s
					}
					s.inFlight = body
					mu.Unlock()
					code := registryPut(client, base, id, body)
					if code == 0 {
						return // the process is gone; this write stays in flight
					}
					if code != 200 && code != 201 {
						t.Errorf("PUT %s: %d", id, code)
						return
					}
					mu.Lock()
					s.acked, s.inFlight = body, nil
					acked++
					mu.Unlock()
				}
			}(w)
		}
		time.Sleep(time.Duration(300+rand.IntN(400)) * time.Millisecond)
		proc.kill9()
		close(stop)
		wg.Wait()
		inFlight := 0
		for _, s := range slots {
			if s.inFlight != nil {
				inFlight++
			}
		}
		temps := checkStore(t, store)
		t.Logf("round %d: %d acknowledged writes before SIGKILL, %d in flight, %d temporary files left",
			round, acked, inFlight, temps)
		if acked == 0 {
			t.Fatalf("round %d: no write was acknowledged:\n%s", round, proc.log())
		}
	}
	base := startServe(t, registryConfig(store)).url("registry")
	for id, s := range slots {
		s.settle(t, id, base)
	}
	if temps := checkStore(t, store); temps != 0 {
		t.Errorf("%d temporary files after a restart", temps)
	}
	if entries, _ := os.ReadDir(store); len(entries) > len(slots) {
		t.Errorf("%d files for %d instances", len(entries), len(slots))
	}
}

// checkStore asserts every settings file in the store is whole JSON and
// counts the temporary files beside them.
func checkStore(t testing.TB, store string) (temps int) {
	t.Helper()
	entries, err := os.ReadDir(store)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			temps++
			continue
		}
		b, err := os.ReadFile(filepath.Join(store, e.Name()))
		if err != nil || !strings.HasSuffix(e.Name(), ".json") || !json.Valid(b) {
			t.Errorf("store entry %s is not a whole settings file (%v)", e.Name(), err)
		}
	}
	return temps
}

// slot is what the crash test knows of one instance's settings.
type slot struct {
	acked    []byte // the last write answered 200/201
	inFlight []byte // sent, not answered, when the process died
}

// settle reads the instance back after a restart: the acknowledged write,
// or the one in flight when the process died (it may have landed), and
// nothing else. What it reads becomes the acknowledged state.
func (s *slot) settle(t testing.TB, id, base string) {
	t.Helper()
	code, got := registryGet(t, base, id)
	switch {
	case code == 200 && got == string(s.acked):
	case code == 200 && s.inFlight != nil && got == string(s.inFlight):
	case code == 404 && s.acked == nil:
	default:
		t.Fatalf("%s after a SIGKILL and a restart: %d %.80q…, want the acknowledged %.80q…", id, code, got, s.acked)
	}
	s.acked, s.inFlight = nil, nil
	if code == 200 {
		s.acked = []byte(got)
	}
}

// TestRegistryAsAnAgentReadsIt checks the served registry end to end over
// the binary: envelope, open reads, refusals.
func TestRegistryAsAnAgentReadsIt(t *testing.T) {
	cfg := registryConfig(t.TempDir())
	section(cfg, "registry")["open_get"] = true
	base := startServe(t, cfg).url("registry")
	settings := []byte(`{"agent_id":"a-1","disks":{"persistent":{}}}`)
	if code := registryPut(http.DefaultClient, base, "vm-1", settings); code != 201 {
		t.Fatalf("PUT: %d", code)
	}
	resp, err := http.Get(base + "/instances/vm-1/settings") // open_get: no credentials
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want, _ := json.Marshal(map[string]string{"settings": string(settings), "status": "ok"})
	if resp.StatusCode != http.StatusOK || string(b) != string(want) {
		t.Fatalf("GET: %d %s, want %s", resp.StatusCode, b, want)
	}
	req, _ := http.NewRequest(http.MethodDelete, base+"/instances/vm-1/settings", nil)
	req.SetBasicAuth(regUser, "wrong")
	if code, header, err := statusOf(req); err != nil || code != http.StatusUnauthorized ||
		header.Get("WWW-Authenticate") != `Basic realm="Bosh Registry"` {
		t.Fatalf("DELETE with a wrong password: %d %v %v", code, header, err)
	}
	if code, _, err := getStatus(base + "/healthz"); err != nil || code != http.StatusOK {
		t.Fatalf("healthz: %d %v", code, err)
	}
}

// statusOf does req, closing the body: what these tests read of an answer
// is its status and headers. A request that fails is status 0.
func statusOf(req *http.Request) (int, http.Header, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}

// getStatus is statusOf a GET of url.
func getStatus(url string) (int, http.Header, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	return statusOf(req)
}
