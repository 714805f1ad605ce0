package cloudstack_test

import (
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// TestPlainHTTPToAnHTTPSPortSaysSo: http:// to a port that speaks TLS is
// named as such, whether the server answers plain HTTP with a 400 (Go's
// server) or just closes the connection (Jetty's), for a read and for a
// command that creates something.
func TestPlainHTTPToAnHTTPSPortSaysSo(t *testing.T) {
	answering := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a plain HTTP request reached the handler")
	}))
	answering.Config.ErrorLog = log.New(io.Discard, "", 0)
	answering.StartTLS()
	defer answering.Close()
	for name, addr := range map[string]string{
		"answers 400": answering.Listener.Addr().String(),
		"closes":      closingTLSPort(t),
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := newClient(t, "http://"+addr+"/client/api", func(cfg *config.CloudStack) { *cfg.MaxRetries = 0 })
			_, err := c.FindZones([]string{"z"})
			var plain *cloudstack.PlainHTTPError
			if !errors.As(err, &plain) || !strings.Contains(err.Error(), "speaks HTTPS: use https://") {
				t.Fatalf("listZones: %v", err)
			}
			_, err = c.CreateVolume("bosh-disk-1", "z", "o", 1, nil)
			if !errors.As(err, &plain) || !cloudstack.NotActedOn(err) {
				t.Fatalf("createVolume: %v", err)
			}
		})
	}
}

// TestAnHTTPPortIsNotTakenForTLS: a plain HTTP server's non-JSON answer
// stays an unexpected answer.
func TestAnHTTPPortIsNotTakenForTLS(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>proxy error</html>", http.StatusBadGateway)
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/client/api", func(cfg *config.CloudStack) { *cfg.MaxRetries = 0 })
	_, err := c.FindZones([]string{"z"})
	var plain *cloudstack.PlainHTTPError
	if err == nil || errors.As(err, &plain) {
		t.Fatalf("got %v", err)
	}
}

// closingTLSPort is a TLS port that, like Jetty's, drops a connection whose
// first bytes are not a TLS handshake.
func closingTLSPort(t *testing.T) string {
	t.Helper()
	cert := httptest.NewTLSServer(nil)
	cfg := &tls.Config{Certificates: cert.TLS.Certificates}
	cert.Close()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
			}(conn)
		}
	}()
	return ln.Addr().String()
}
