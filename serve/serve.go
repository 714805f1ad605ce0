// Package serve is `cloudstack-cpi serve`: the long-lived side of the CPI.
// It runs the BOSH registry (registry.listen) for stemcells older than
// api_version 2 and the WebDAV daemon (webdav.dir) that hands stemcell
// images to CloudStack's secondary storage VM, each on its own listener
// (or both on one, when their addresses are the same) with GET /healthz,
// optional TLS, and a graceful stop.
package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/registry"
	"github.com/bosh-cloudstack/cloudstack-cpi/webdav"
)

// ShutdownGrace bounds how long requests in flight may run after a stop
// signal: registry writes take milliseconds, image downloads may not finish.
const ShutdownGrace = 30 * time.Second

// Logf is where serve logs; it never gets a secret or a request body.
type Logf func(format string, args ...any)

// Service is one listener and what it serves.
type Service struct {
	Name     string // "registry" or "webdav"
	listener net.Listener
	server   *http.Server
	scheme   string
}

// URL is the bound address as a URL.
func (s *Service) URL() string { return s.scheme + "://" + s.listener.Addr().String() }

// Servers are the services of one config, bound and ready to Serve.
type Servers struct {
	Services []*Service
	daemon   *webdav.Daemon
	maxAge   time.Duration
	logf     Logf
}

// Start binds every service the config enables; cfg must have passed
// ValidateServe.
func Start(cfg config.Config, logf Logf) (*Servers, error) {
	s := &Servers{logf: logf, maxAge: cfg.WebDAV.MaxAge.D()}
	if err := s.bind(cfg); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *Servers) bind(cfg config.Config) error {
	r, w := cfg.Registry, cfg.WebDAV
	var reg http.Handler
	if cfg.RegistryServed() {
		store, err := registry.OpenStore(r.StoreDir)
		if err != nil {
			return err
		}
		if reg, err = registry.NewServer(store, registry.ServerOptions{Username: r.Username, Password: r.Password,
			OpenGet: r.OpenGet, Logf: s.logf}); err != nil {
			return err
		}
	}
	if cfg.WebDAVServed() {
		d, err := webdav.NewDaemon(webdav.DaemonOptions{Dir: w.Dir, Username: w.Username, Password: w.Password,
			MaxAge: w.MaxAge.D(), Logf: s.logf})
		if err != nil {
			return err
		}
		s.daemon = d
	}
	if cfg.SharedListener() {
		return s.add("registry+webdav", "registry.listen", r.Listen, r.TLSCert, r.TLSKey,
			byPath{registry: reg, webdav: s.daemon})
	}
	if reg != nil {
		if err := s.add("registry", "registry.listen", r.Listen, r.TLSCert, r.TLSKey, reg); err != nil {
			return err
		}
	}
	if s.daemon != nil {
		return s.add("webdav", "webdav.listen", w.Listen, w.TLSCert, w.TLSKey, s.daemon)
	}
	return nil
}

// byPath serves the registry and the WebDAV daemon on one listener: the
// registry's paths are /instances/<id>/settings, the daemon's images
// /<32 hex digits>/<name>, so no path is both.
type byPath struct{ registry, webdav http.Handler }

func (b byPath) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/instances/") {
		b.registry.ServeHTTP(w, r)
		return
	}
	b.webdav.ServeHTTP(w, r)
}

func (s *Servers) add(name, listenKey, listen, cert, key string, h http.Handler) error {
	ln, err := new(net.ListenConfig).Listen(context.Background(), "tcp", listen)
	if err != nil {
		return fmt.Errorf("%s: %w", listenKey, err)
	}
	scheme := "http"
	if cert != "" {
		pair, err := tls.X509KeyPair([]byte(cert), []byte(key))
		if err != nil {
			ln.Close()
			section, _, _ := strings.Cut(listenKey, ".")
			return fmt.Errorf("%s.tls_cert and %s.tls_key are not a PEM certificate and its key", section, section)
		}
		ln = tls.NewListener(ln, &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}})
		scheme = "https"
	}
	// No ServeMux: it would clean and redirect paths the handlers must
	// see as sent to refuse them.
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write([]byte("ok"))
			return
		}
		h.ServeHTTP(w, r)
	})
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	s.Services = append(s.Services, &Service{Name: name, listener: ln, server: srv, scheme: scheme})
	return nil
}

func (s *Servers) close() {
	for _, svc := range s.Services {
		svc.listener.Close()
	}
}

// Serve runs every service until ctx ends, then stops taking requests,
// lets those in flight finish for up to grace, and returns. A service that
// fails stops the others.
func (s *Servers) Serve(ctx context.Context, grace time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(s.Services))
	var wg sync.WaitGroup
	for _, svc := range s.Services {
		s.logf("%s listening on %s", svc.Name, svc.URL())
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := svc.server.Serve(svc.listener); !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("%s: %w", svc.Name, err)
				cancel()
			}
		}()
	}
	if s.daemon != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.daemon.CollectGarbage(ctx, webdav.GCInterval(s.maxAge))
		}()
	}
	<-ctx.Done()
	s.logf("stopping: finishing requests in flight (at most %s)", grace)
	shutdownCtx, stop := context.WithTimeout(context.Background(), grace)
	defer stop()
	var shutdownErrs []error
	for _, svc := range s.Services {
		if err := svc.server.Shutdown(shutdownCtx); err != nil {
			shutdownErrs = append(shutdownErrs, fmt.Errorf("%s: %w", svc.Name, err))
			_ = svc.server.Close()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		shutdownErrs = append(shutdownErrs, err)
	}
	return errors.Join(shutdownErrs...)
}
