package cloudstack_test

import (
	"bytes"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

const (
	apiKey    = "KEY-visible-only-to-cloudstack"
	secretKey = "SECRET-never-logged"
	vmUUID    = "0b8bd2a8-2c54-4f53-a84b-5a8bb2fc2d1c"
)

func newClient(t *testing.T, endpoint string, edit func(*config.CloudStack)) (*cloudstack.Client, *bytes.Buffer) {
	t.Helper()
	retries := 3
	cfg := config.CloudStack{
		Endpoint: endpoint, APIKey: apiKey, SecretAccessKey: secretKey, DefaultZone: "z",
		RequestTimeout: config.Duration(5 * time.Second), JobTimeout: config.Duration(2 * time.Second),
		JobPollInterval: config.Duration(10 * time.Millisecond), JobPollMaxInterval: config.Duration(40 * time.Millisecond),
		MaxRetries: &retries,
	}
	if edit != nil {
		edit(&cfg)
	}
	var logs bytes.Buffer
	c, err := cloudstack.New(cfg, boshlog.NewWriterLogger(boshlog.LevelDebug, &logs))
	if err != nil {
		t.Fatal(err)
	}
	return c, &logs
}

func vmList(names ...string) string {
	var vms []string
	for i, n := range names {
		vms = append(vms, fmt.Sprintf(`{"id":"%08d-0000-4000-8000-000000000000","name":%q,"state":"Running"}`, i, n))
	}
	if len(vms) == 0 {
		return `{"listvirtualmachinesresponse":{}}`
	}
	return fmt.Sprintf(`{"listvirtualmachinesresponse":{"count":%d,"virtualmachine":[%s]}}`, len(vms), strings.Join(vms, ","))
}

func assertNoSecrets(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range texts {
		for _, secret := range []string{apiKey, secretKey, "signature="} {
			if strings.Contains(s, secret) {
				t.Errorf("%q leaks %q", s, secret)
			}
		}
	}
}

func TestFindVMComparesNamesExactly(t *testing.T) {
	var gotName string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotName = r.URL.Query().Get("name")
		// CloudStack's name= is a substring filter: it returns both.
		fmt.Fprint(w, vmList("cpivm-abc-2", "cpivm-abc"))
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	vm, err := c.FindVM("cpivm-abc")
	if err != nil || vm == nil || vm.Name != "cpivm-abc" || gotName != "cpivm-abc" {
		t.Fatalf("got %+v, %v (name= %q)", vm, err, gotName)
	}
	vm, err = c.FindVM("cpivm-ab")
	if err != nil || vm != nil {
		t.Fatalf("a substring must not match: %+v, %v", vm, err)
	}
}

func TestFindVMByUUIDSendsID(t *testing.T) {
	var gotID, gotName string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotID, gotName = r.URL.Query().Get("id"), r.URL.Query().Get("name")
		fmt.Fprint(w, vmList())
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	vm, err := c.FindVM(vmUUID)
	if err != nil || vm != nil || gotID != vmUUID || gotName != "" {
		t.Fatalf("vm %+v err %v id %q name %q", vm, err, gotID, gotName)
	}
}

func TestTransientFailuresAreRetried(t *testing.T) {
	for name, status := range map[string]int{"proxy 503": 503, "bare 502": 502} {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) <= 2 {
					http.Error(w, "busy", status)
					return
				}
				fmt.Fprint(w, vmList("cpivm-x"))
			}))
			defer srv.Close()
			c, logs := newClient(t, srv.URL+"/client/api", nil)
			vm, err := c.FindVM("cpivm-x")
			if err != nil || vm == nil || calls.Load() != 3 {
				t.Fatalf("vm %+v err %v calls %d", vm, err, calls.Load())
			}
			assertNoSecrets(t, logs.String())
		})
	}
}

