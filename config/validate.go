package config

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"time"
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
	if err := checkURL("cloudstack.endpoint", cs.Endpoint); err != nil {
		return err
	}
	if cs.HTTPProxy != "" {
		if err := checkURL("cloudstack.http_proxy", cs.HTTPProxy); err != nil {
			return err
		}
	}
	if cs.CACert != "" && !x509.NewCertPool().AppendCertsFromPEM([]byte(cs.CACert)) {
		return fmt.Errorf("cloudstack.ca_cert holds no PEM certificate")
	}
	if *cs.MaxRetries < 0 {
		return fmt.Errorf("cloudstack.max_retries must not be negative")
	}
	if cs.JobPollMaxInterval < cs.JobPollInterval {
		return fmt.Errorf("cloudstack.job_poll_max_interval (%s) is shorter than cloudstack.job_poll_interval (%s)",
			cs.JobPollMaxInterval, cs.JobPollInterval)
	}
	return c.validateServices()
}

func (c Config) validateServices() error {
	switch c.Stemcell.Publish {
	case PublishUpload, PublishWebDAV:
	default:
		return fmt.Errorf("stemcell.publish is %q; want %q or %q", c.Stemcell.Publish, PublishUpload, PublishWebDAV)
	}
	if c.Stemcell.Publish == PublishWebDAV && c.WebDAV.Listen == "" && c.WebDAV.DaemonURL == "" {
		return fmt.Errorf("stemcell.publish is webdav, so webdav.listen (HOST:PORT or HOST:LOW-HIGH) is required")
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
			return fmt.Errorf("unknown key %s", joinPath(path, k))
		}
		if err := walkKeys(obj[k], ft, joinPath(path, k)); err != nil {
			return err
		}
	}
	return nil
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
