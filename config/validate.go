package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/trust"
)

// Validate checks what decoding cannot: required keys, URLs, enums and PEM.
func (c Config) Validate() error {
	cs := c.CloudStack
	required := []struct{ path, value string }{
		{"cloudstack.endpoint", cs.Endpoint},
		{"cloudstack.api_key", cs.APIKey},
		{"cloudstack.secret_access_key", cs.SecretAccessKey},
		{"cloudstack.default_zone", cs.DefaultZone},
	}
	for _, r := range required {
		if strings.TrimSpace(r.value) == "" {
			return fmt.Errorf("%s is required", r.path)
		}
	}
	if err := checkEndpoint(cs.Endpoint); err != nil {
		return err
	}
	if cs.HTTPProxy != "" {
		if err := checkURL("cloudstack.http_proxy", cs.HTTPProxy); err != nil {
			return err
		}
	}
	if err := trust.Check(trust.PEM{Setting: "cloudstack.ca_cert", Text: cs.CACert}); err != nil {
		return err
	}
	if r := *cs.MaxRetries; r < 0 || r > MaxMaxRetries {
		return fmt.Errorf("cloudstack.max_retries is %d; want retries from 0 to %d", r, MaxMaxRetries)
	}
	if cs.APIRateLimit != nil && !(*cs.APIRateLimit >= 0 && *cs.APIRateLimit <= MaxAPIRateLimit) {
		return fmt.Errorf("cloudstack.api_rate_limit is %g; want requests per second from 0 (off) to %d",
			*cs.APIRateLimit, MaxAPIRateLimit)
	}
	if cs.JobPollMaxInterval < cs.JobPollInterval {
		return fmt.Errorf("cloudstack.job_poll_max_interval (%s) is shorter than cloudstack.job_poll_interval (%s)",
			cs.JobPollMaxInterval, cs.JobPollInterval)
	}
	if err := c.checkMinimums(); err != nil {
		return err
	}
	if cs.DefaultCPUSpeed < 0 {
		return fmt.Errorf("cloudstack.default_cpu_speed is %d; it must be a positive number of MHz", cs.DefaultCPUSpeed)
	}
	if !slices.Contains(AffinityGroupTypes, cs.AffinityGroupType) {
		return fmt.Errorf("cloudstack.affinity_group_type is %q; want one of %q", cs.AffinityGroupType, AffinityGroupTypes)
	}
	if c.Agent.MBus != "" {
		if err := checkAnyURL("agent.mbus", c.Agent.MBus); err != nil {
			return err
		}
	}
	if err := c.checkRegistryCredentials(); err != nil {
		return err
	}
	if err := cs.Calculate.check(); err != nil {
		return err
	}
	if err := cs.checkNames(); err != nil {
		return err
	}
	return c.validateServices()
}

// checkNames refuses names CloudStack can hold no match for.
func (cs CloudStack) checkNames() error {
	if d := cs.DefaultCustomDiskOffering; d != "" && strings.TrimSpace(d) == "" {
		return fmt.Errorf("cloudstack.default_custom_disk_offering is blank; name a customized disk offering or leave the key out")
	}
	if cs.Project != strings.TrimSpace(cs.Project) {
		return fmt.Errorf("cloudstack.project %q has leading or trailing spaces; CloudStack names match exactly", cs.Project)
	}
	return nil
}

// check refuses tags no offering can carry: CloudStack stores an offering's
// tags as one comma-separated string of trimmed, non-empty tags
// (StringUtils.csvTagsToList splits on commas and trims), so an empty tag,
// one with a comma or surrounding spaces could never match, and a tag both
// wanted and refused leaves nothing to pick.
func (k Calculate) check() error {
	lists := []struct {
		path, opposite string
		tags, refused  []string
	}{
		{"cloudstack.calculate.compute_tags", "cloudstack.calculate.not_compute_tags", k.ComputeTags, k.NotComputeTags},
		{"cloudstack.calculate.not_compute_tags", "", k.NotComputeTags, nil},
		{"cloudstack.calculate.disk_tags", "cloudstack.calculate.not_disk_tags", k.DiskTags, k.NotDiskTags},
		{"cloudstack.calculate.not_disk_tags", "", k.NotDiskTags, nil},
	}
	for _, l := range lists {
		for i, tag := range l.tags {
			switch {
			case strings.TrimSpace(tag) == "":
				return fmt.Errorf("%s[%d] is empty; a CloudStack offering tag has at least one character", l.path, i)
			case strings.Contains(tag, ","):
				return fmt.Errorf("%s[%d] %q holds a comma, which separates CloudStack's tags; list each tag on its own", l.path, i, tag)
			case strings.TrimSpace(tag) != tag:
				return fmt.Errorf("%s[%d] %q has surrounding spaces, which CloudStack trims off offering tags", l.path, i, tag)
			case slices.ContainsFunc(l.refused, func(r string) bool { return strings.EqualFold(r, tag) }):
				return fmt.Errorf("%s and %s both name %q, so no offering could pass", l.path, l.opposite, tag)
			}
		}
	}
	return nil
}

