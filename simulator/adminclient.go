package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// AdminClient talks to a simulator's /sim/ endpoints. Simulator plumbing:
// the /sim/ API is the simulator's own, no CloudStack Java behind it.
type AdminClient struct {
	// BaseURL is the simulator's root, e.g. "http://127.0.0.1:8080"; an API
	// URL ending in /client/api works too.
	BaseURL string
	// HTTP is the client to use; nil means http.DefaultClient.
	HTTP *http.Client
}

// Health checks that the simulator answers.
func (a *AdminClient) Health() error {
	return a.do(http.MethodGet, "/sim/health", nil, nil)
}

// Requests returns the request log, oldest first.
func (a *AdminClient) Requests() ([]kernel.LoggedRequest, error) {
	var out []kernel.LoggedRequest
	err := a.do(http.MethodGet, "/sim/requests", nil, &out)
	return out, err
}

// ClearRequests empties the request log.
func (a *AdminClient) ClearRequests() error {
	return a.do(http.MethodDelete, "/sim/requests", nil, nil)
}

// CountRequests counts logged requests for a command (case-insensitive).
func (a *AdminClient) CountRequests(command string) (int, error) {
	reqs, err := a.Requests()
	return CountCommand(reqs, command), err
}

// CountCommand counts the requests for a command (case-insensitive).
func CountCommand(reqs []kernel.LoggedRequest, command string) int {
	n := 0
	for _, r := range reqs {
		if strings.EqualFold(r.Command, command) {
			n++
		}
	}
	return n
}

// AddFault adds a fault-injection rule after the existing ones.
func (a *AdminClient) AddFault(f kernel.Fault) error {
	return a.do(http.MethodPost, "/sim/faults", f, nil)
}

// Faults lists the active rules.
func (a *AdminClient) Faults() ([]kernel.Fault, error) {
	var out []kernel.Fault
	err := a.do(http.MethodGet, "/sim/faults", nil, &out)
	return out, err
}

// ClearFaults removes every rule.
func (a *AdminClient) ClearFaults() error {
	return a.do(http.MethodDelete, "/sim/faults", nil, nil)
}

func (a *AdminClient) do(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(a.BaseURL, "/"), "/client/api")
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		return err
	}
	req.SetBasicAuth(AdminUser, AdminPassword)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := a.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("simulator %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
