package cloudstack

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"time"
)

// PlainHTTPError means cloudstack.endpoint says http:// but the port
// answers TLS. Servers answer plain HTTP on a TLS port in their own ways
// (Go's with a 400 "Client sent an HTTP request to an HTTPS server.",
// nginx's with an HTML page, Jetty's by closing the connection), none of it
// JSON, so the CPI asks the port itself.
type PlainHTTPError struct {
	Endpoint string
	Err      error
}

func (e *PlainHTTPError) Error() string {
	return fmt.Sprintf("cloudstack.endpoint %s is http://, but that port speaks HTTPS: use https:// (%v)", e.Endpoint, e.Err)
}

func (e *PlainHTTPError) Unwrap() error { return e.Err }

// tlsProbeTimeout bounds the handshake that tells a TLS port.
const tlsProbeTimeout = 3 * time.Second

// plainHTTPToTLS turns the failure of a request to an http:// endpoint into
// a PlainHTTPError when the endpoint's port completes a TLS handshake. The
// probe sends no request and no credentials, and runs only after a
// failure.
func (c *Client) plainHTTPToTLS(err error) error {
	if u, perr := url.Parse(c.endpoint); perr == nil && u.Scheme == "http" && speaksTLS(u) {
		return &PlainHTTPError{Endpoint: c.endpoint, Err: err}
	}
	return nil
}

// speaksTLS tells whether u's port completes a TLS handshake; a port that
// does not, or cannot be reached, is no sign of a plain-HTTP mistake.
func speaksTLS(u *url.URL) bool {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	// Only whether the port speaks TLS matters, not whom: nothing is sent.
	// The NetDialer's timeout bounds the dial and the handshake together.
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: tlsProbeTimeout}, Config: &tls.Config{InsecureSkipVerify: true}}
	conn, err := dialer.DialContext(context.Background(), "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return false
	}
	_ = conn.Close() // the handshake was the answer; nothing was sent to lose
	return true
}
