// Package registry holds the BOSH registry: the client the CPI uses to keep
// agent settings for stemcells older than api_version 2, and (with `serve`)
// the server those agents read from.
package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Client reads and writes /instances/<id>/settings.
type Client struct {
	endpoint *url.URL // without credentials
	username string
	password string
	http     *http.Client
}

// NewClient takes the endpoint and credentials; credentials written into
// the endpoint URL are used when none are given, and never stay in URLs.
func NewClient(endpoint, username, password string, httpClient *http.Client) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("registry.endpoint must be an http(s) URL")
	}
	if u.User != nil {
		if username == "" {
			username = u.User.Username()
			password, _ = u.User.Password()
		}
		u.User = nil
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{endpoint: u, username: username, password: password, http: httpClient}, nil
}

// ErrNotFound is a registry without settings for the instance.
var ErrNotFound = errors.New("registry has no settings for this instance")

func (c *Client) url(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, "/\\") || id == "." || id == ".." {
		return "", fmt.Errorf("registry instance id %q is not a plain name", id)
	}
	u := *c.endpoint
	u.Path = strings.TrimSuffix(u.Path, "/") + "/instances/" + url.PathEscape(id) + "/settings"
	return u.String(), nil
}

// Get returns the settings JSON stored for id.
func (c *Client) Get(id string) ([]byte, error) {
	body, status, err := c.do(http.MethodGet, id, nil)
	if err != nil {
		return nil, err
	}
	if status == http.StatusNotFound {
		return nil, ErrNotFound
	}
	if status != http.StatusOK {
		return nil, c.refused(http.MethodGet, id, status, body)
	}
	var envelope struct {
		Settings string `json:"settings"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return nil, fmt.Errorf("the registry at %s answered GET of %s's settings with no settings envelope: %w",
			c.endpoint, id, err)
	}
	// Another registry (or an older one of this CPI's) may hold what this
	// one refuses to store.
	if err := checkSettings([]byte(envelope.Settings)); err != nil {
		return nil, fmt.Errorf("registry GET %s: %w", id, err)
	}
	return []byte(envelope.Settings), nil
}

// Put stores settings for id.
func (c *Client) Put(id string, settings []byte) error {
	body, status, err := c.do(http.MethodPut, id, settings)
	if err != nil {
		return err
	}
	if status != http.StatusOK && status != http.StatusCreated {
		return c.refused(http.MethodPut, id, status, body)
	}
	return nil
}

// Delete removes settings for id; absent already is success.
func (c *Client) Delete(id string) error {
	body, status, err := c.do(http.MethodDelete, id, nil)
	if err != nil {
		return err
	}
	switch status {
	case http.StatusOK, http.StatusNoContent, http.StatusNotFound:
		return nil
	}
	return c.refused(http.MethodDelete, id, status, body)
}

func (c *Client) do(method, id string, body []byte) ([]byte, int, error) {
	u, err := c.url(id)
	if err != nil {
		return nil, 0, err
	}
	// The client's Timeout bounds the request: the CPI method it serves has
	// no context of its own to pass.
	req, err := http.NewRequestWithContext(context.Background(), method, u, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	if c.username != "" {
		req.SetBasicAuth(c.username, c.password)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// Whether the request went out tells a registry that never saw it
	// (down, a refused certificate) from one that may have acted on it.
	var sent atomic.Bool // set by the transport's writer
	req = req.WithContext(httptrace.WithClientTrace(req.Context(),
		&httptrace.ClientTrace{WroteHeaders: func() { sent.Store(true) }}))
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, 0, &Error{sent: sent.Load(),
			err: fmt.Errorf("the registry at %s did not answer %s of %s's settings: %w", c.endpoint, method, id, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return data, resp.StatusCode, err
}

// Error is a request the registry refused or never answered.
type Error struct {
	answered bool // with a failure
	sent     bool // the request went out: a registry that never answered may have acted on it
	err      error
}

func (e *Error) Error() string { return e.err.Error() }
func (e *Error) Unwrap() error { return e.err }

// maxSaid bounds how much of a refusal's body an error repeats.
const maxSaid = 200

// refused is a request the registry answered with a failure: its status
// and what it said (the body, on one line and cut short); a refusal of the
// credentials says which settings to check.
func (c *Client) refused(method, id string, status int, body []byte) error {
	said := []rune(strings.Join(strings.Fields(string(body)), " "))
	if len(said) > maxSaid {
		said = append(said[:maxSaid], '…')
	}
	msg := fmt.Sprintf("the registry at %s answered %s of %s's settings with %d %s", c.endpoint, method, id, status,
		http.StatusText(status))
	if len(said) > 0 {
		msg += " " + string(said)
	}
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		msg += ": it refused the username and password the CPI sent (registry.username, registry.password)"
	}
	return &Error{answered: true, err: errors.New(msg)}
}

// Unchanged says a failed request certainly left the registry as it was:
// the registry answered it with a failure, or it never went out (nothing
// listens, the registry's certificate was refused). A request sent and
// never answered may have been carried out.
func Unchanged(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.answered || !e.sent)
}
