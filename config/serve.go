package config

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// RegistryServed says whether `serve` runs the registry.
func (c Config) RegistryServed() bool { return c.Registry.Listen != "" }

// WebDAVServed says whether `serve` runs the WebDAV daemon.
func (c Config) WebDAVServed() bool { return c.WebDAV.Dir != "" }

// ValidateServe checks a config for `serve`: at least one of the registry
// (registry.listen) and the WebDAV daemon (webdav.dir) is enabled, and each
// enabled one has what it needs. The cloudstack section is not needed.
func (c Config) ValidateServe() error {
	if err := c.validateServices(); err != nil {
		return err
	}
	if !c.RegistryServed() && !c.WebDAVServed() {
		return errors.New("serve has nothing to serve: set registry.listen (with registry.store_dir, " +
			"registry.username, registry.password) or webdav.dir (with webdav.listen)")
	}
	if c.RegistryServed() {
		r := c.Registry
		for _, req := range []struct{ path, value string }{
			{"registry.store_dir", r.StoreDir}, {"registry.username", r.Username}, {"registry.password", r.Password},
		} {
			if strings.TrimSpace(req.value) == "" {
				return fmt.Errorf("%s is required to serve the registry", req.path)
			}
		}
		if err := checkListen("registry.listen", r.Listen); err != nil {
			return err
		}
		if err := checkKeyPair("registry", r.TLSCert, r.TLSKey); err != nil {
			return err
		}
	}
	if err := c.checkSharedListener(); err != nil {
		return err
	}
	if c.WebDAVServed() {
		w := c.WebDAV
		if w.Listen == "" {
			return errors.New("webdav.listen is required to serve webdav.dir")
		}
		if err := checkListen("webdav.listen", w.Listen); err != nil {
			return err
		}
		if (w.Username == "") != (w.Password == "") {
			return errors.New("webdav.username and webdav.password go together")
		}
		if err := checkKeyPair("webdav", w.TLSCert, w.TLSKey); err != nil {
			return err
		}
	}
	return nil
}

// checkListen wants one HOST:PORT: a daemon has one address (port ranges
// are for the in-call WebDAV server).
func checkListen(path, listen string) error {
	_, port, err := net.SplitHostPort(listen)
	if err == nil {
		var n int
		n, err = strconv.Atoi(port)
		if err == nil && (n < 0 || n > 65535) {
			err = errors.New("port out of range")
		}
	}
	if err != nil {
		return fmt.Errorf("%s %q: want HOST:PORT (%w)", path, listen, err)
	}
	return nil
}

// checkListenRange wants HOST:PORT or HOST:LOW-HIGH with LOW <= HIGH, the
// in-call WebDAV server's form.
func checkListenRange(path, listen string) error {
	_, ports, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("%s %q: want HOST:PORT or HOST:LOW-HIGH (%w)", path, listen, err)
	}
	low, high, isRange := strings.Cut(ports, "-")
	if !isRange {
		high = low
	}
	from, err1 := strconv.Atoi(low)
	to, err2 := strconv.Atoi(high)
	switch {
	case err1 != nil || err2 != nil || from < 0 || to > 65535:
		return fmt.Errorf("%s %q: want HOST:PORT or HOST:LOW-HIGH with ports 0-65535", path, listen)
	case from > to:
		return fmt.Errorf("%s %q: the port range runs backwards (%d > %d)", path, listen, from, to)
	}
	return nil
}

func checkKeyPair(section, cert, key string) error {
	if cert == "" && key == "" {
		return nil
	}
	if cert == "" || key == "" {
		return fmt.Errorf("%s.tls_cert and %s.tls_key go together", section, section)
	}
	if _, err := tls.X509KeyPair([]byte(cert), []byte(key)); err != nil {
		// The error names neither the key nor its bytes.
		return fmt.Errorf("%s.tls_cert and %s.tls_key are not a PEM certificate and its key", section, section)
	}
	return nil
}

// SharedListener says whether one listener serves the registry and the
// WebDAV daemon: both are served on the same HOST:PORT (not port 0, which
// is a different free port each), as the Java CPI served its registry and
// its WebDAV on one port.
func (c Config) SharedListener() bool {
	return c.RegistryServed() && c.WebDAVServed() && c.Registry.Listen == c.WebDAV.Listen &&
		!strings.HasSuffix(c.Registry.Listen, ":0")
}

// checkSharedListener: a shared listener has one TLS pair; and a registry
// on the address where each create_stemcell serves its image itself
// (webdav.listen without webdav.dir or webdav.daemon_url) would leave
// create_stemcell no port, so serve refuses to start and says what to set.
func (c Config) checkSharedListener() error {
	r, w := c.Registry, c.WebDAV
	if c.SharedListener() && (r.TLSCert != w.TLSCert || r.TLSKey != w.TLSKey) {
		return fmt.Errorf("registry.listen and webdav.listen are both %q, one listener for both, "+
			"so registry.tls_cert/tls_key and webdav.tls_cert/tls_key must be the same", r.Listen)
	}
	if c.RegistryServed() && !c.WebDAVServed() && c.Stemcell.Publish == PublishWebDAV && w.DaemonURL == "" &&
		w.Listen == r.Listen {
		return fmt.Errorf("registry.listen and webdav.listen are both %q, but without webdav.dir each create_stemcell "+
			"serves its image itself there, where serve holds the registry: set webdav.dir (the Java CPI's "+
			"cpi.webdav_directory) so serve runs the WebDAV daemon on that listener too, or move one of them", r.Listen)
	}
	return nil
}
