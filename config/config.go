// Package config holds the schema of cpi.json: what an operator may set, the
// defaults for what they leave out, and the checks that refuse a bad file
// before the CPI talks to CloudStack.
package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
)

// Config is the whole of cpi.json.
type Config struct {
	CloudStack CloudStack `json:"cloudstack"`
	Agent      Agent      `json:"agent"`
	Registry   Registry   `json:"registry"`
	Stemcell   Stemcell   `json:"stemcell"`
	WebDAV     WebDAV     `json:"webdav"`
}

// CloudStack says where the management server is and how to talk to it.
type CloudStack struct {
	Endpoint        string `json:"endpoint"`
	APIKey          string `json:"api_key"`
	SecretAccessKey string `json:"secret_access_key"`
	DefaultZone     string `json:"default_zone"`
	// Project is a CloudStack project (name or id) the CPI works in: every
	// command that takes projectid carries it, so what the CPI makes belongs
	// to the project and its lookups see the project's resources only.
	Project string `json:"project"`

	// CACert is a PEM bundle trusted in addition to the system roots.
	CACert        string `json:"ca_cert"`
	SkipVerifySSL bool   `json:"skip_verify_ssl"`
	// HTTPProxy overrides the proxy taken from HTTPS_PROXY/HTTP_PROXY/NO_PROXY.
	HTTPProxy string `json:"http_proxy"`

	// RequestTimeout bounds one call, its retries and its waits on
	// CloudStack's API throttle included.
	RequestTimeout Duration `json:"request_timeout"`
	// JobTimeout bounds the wait for a job, polls the throttle refuses
	// included.
	JobTimeout         Duration `json:"job_timeout"`
	JobPollInterval    Duration `json:"job_poll_interval"`
	JobPollMaxInterval Duration `json:"job_poll_max_interval"`
	// MaxRetries bounds retries of transient failures (connection errors,
	// 5xx without a CloudStack body); the API throttle's 429s are waited
	// out apart from it, within RequestTimeout.
	MaxRetries *int `json:"max_retries"`
	// StateDir holds the state the CPI processes of one host share: the
	// token bucket that keeps their API calls under the account's limit and
	// how long each command's jobs take. Empty: the directory the job's
	// bin/cpi names (-stateDir), else none (no bucket, no learned polling).
	StateDir string `json:"state_dir"`
	// APIRateLimit is the requests per second the host's CPI processes send
	// with one API key, together; 0 turns the bucket off. Unset: 90 % of
	// the limit listCapabilities reports while CloudStack's throttle is on,
	// for an account that is not a root admin (which the throttle exempts).
	APIRateLimit *float64 `json:"api_rate_limit"`

	DefaultComputeOffering       string `json:"default_compute_offering"`
	DefaultDiskOffering          string `json:"default_disk_offering"`
	DefaultEphemeralDiskOffering string `json:"default_ephemeral_disk_offering"`
	DefaultKeyPair               string `json:"default_key_pair"`
	// DefaultCPUSpeed is the MHz a customized offering whose speed is
	// settable gets when a VM type gives cpu and ram but no cpu_speed.
	DefaultCPUSpeed int `json:"default_cpu_speed"`
	// AutoAntiAffinity puts every instance group's VMs in a host
	// anti-affinity group named <director uuid>-<instance group>.
	AutoAntiAffinity  bool   `json:"auto_anti_affinity"`
	AffinityGroupType string `json:"affinity_group_type"`
	// ExpungeVM destroys VMs with expunge=true; accounts that may not expunge
	// fall back to a plain destroy.
	ExpungeVM *bool `json:"expunge_vm"`
	// DefaultCustomDiskOffering is the customized disk offering used where
	// no offering is named: disks without disk_offering or
	// default_disk_offering, ephemeral disks without an offering, and
	// resize_disk's move off a fixed offering.
	DefaultCustomDiskOffering string    `json:"default_custom_disk_offering"`
	Calculate                 Calculate `json:"calculate"`
}

// Calculate filters the offerings calculate_vm_cloud_properties may answer
// by their CloudStack tags, as the earlier CPIs did: an offering passes when
// it carries at least one of the wanted tags (when any are given) and none
// of the unwanted ones. Compute tags are a compute offering's storage tags
// (the service offering's "tags" the earlier CPIs read), disk tags a disk
// offering's tags; disk tags also make the answer name an ephemeral disk
// offering.
type Calculate struct {
	ComputeTags    []string `json:"compute_tags"`
	NotComputeTags []string `json:"not_compute_tags"`
	DiskTags       []string `json:"disk_tags"`
	NotDiskTags    []string `json:"not_disk_tags"`
}

// Agent holds what every BOSH agent is told about the director.
type Agent struct {
	MBus      string    `json:"mbus"`
	NTP       []string  `json:"ntp"`
	Blobstore Blobstore `json:"blobstore"`
}