// AffinityGroupTypes are the types a CPI's groups may have: the types of
// the AffinityGroupProcessor plugins of CloudStack 4.22 an account can
// create groups of (HostAntiAffinityProcessor, HostAffinityProcessor,
// NonStrictHostAntiAffinityProcessor, NonStrictHostAffinityProcessor, as
// their spring contexts name them). ExplicitDedication is left out: its
// groups are made by dedicating resources, not by createAffinityGroup.
var AffinityGroupTypes = []string{"host anti-affinity", "host affinity",
	"non-strict host anti-affinity", "non-strict host affinity"}

// Minimums below which a duration cannot work: a request or a job needs at
// least a second, a poll loop at 10 ms would only load CloudStack.
const (
	MinTimeout      = time.Second
	MinPollInterval = 10 * time.Millisecond
)

func (c Config) checkMinimums() error {
	cs := c.CloudStack
	for _, d := range []struct {
		path    string
		value   Duration
		atLeast time.Duration
	}{
		{"cloudstack.request_timeout", cs.RequestTimeout, MinTimeout},
		{"cloudstack.job_timeout", cs.JobTimeout, MinTimeout},
		{"cloudstack.job_poll_interval", cs.JobPollInterval, MinPollInterval},
		{"cloudstack.job_poll_max_interval", cs.JobPollMaxInterval, MinPollInterval},
		{"stemcell.timeout", c.Stemcell.Timeout, MinTimeout},
	} {
		if d.value.D() < d.atLeast {
			return fmt.Errorf("%s is %s; it must be at least %s", d.path, d.value, d.atLeast)
		}
	}
	return nil
}

// checkEndpoint wants CloudStack's API URL, http(s)://host[:port]/client/api:
// cloudstack-go appends "?<signed query>" to it as given.
func checkEndpoint(raw string) error {
	const path = "cloudstack.endpoint"
	if err := checkURL(path, raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	switch {
	case u.User != nil:
		return fmt.Errorf("%s %q must not carry a user or a password (user:password@): the CPI signs each request "+
			"with cloudstack.api_key and cloudstack.secret_access_key, and nothing else may hold a secret", path, redactURL(u))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Errorf("%s %q must not have a query string or a fragment: the CPI adds its own query", path, redactURL(u))
	case !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/client/api"):
		return fmt.Errorf("%s %q must be CloudStack's API URL, with a path ending in /client/api "+
			"(e.g. https://cloudstack.example.com:8443/client/api)", path, redactURL(u))
	}
	return nil
}

// checkAnyURL wants an absolute URL with a host, of any scheme (nats://,
// https://).
func checkAnyURL(path, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s is not a URL", path)
	}
	if u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("%s %q must be a URL like nats://user:password@host:4222", path, redactURL(u))
	}
	return nil
}

// checkRegistryCredentials: a BOSH registry asks for basic auth, so an
// endpoint without a password could only fail later, at create_vm.
func (c Config) checkRegistryCredentials() error {
	r := c.Registry
	if r.Endpoint == "" {
		return nil
	}
	if u, err := url.Parse(r.Endpoint); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			return nil
		}
	}
	if r.Username == "" || r.Password == "" {
		return fmt.Errorf("registry.endpoint needs registry.username and registry.password")
	}
	return nil
}

