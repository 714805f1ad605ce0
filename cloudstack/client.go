// Package cloudstack is the CPI's narrow layer over cloudstack-go: one
// client per CPI call with verified TLS, bounded retries of transient
// failures, its own async-job waiting, exact lookups and typed errors.
// Nothing it logs carries a key, a signature or user data.
package cloudstack

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/trust"
)

const logTag = "cloudstack"

// Client talks to one CloudStack management server.
type Client struct {
	cs       *csgo.CloudStackClient
	api      *retryTransport
	upload   *http.Client
	endpoint string // scheme://host/path, never with credentials
	logger   boshlog.Logger
	jobs     jobPolicy
	project  project
	// state is the host's state file (statefile.go); nil without one.
	state *stateFile
}

// New builds a client from the cloudstack section of cpi.json. It makes no
// request: a CPI call that needs no CloudStack costs nothing.
func New(cfg config.CloudStack, logger boshlog.Logger, opts ...Option) (*Client, error) {
	endpoint, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("cloudstack.endpoint: %w", err)
	}
	base, err := baseTransport(cfg)
	if err != nil {
		return nil, err
	}
	safeEndpoint := endpoint.Scheme + "://" + endpoint.Host + endpoint.Path
	rt := &retryTransport{
		next:    base,
		retries: *cfg.MaxRetries,
		bound:   cfg.RequestTimeout.D(),
		logger:  logger,
		clock:   realClock{},
		jitter:  randomJitter,
	}
	for _, o := range opts {
		o(rt)
	}
	c := &Client{
		cs:       newCS(cfg, rt),
		api:      rt,
		upload:   &http.Client{Transport: uploadTransport(base)},
		endpoint: safeEndpoint,
		logger:   logger,
		project:  project{ref: cfg.Project},
		jobs: jobPolicy{
			first:   cfg.JobPollInterval.D(),
			max:     cfg.JobPollMaxInterval.D(),
			timeout: cfg.JobTimeout.D(),
		},
		state: openState(cfg.StateDir, logger),
	}
	rt.bucket = c.newBucket(cfg, rt)
	return c, nil
}

func newCS(cfg config.CloudStack, rt *retryTransport) *csgo.CloudStackClient {
	httpClient := &http.Client{Transport: rt, Timeout: cfg.RequestTimeout.D()}
	// verifyssl is passed as !skip: the existing Go CPI passed the skip flag
	// itself and so turned verification off by default. Our transport sets
	// TLS anyway; this keeps cloudstack-go's own notion consistent.
	return csgo.NewClient(cfg.Endpoint, cfg.APIKey, cfg.SecretAccessKey, !cfg.SkipVerifySSL,
		csgo.WithHTTPClient(httpClient))
}

// ThrottleWaited is how long this client's calls have slept, in all, on
// CloudStack's API throttle's behalf (its 429s, and this host's rate
// bucket): doctor keeps it out of the latency it measures.
func (c *Client) ThrottleWaited() time.Duration { return time.Duration(c.api.waited.Load()) }

// UploadClient implements API.
func (c *Client) UploadClient() *http.Client { return c.upload }

// uploadTransport is the API's TLS and proxy without its header timeout:
// the secondary storage VM answers an upload only after it has unpacked and
// checked the image, which takes minutes; stemcell.timeout bounds it.
func uploadTransport(api *http.Transport) *http.Transport {
	t := api.Clone()
	t.ResponseHeaderTimeout = 0
	return t
}

func baseTransport(cfg config.CloudStack) (*http.Transport, error) {
	tlsConfig, err := trust.Config(trust.PEM{Setting: "cloudstack.ca_cert", Text: cfg.CACert})
	if err != nil {
		return nil, err
	}
	tlsConfig.InsecureSkipVerify = cfg.SkipVerifySSL
	proxy := http.ProxyFromEnvironment
	if cfg.HTTPProxy != "" {
		u, err := url.Parse(cfg.HTTPProxy)
		if err != nil {
			return nil, fmt.Errorf("cloudstack.http_proxy: %w", err)
		}
		proxy = http.ProxyURL(u)
	}
	return &http.Transport{
		Proxy:                 proxy,
		TLSClientConfig:       tlsConfig,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: cfg.RequestTimeout.D(),
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
	}, nil
}