// Blobstore is the agent's blobstore; its options are provider-specific.
type Blobstore struct {
	Provider string         `json:"provider"`
	Options  map[string]any `json:"options"`
}

// Registry is the BOSH registry for stemcells older than api_version 2:
// endpoint and credentials for the CPI; listen, store_dir, open_get and TLS
// for `serve`.
type Registry struct {
	Endpoint string `json:"endpoint"`
	Username string `json:"username"`
	Password string `json:"password"`
	Listen   string `json:"listen"`
	StoreDir string `json:"store_dir"`
	// OpenGet lets agents read settings without credentials.
	OpenGet bool `json:"open_get"`
	// TLSCert and TLSKey (PEM) make `serve` answer HTTPS.
	TLSCert string `json:"tls_cert"`
	TLSKey  string `json:"tls_key"`
}

// Stemcell chooses how stemcell images reach CloudStack.
type Stemcell struct {
	// Publish is "upload" (getUploadParamsForTemplate + POST) or "webdav"
	// (registerTemplate with a URL the secondary storage VM downloads).
	Publish string   `json:"publish"`
	Timeout Duration `json:"timeout"`
	// Zones to publish every stemcell to; empty means the default zone.
	Zones []string `json:"zones"`
	// Defaults for what a stemcell's cloud_properties may override.
	Hypervisor  string `json:"hypervisor"` // XenServer, KVM, VMware or Simulator
	OSType      string `json:"os_type"`    // a listOsTypes description
	RequiresHVM *bool  `json:"requires_hvm"`
	Bits        int    `json:"bits"`
	Public      bool   `json:"public"`
	Extractable bool   `json:"extractable"`

	// ConfigDrive makes bosh.io's OpenStack stemcells (on KVM or
	// XenServer) templates whose VMs read their settings from a per-VM
	// config drive ISO, and its vSphere stemcells (on VMware) ones whose
	// VMs read them from a per-VM CD-ROM ISO: on by default, as their
	// agents read nothing CloudStack itself serves.
	// false keeps them on user data, for a site whose metadata proxy
	// serves it on 169.254.169.254, where their agent's HTTP source looks.
	ConfigDrive *bool `json:"config_drive"`
	// ConfigDriveOSType is the OS type of templates of OpenStack stemcells
	// on KVM: an Ubuntu one, for which CloudStack's KVM agent gives the
	// root disk a virtio bus. On XenServer they take OSType.
	ConfigDriveOSType string `json:"config_drive_os_type"`
	// ConfigDrivePublish is how such a stemcell's VMs' config drive ISOs
	// reach CloudStack: "upload" (getUploadParamsForIso + POST), "webdav"
	// (registerIso with a URL this process serves on webdav.listen) or
	// "auto", the default, which Load resolves to one of them
	// (AutoConfigDrivePublish): an upload is ready only at CloudStack's
	// next upload monitor poll, a download as soon as it is done.
	ConfigDrivePublish string `json:"config_drive_publish"`
	// ConfigDriveTimeout bounds the wait for the ISO to be ready: an
	// upload is ready at CloudStack's next upload monitor poll
	// (upload.monitoring.interval, 60 s by default).
	ConfigDriveTimeout Duration `json:"config_drive_timeout"`
}

// WebDAV is the server that hands stemcell images to CloudStack's
// secondary storage VM.
// With daemon_url the CPI hands images to a `serve` daemon (on the same
// host through dir, from elsewhere by PUT with username and password);
// without it, each create_stemcell serves its image itself on listen.
type WebDAV struct {
	Listen    string `json:"listen"`
	PublicURL string `json:"public_url"`
	Dir       string `json:"dir"`
	Username  string `json:"username"`
	Password  string `json:"password"`
	DaemonURL string `json:"daemon_url"`
	// MaxAge is how long the daemon keeps an image the CPI did not remove.
	MaxAge Duration `json:"max_age"`
	// TLSCert and TLSKey (PEM) make the daemon answer HTTPS.
	TLSCert string `json:"tls_cert"`
	TLSKey  string `json:"tls_key"`
}

// Defaults an operator gets by leaving a key out.
const (
	DefaultRequestTimeout     = 60 * time.Second
	DefaultJobTimeout         = 30 * time.Minute
	DefaultJobPollInterval    = 250 * time.Millisecond
	DefaultJobPollMaxInterval = 2 * time.Second
	DefaultMaxRetries         = 5
	// MaxMaxRetries bounds cloudstack.max_retries: retries wait 250 ms
	// doubling to 4 s, so 100 of them wait nearly 7 minutes, past any
	// request_timeout that still bounds one API request.
	MaxMaxRetries = 100
	// MaxAPIRateLimit bounds cloudstack.api_rate_limit: past it the bucket
	// would only cost its file lock.
	MaxAPIRateLimit           = 100000
	DefaultStemcellTimeout    = 60 * time.Minute
	DefaultStemcellOSType     = "Other Linux (64-bit)"
	DefaultConfigDriveOSType  = "Ubuntu 22.04 LTS"
	DefaultConfigDriveTimeout = 10 * time.Minute
	PublishUpload             = "upload"
	PublishWebDAV             = "webdav"
	PublishAuto               = "auto"
	DefaultWebDAVMaxAge       = 24 * time.Hour
)

