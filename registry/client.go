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
	"net/url"
	"strings"
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
		return nil, fmt.Errorf("registry GET %s answered %d", id, status)
	}
	var envelope struct {
		Settings string `json:"settings"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return nil, fmt.Errorf("registry GET %s: %w", id, err)
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
	_, status, err := c.do(http.MethodPut, id, settings)
	if err != nil {
		return err
	}
	if status != http.StatusOK && status != http.StatusCreated {
		return fmt.Errorf("registry PUT %s answered %d", id, status)
	}
	return nil
}

// Delete removes settings for id; absent already is success.
func (c *Client) Delete(id string) error {
	_, status, err := c.do(http.MethodDelete, id, nil)
	if err != nil {
		return err
	}
	switch status {
	case http.StatusOK, http.StatusNoContent, http.StatusNotFound:
		return nil
	}
	return fmt.Errorf("registry DELETE %s answered %d", id, status)
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
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, 0, fmt.Errorf("registry at %s: %w", c.endpoint, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return data, resp.StatusCode, err
}