func TestCloudStackAnswersAreNotRetried(t *testing.T) {
	cases := map[string]struct {
		status int
		body   string
		check  func(error) bool
	}{
		"401": {401, `{"listvirtualmachinesresponse":{"uuidList":[],"errorcode":401,"errortext":"unable to verify user credentials and/or request signature"}}`,
			func(err error) bool { var e *cloudstack.CredentialsRefusedError; return errors.As(err, &e) }},
		"431": {431, `{"listvirtualmachinesresponse":{"uuidList":[],"errorcode":431,"cserrorcode":4350,"errortext":"bad value"}}`,
			func(err error) bool {
				var e *cloudstack.APIError
				return errors.As(err, &e) && e.ErrorCode == 431 && e.CSErrorCode == 4350 && e.Text == "bad value"
			}},
		"530 with body": {530, `{"listvirtualmachinesresponse":{"uuidList":[],"errorcode":530,"cserrorcode":4250,"errortext":"boom"}}`,
			func(err error) bool { var e *cloudstack.APIError; return errors.As(err, &e) && e.ErrorCode == 530 }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			c, logs := newClient(t, srv.URL+"/client/api", nil)
			_, err := c.FindVM("cpivm-x")
			if err == nil || !tc.check(err) || calls.Load() != 1 {
				t.Fatalf("err %v (%T) calls %d", err, err, calls.Load())
			}
			assertNoSecrets(t, err.Error(), logs.String())
		})
	}
}

func TestUnreachableNamesEndpointWithinTimeout(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/client/api"
	srv.Close()
	c, logs := newClient(t, url, func(cs *config.CloudStack) { cs.RequestTimeout = config.Duration(time.Second) })
	start := time.Now()
	_, err := c.FindVM("cpivm-x")
	var unreachable *cloudstack.UnreachableError
	if !errors.As(err, &unreachable) || !strings.Contains(err.Error(), url) {
		t.Fatalf("got %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %s with a 1s request timeout", took)
	}
	assertNoSecrets(t, err.Error(), logs.String())
}

func TestSlowServerIsBoundedByRequestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	c, _ := newClient(t, srv.URL+"/client/api", func(cs *config.CloudStack) {
		cs.RequestTimeout = config.Duration(300 * time.Millisecond)
	})
	start := time.Now()
	_, err := c.FindVM("cpivm-x")
	var unreachable *cloudstack.UnreachableError
	if !errors.As(err, &unreachable) || time.Since(start) > 2*time.Second {
		t.Fatalf("got %v after %s", err, time.Since(start))
	}
	assertNoSecrets(t, err.Error())
}

func TestUntrustedCertificateIsRefused(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, vmList())
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	_, err := c.FindVM("cpivm-x")
	var tlsErr *cloudstack.TLSError
	if !errors.As(err, &tlsErr) || !strings.Contains(err.Error(), "ca_cert") {
		t.Fatalf("want a TLS error, got %v", err)
	}
	assertNoSecrets(t, err.Error())
}

func TestCACertIsTrusted(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, vmList())
	}))
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	c, _ := newClient(t, srv.URL+"/client/api", func(cs *config.CloudStack) { cs.CACert = ca })
	if _, err := c.FindVM("cpivm-x"); err != nil {
		t.Fatal(err)
	}
	insecure, _ := newClient(t, srv.URL+"/client/api", func(cs *config.CloudStack) { cs.SkipVerifySSL = true })
	if _, err := insecure.FindVM("cpivm-x"); err != nil {
		t.Fatalf("skip_verify_ssl: %v", err)
	}
}

func TestHTTPProxyIsUsed(t *testing.T) {
	var seenHost string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seenHost = r.URL.Host // a forward proxy sees the absolute URL
		fmt.Fprint(w, vmList())
	}))
	defer proxy.Close()
	c, _ := newClient(t, "http://cloudstack.invalid/client/api", func(cs *config.CloudStack) { cs.HTTPProxy = proxy.URL })
	if _, err := c.FindVM("cpivm-x"); err != nil || seenHost != "cloudstack.invalid" {
		t.Fatalf("err %v, proxy saw host %q", err, seenHost)
	}
}

func TestCreatingCommandsAreNotResentAfterAnAmbiguousFailure(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "bad gateway", http.StatusBadGateway) // CloudStack may have acted
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/client/api", nil)
	_, err := c.GetUploadParams(cloudstack.TemplateSpec{Name: "n", DisplayText: "n", Format: "VHD",
		Hypervisor: "XenServer", ZoneIDs: []string{vmUUID}, Bits: 64})
	if err == nil || calls.Load() != 1 {
		t.Fatalf("getUploadParamsForTemplate sent %d times (err %v): it creates a template", calls.Load(), err)
	}
}

func TestUploadsWaitForASlowSecondaryStorageVM(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(1500 * time.Millisecond) // unpacking and checking the image
		fmt.Fprint(w, "upload successful.")
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/client/api", func(cs *config.CloudStack) { cs.RequestTimeout = config.Duration(time.Second) })
	resp, err := c.UploadClient().Post(srv.URL+"/upload/x", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatalf("the upload gave up before the SSVM answered: %v", err)
	}
	resp.Body.Close()
}