func (c Config) validateServices() error {
	switch c.Stemcell.Publish {
	case PublishUpload, PublishWebDAV:
	default:
		return fmt.Errorf("stemcell.publish is %q; want %q or %q", c.Stemcell.Publish, PublishUpload, PublishWebDAV)
	}
	switch c.Stemcell.ConfigDrivePublish {
	case PublishUpload:
	case PublishWebDAV:
		if c.WebDAV.Listen == "" {
			return fmt.Errorf("stemcell.config_drive_publish is webdav, so webdav.listen (HOST:PORT or HOST:LOW-HIGH) is required")
		}
	default:
		return fmt.Errorf("stemcell.config_drive_publish is %q; want %q, %q or %q", c.Stemcell.ConfigDrivePublish,
			PublishAuto, PublishUpload, PublishWebDAV)
	}
	if c.Stemcell.Publish == PublishWebDAV && c.WebDAV.Listen == "" && c.WebDAV.DaemonURL == "" {
		return fmt.Errorf("stemcell.publish is webdav, so webdav.listen (HOST:PORT or HOST:LOW-HIGH) is required")
	}
	if c.WebDAV.Listen != "" {
		if err := checkListenRange("webdav.listen", c.WebDAV.Listen); err != nil {
			return err
		}
	}
	if c.WebDAV.MaxAge.D() < MinTimeout {
		return fmt.Errorf("webdav.max_age is %s; it must be at least %s", c.WebDAV.MaxAge, MinTimeout)
	}
	if b := c.Stemcell.Bits; b != 32 && b != 64 {
		return fmt.Errorf("stemcell.bits is %d; want 32 or 64", b)
	}
	urls := []struct{ path, value string }{
		{"registry.endpoint", c.Registry.Endpoint},
		{"webdav.public_url", c.WebDAV.PublicURL},
		{"webdav.daemon_url", c.WebDAV.DaemonURL},
	}
	for _, u := range urls {
		if u.value == "" {
			continue
		}
		if err := checkURL(u.path, u.value); err != nil {
			return err
		}
	}
	return nil
}

func checkURL(path, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		// url's own error quotes the whole URL, credentials and all.
		return fmt.Errorf("%s is not a URL", path)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%s must be an http:// or https:// URL, got %q", path, redactURL(u))
	}
	if u.Host == "" {
		return fmt.Errorf("%s has no host: %q", path, redactURL(u))
	}
	return nil
}

// redactURL keeps credentials an operator put in a URL out of error messages.
func redactURL(u *url.URL) string {
	if u.User == nil {
		return u.String()
	}
	c := *u
	c.User = url.User("REDACTED")
	return c.String()
}

// checkKeys walks the decoded JSON beside the struct it will fill and names
// the first key the struct has no field for, so a typo cannot pass silently.
func checkKeys(raw any, into any, path string) error {
	return walkKeys(raw, reflect.TypeOf(into), path)
}

func walkKeys(raw any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(Duration(0)) {
		return checkDuration(raw, path)
	}
	obj, isObj := raw.(map[string]any)
	if t.Kind() != reflect.Struct {
		return nil
	}
	if !isObj {
		if raw == nil && path != "" {
			// null would decode as the section left out: say so rather
			// than run on defaults the operator may not have meant.
			return fmt.Errorf("%s is null: give it an object or leave the key out", path)
		}
		if raw == nil {
			return nil
		}
		return fmt.Errorf("%s must be an object", displayPath(path))
	}
	fields := jsonFields(t)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ft, ok := fields[k]
		if !ok {
			return unknownKey(path, k, fields)
		}
		if err := walkKeys(obj[k], ft, joinPath(path, k)); err != nil {
			return err
		}
	}
	return nil
}

// unknownKey names a key the schema has no field for at path, and the
// known key there it is likely a misspelling of.
func unknownKey(path, key string, fields map[string]reflect.Type) error {
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	if guess := nearest(key, known); guess != "" {
		return fmt.Errorf("unknown key %s (did you mean %s?)", joinPath(path, key), joinPath(path, guess))
	}
	return fmt.Errorf("unknown key %s", joinPath(path, key))
}

func checkDuration(raw any, path string) error {
	b, _ := json.Marshal(raw)
	var d Duration
	if err := d.UnmarshalJSON(b); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
	return fields
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func displayPath(path string) string {
	if path == "" {
		return "the config"
	}
	return path
}

// Duration accepts Go duration strings ("90s", "250ms") or whole seconds.
type Duration time.Duration

// D is the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalJSON reads "1m30s" or 90.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var secs float64
	if err := json.Unmarshal(b, &secs); err == nil {
		if secs <= 0 {
			return fmt.Errorf("duration %s must be positive", string(b))
		}
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"30s\" or a number of seconds, got %s", string(b))
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return fmt.Errorf("duration %q must be positive, like \"30s\" or \"5m\"", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }
