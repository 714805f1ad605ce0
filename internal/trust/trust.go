// Package trust builds the TLS trust the CPI's clients share: the system
// roots plus the PEM bundles an operator configured (cloudstack.ca_cert,
// registry.tls_cert, webdav.tls_cert), so a private CA works the same way
// for CloudStack's API, the registry and the WebDAV daemon.
package trust

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
)

// PEM is one configured bundle and the setting it came from, which names it
// in errors.
type PEM struct {
	Setting string
	Text    string
}

// Check says whether a non-empty bundle holds at least one certificate.
func Check(p PEM) error {
	return add(x509.NewCertPool(), p)
}

// Pool is the system roots plus every non-empty bundle. With no bundle it is
// nil, which crypto/tls reads as "the system roots". A bundle without a
// certificate is an error: trusting less than the operator asked for would
// only show later, as an unknown-authority failure far from its cause.
func Pool(pems ...PEM) (*x509.CertPool, error) {
	var pool *x509.CertPool
	for _, p := range pems {
		if p.Text == "" {
			continue
		}
		if pool == nil {
			pool = systemPool()
		}
		if err := add(pool, p); err != nil {
			return nil, err
		}
	}
	return pool, nil
}

func add(pool *x509.CertPool, p PEM) error {
	if p.Text != "" && !pool.AppendCertsFromPEM([]byte(p.Text)) {
		return fmt.Errorf("%s holds no PEM certificate", p.Setting)
	}
	return nil
}

// Config is TLS 1.2 or later, trusting Pool(pems...).
func Config(pems ...PEM) (*tls.Config, error) {
	pool, err := Pool(pems...)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}, nil
}

// Transport is http.DefaultTransport's proxy, dialer and timeouts with
// Config(pems...).
func Transport(pems ...PEM) (*http.Transport, error) {
	config, err := Config(pems...)
	if err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = config
	return t, nil
}

// systemPool is a copy of the system roots, or an empty pool where the
// system has none to give (the configured bundles are then all it trusts).
func systemPool() *x509.CertPool {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		return x509.NewCertPool()
	}
	return pool
}
