// The /sim/ endpoints (request log, fault rules, health) are test
// instruments of the simulator's own: no CloudStack Java stands behind them
// (docs/development/simulator-fidelity.md, "Simulator features with no Java").

package simulator

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// Credentials of the /sim/ endpoints (HTTP basic auth).
const (
	AdminUser     = "admin"
	AdminPassword = "password"
)

// adminHandler serves the test endpoints (a simulator feature: CloudStack
// has no /sim/):
//
//	GET    /sim/health    {"status":"ok"}
//	GET    /sim/requests  the request log, oldest first ([]LoggedRequest)
//	DELETE /sim/requests  empty the request log
//	GET    /sim/faults    active fault rules ([]Fault, with "fired" counts)
//	POST   /sim/faults    add a rule (a Fault object, or an array of them)
//	DELETE /sim/faults    remove all rules; the requests their delays hold go on
func (s *Server) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/sim/health", s.adminHealth)
	mux.HandleFunc("/sim/requests", s.adminRequests)
	mux.HandleFunc("/sim/faults", s.adminFaults)
	return requireBasicAuth(mux)
}

func requireBasicAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pw, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(AdminUser)) != 1 ||
			subtle.ConstantTimeCompare([]byte(pw), []byte(AdminPassword)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="cloudstack-simulator"`)
			writeAdminJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) adminHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w)
		return
	}
	writeAdminJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) adminRequests(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		writeAdminJSON(w, http.StatusOK, s.Reqlog.Snapshot())
	case http.MethodDelete:
		s.Reqlog.Clear()
		w.WriteHeader(http.StatusNoContent)
	default:
		methodNotAllowed(w)
	}
}

func (s *Server) adminFaults(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		writeAdminJSON(w, http.StatusOK, s.Faults.List())
	case http.MethodDelete:
		s.Faults.Clear()
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPost:
		rules, err := decodeFaults(r.Body)
		if err == nil {
			err = s.addFaults(rules)
		}
		if err != nil {
			writeAdminJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		writeAdminJSON(w, http.StatusCreated, s.Faults.List())
	default:
		methodNotAllowed(w)
	}
}

// addFaults checks every rule before adding any, so a bad batch changes
// nothing.
func (s *Server) addFaults(rules []kernel.Fault) error {
	for i := range rules {
		if err := rules[i].Check(); err != nil {
			return err
		}
	}
	for _, f := range rules {
		if err := s.Faults.Add(f); err != nil {
			return err
		}
	}
	return nil
}

func decodeFaults(body io.Reader) ([]kernel.Fault, error) {
	b, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if strings.HasPrefix(string(b), "[") {
		var rules []kernel.Fault
		err := json.Unmarshal(b, &rules)
		return rules, err
	}
	var f kernel.Fault
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	return []kernel.Fault{f}, nil
}

func methodNotAllowed(w http.ResponseWriter) {
	writeAdminJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
}

func writeAdminJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