// Load reads, decodes, defaults and validates the file at path.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading CPI config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("CPI config %s: %w", path, err)
	}
	return cfg, nil
}

// LoadServe reads the file at path for `serve`: the sections it serves are
// checked, and the cloudstack section is not needed.
func LoadServe(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading config: %w", err)
	}
	cfg, err := ParseServe(data)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseServe decodes config content for `serve`.
func ParseServe(data []byte) (Config, error) { return parse(data, Config.ValidateServe) }

// Parse decodes cpi.json content, refusing unknown keys by their path.
func Parse(data []byte) (Config, error) { return parse(data, Config.Validate) }

// parse decodes and defaults config content, then validates it for its use.
func parse(data []byte, validate func(Config) error) (Config, error) {
	cfg, err := decode(data)
	if err != nil {
		return Config{}, err
	}
	if err := validate(cfg); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// decode reads and defaults cpi.json without validating it.
func decode(data []byte) (Config, error) {
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return Config{}, fmt.Errorf("not valid JSON: %w", err)
	}
	if e := jsonwords.Scan(data, jsonwords.Limits{}); e != nil {
		return Config{}, e
	}
	var cfg Config
	if err := checkKeys(raw, cfg, ""); err != nil {
		return Config{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("decoding: %w", err)
	}
	cfg.applyDefaults()
	return cfg, nil
}

func (c *Config) applyDefaults() {
	cs := &c.CloudStack
	defaultDuration(&cs.RequestTimeout, DefaultRequestTimeout)
	defaultDuration(&cs.JobTimeout, DefaultJobTimeout)
	defaultDuration(&cs.JobPollInterval, DefaultJobPollInterval)
	defaultDuration(&cs.JobPollMaxInterval, DefaultJobPollMaxInterval)
	if cs.MaxRetries == nil {
		n := DefaultMaxRetries
		cs.MaxRetries = &n
	}
	if cs.DefaultCPUSpeed == 0 {
		cs.DefaultCPUSpeed = 1000
	}
	if cs.AffinityGroupType == "" {
		cs.AffinityGroupType = "host anti-affinity"
	}
	if cs.ExpungeVM == nil {
		yes := true
		cs.ExpungeVM = &yes
	}
	if c.Stemcell.Publish == "" {
		c.Stemcell.Publish = PublishUpload
	}
	defaultDuration(&c.Stemcell.Timeout, DefaultStemcellTimeout)
	if c.Stemcell.OSType == "" {
		c.Stemcell.OSType = DefaultStemcellOSType
	}
	if c.Stemcell.ConfigDriveOSType == "" {
		c.Stemcell.ConfigDriveOSType = DefaultConfigDriveOSType
	}
	if c.Stemcell.ConfigDrive == nil {
		yes := true
		c.Stemcell.ConfigDrive = &yes
	}
	if c.Stemcell.ConfigDrivePublish == "" || c.Stemcell.ConfigDrivePublish == PublishAuto {
		c.Stemcell.ConfigDrivePublish = c.AutoConfigDrivePublish()
	}
	defaultDuration(&c.Stemcell.ConfigDriveTimeout, DefaultConfigDriveTimeout)
	if c.Stemcell.Bits == 0 {
		c.Stemcell.Bits = 64
	}
	defaultDuration(&c.WebDAV.MaxAge, DefaultWebDAVMaxAge)
}

// ConfigDriveOn says OpenStack KVM stemcells get a config drive: unless
// config_drive is false.
func (s Stemcell) ConfigDriveOn() bool { return s.ConfigDrive == nil || *s.ConfigDrive }

// AutoConfigDrivePublish is what config_drive_publish "auto" means: webdav
// when the CPI serves its own WebDAV server on webdav.listen (no `serve`
// daemon holds that address, through webdav.dir or webdav.daemon_url, nor
// the registry), else upload. BenchmarkConfigDriveCreateVM measured
// create_vm at 9.0 s by webdav against 64.0 s by upload (2 s jobs), which
// waits for CloudStack's upload monitor (upload.monitoring.interval, 60 s
// by default).
func (c Config) AutoConfigDrivePublish() string {
	w := c.WebDAV
	if w.Listen != "" && w.Dir == "" && w.DaemonURL == "" && w.Listen != c.Registry.Listen {
		return PublishWebDAV
	}
	return PublishUpload
}

func defaultDuration(d *Duration, def time.Duration) {
	if *d == 0 {
		*d = Duration(def)
	}
}
