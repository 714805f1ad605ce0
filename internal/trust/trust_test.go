package trust_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/trust"
)

// privateServer is an HTTPS server on loopback whose certificate no system
// root signs, and that certificate as PEM.
func privateServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	block := &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}
	return srv, string(pem.EncodeToMemory(block))
}

func get(t *testing.T, url string, pems ...trust.PEM) error {
	t.Helper()
	transport, err := trust.Transport(pems...)
	if err != nil {
		t.Fatal(err)
	}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Get(url)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

func TestTransportTrustsAConfiguredBundle(t *testing.T) {
	srv, cert := privateServer(t)
	if err := get(t, srv.URL, trust.PEM{Setting: "cloudstack.ca_cert"}, trust.PEM{Setting: "webdav.tls_cert", Text: cert}); err != nil {
		t.Fatalf("a server whose certificate is configured is refused: %v", err)
	}
}

func TestTransportWithoutTheBundleRefusesAPrivateCertificate(t *testing.T) {
	srv, _ := privateServer(t)
	err := get(t, srv.URL, trust.PEM{Setting: "cloudstack.ca_cert"})
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("a private certificate without its bundle: err = %v, want an unknown authority", err)
	}
}

func TestABundleWithoutACertificateIsAnErrorNamingItsSetting(t *testing.T) {
	_, cert := privateServer(t)
	for _, text := range []string{"not a certificate", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
		strings.Replace(cert, "CERTIFICATE", "PRIVATE KEY", 2)} {
		pems := []trust.PEM{{Setting: "cloudstack.ca_cert", Text: cert}, {Setting: "registry.tls_cert", Text: text}}
		if _, err := trust.Pool(pems...); err == nil || !strings.Contains(err.Error(), "registry.tls_cert holds no PEM certificate") {
			t.Errorf("Pool with %q: err = %v, want one naming registry.tls_cert", text, err)
		}
		if _, err := trust.Config(pems...); err == nil || !strings.Contains(err.Error(), "registry.tls_cert") {
			t.Errorf("Config with %q: err = %v, want one naming registry.tls_cert", text, err)
		}
		if _, err := trust.Transport(pems...); err == nil || !strings.Contains(err.Error(), "registry.tls_cert") {
			t.Errorf("Transport with %q: err = %v, want one naming registry.tls_cert", text, err)
		}
		if err := trust.Check(pems[1]); err == nil || !strings.Contains(err.Error(), "registry.tls_cert") {
			t.Errorf("Check with %q: err = %v, want one naming registry.tls_cert", text, err)
		}
	}
}

func TestNoBundleMeansTheSystemRoots(t *testing.T) {
	pool, err := trust.Pool(trust.PEM{Setting: "cloudstack.ca_cert"}, trust.PEM{Setting: "webdav.tls_cert"})
	if err != nil || pool != nil {
		t.Fatalf("Pool of empty bundles = %v, %v; want nil (crypto/tls's system roots), nil", pool, err)
	}
	if err := trust.Check(trust.PEM{Setting: "cloudstack.ca_cert"}); err != nil {
		t.Fatalf("Check of an empty bundle: %v", err)
	}
}

func TestAValidBundleChecksAndConfigIsTLS12OrLater(t *testing.T) {
	_, cert := privateServer(t)
	if err := trust.Check(trust.PEM{Setting: "cloudstack.ca_cert", Text: cert}); err != nil {
		t.Fatalf("Check of a certificate: %v", err)
	}
	config, err := trust.Config(trust.PEM{Setting: "cloudstack.ca_cert", Text: cert})
	if err != nil {
		t.Fatal(err)
	}
	if config.MinVersion != tls.VersionTLS12 || config.RootCAs == nil || config.InsecureSkipVerify {
		t.Fatalf("Config = MinVersion %x, RootCAs %v, InsecureSkipVerify %v", config.MinVersion, config.RootCAs, config.InsecureSkipVerify)
	}
}
