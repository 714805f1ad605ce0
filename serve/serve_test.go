package serve_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/serve"
)

func parse(t *testing.T, cfg string) config.Config {
	t.Helper()
	c, err := config.ParseServe([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type logs struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(strings.TrimSpace(sprintf(format, args...)) + "\n")
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// run starts cfg's services and stops them at the end of the test.
func run(t *testing.T, cfg config.Config) (*serve.Servers, *logs, context.CancelFunc, chan error) {
	t.Helper()
	l := &logs{}
	s, err := serve.Start(cfg, l.logf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve, once stopped: %v", err)
		}
	})
	return s, l, cancel, done
}

func get(t *testing.T, client *http.Client, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return send(t, client, req)
}

// send does req and returns its status and body.
func send(t *testing.T, client *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestBothServicesAnswerHealth(t *testing.T) {
	dir := t.TempDir()
	cfg := parse(t, `{"registry":{"listen":"127.0.0.1:0","store_dir":"`+filepath.Join(dir, "reg")+`",
	  "username":"u","password":"registry-pw"},
	  "webdav":{"listen":"127.0.0.1:0","dir":"`+filepath.Join(dir, "dav")+`","username":"u","password":"dav-pw"}}`)
	s, l, _, _ := run(t, cfg)
	if len(s.Services) != 2 {
		t.Fatalf("%d services", len(s.Services))
	}
	for _, svc := range s.Services {
		if code, body := get(t, http.DefaultClient, svc.URL()+"/healthz"); code != 200 || body != "ok" {
			t.Errorf("%s /healthz: %d %q", svc.Name, code, body)
		}
	}
	if code, _ := get(t, http.DefaultClient, s.Services[0].URL()+"/instances/x/settings"); code != 401 {
		t.Errorf("registry GET without credentials: %d", code)
	}
	time.Sleep(50 * time.Millisecond)
	for _, secret := range []string{"registry-pw", "dav-pw"} {
		if strings.Contains(l.String(), secret) {
			t.Fatalf("a password reached the log:\n%s", l)
		}
	}
}

func TestTLS(t *testing.T) {
	certPEM, keyPEM := selfSigned(t)
	cfg := parse(t, `{"registry":{"listen":"127.0.0.1:0","store_dir":"`+t.TempDir()+`","username":"u","password":"p",
	  "tls_cert":`+quote(certPEM)+`,"tls_key":`+quote(keyPEM)+`}}`)
	s, _, _, _ := run(t, cfg)
	url := s.Services[0].URL()
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("URL %s", url)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(certPEM))
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if code, body := get(t, client, url+"/healthz"); code != 200 || body != "ok" {
		t.Fatalf("healthz over TLS: %d %q", code, body)
	}
	// Plain HTTP to the TLS listener is refused, never answered.
	if resp, err := http.Get(strings.Replace(url, "https://", "http://", 1) + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered on the TLS listener")
		}
	}
}

func TestGracefulShutdownFinishesRequestsInFlight(t *testing.T) {
	cfg := parse(t, `{"registry":{"listen":"127.0.0.1:0","store_dir":"`+t.TempDir()+`","username":"u","password":"p"}}`)
	s, _, cancel, done := run(t, cfg)
	url := s.Services[0].URL() + "/instances/vm-1/settings"
	body, feed := io.Pipe()
	req, _ := http.NewRequest(http.MethodPut, url, body)
	req.ContentLength = int64(len(`{"a":1}`))
	req.SetBasicAuth("u", "p")
	answered := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- -1
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	_, _ = feed.Write([]byte(`{"a"`)) // the request is in flight
	time.Sleep(100 * time.Millisecond)
	cancel()
	time.Sleep(100 * time.Millisecond)
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(s.Services[0].URL(), "http://"), time.Second); err == nil {
		t.Error("still accepting connections after the stop signal")
	}
	_, _ = feed.Write([]byte(`:1}`))
	if err := feed.Close(); err != nil {
		t.Fatal(err)
	}
	if code := <-answered; code != 201 {
		t.Fatalf("the request in flight got %d", code)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	done <- nil // for the cleanup
}

func TestRefusedConfigs(t *testing.T) {
	cases := map[string]struct{ json, want string }{
		"nothing to serve":      {`{}`, "nothing to serve"},
		"registry without dir":  {`{"registry":{"listen":"127.0.0.1:0","username":"u","password":"p"}}`, "registry.store_dir is required"},
		"registry without auth": {`{"registry":{"listen":"127.0.0.1:0","store_dir":"/x"}}`, "registry.username is required"},
		"registry bad listen":   {`{"registry":{"listen":"nope","store_dir":"/x","username":"u","password":"p"}}`, "registry.listen"},
		"webdav without listen": {`{"webdav":{"dir":"/x"}}`, "webdav.listen is required"},
		"webdav port range":     {`{"webdav":{"dir":"/x","listen":"127.0.0.1:1-2"}}`, "webdav.listen"},
		"webdav half auth":      {`{"webdav":{"dir":"/x","listen":"127.0.0.1:0","username":"u"}}`, "go together"},
		"cert without key":      {`{"webdav":{"dir":"/x","listen":"127.0.0.1:0","tls_cert":"x"}}`, "webdav.tls_cert and webdav.tls_key go together"},
		"garbage cert":          {`{"webdav":{"dir":"/x","listen":"127.0.0.1:0","tls_cert":"x","tls_key":"secret-key"}}`, "not a PEM certificate"},
		"unknown key":           {`{"registry":{"open_gett":true}}`, "unknown key registry.open_gett"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := config.ParseServe([]byte(c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "secret-key") {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	// The registry's port already taken: Start fails and says which.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	cfg := parse(t, `{"registry":{"listen":"`+ln.Addr().String()+`","store_dir":"`+t.TempDir()+`","username":"u","password":"p"}}`)
	if _, err := serve.Start(cfg, func(string, ...any) {}); err == nil || !strings.Contains(err.Error(), "registry.listen") {
		t.Fatalf("taken port: %v", err)
	}
}

func selfSigned(t *testing.T) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "registry"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
