package registry

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
)

// MaxSettingsSize bounds a PUT body; agent settings are a few KiB.
const MaxSettingsSize = 1 << 20

// checkSettings refuses what no agent reads as its settings: bosh-agent
// decodes them into an object (settings.Settings), so null, a string or an
// array, though JSON, would fail the agent at boot, far from the write.
func checkSettings(settings []byte) error {
	var v any
	if err := json.Unmarshal(settings, &v); err != nil {
		return errors.New("settings are not JSON")
	}
	if _, isObject := v.(map[string]any); !isObject {
		return fmt.Errorf("settings must be a JSON object, not %s", jsonwords.Kind(v))
	}
	return nil
}

// Server is the BOSH registry's HTTP API over a Store:
//
//	GET    /instances/<id>/settings  200 {"status":"ok","settings":"<json>"} or 404 {"status":"not_found"}
//	PUT    /instances/<id>/settings  201 created or 200 updated, {"status":"ok"}
//	DELETE /instances/<id>/settings  200 {"status":"ok"}, absent or not
//
// PUT and DELETE need basic auth; GET too unless OpenGet.
type Server struct {
	store    *Store
	userHash [32]byte
	passHash [32]byte
	openGet  bool
	logf     func(format string, args ...any)
}

// ServerOptions configure a Server. Username and Password must be set.
type ServerOptions struct {
	Username, Password string
	OpenGet            bool
	// Logf receives failures of the store (never credentials or settings).
	Logf func(format string, args ...any)
}

// NewServer serves store.
func NewServer(store *Store, o ServerOptions) (*Server, error) {
	if o.Username == "" || o.Password == "" {
		return nil, errors.New("the registry needs a username and a password for writes")
	}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Server{store: store, userHash: sha256.Sum256([]byte(o.Username)),
		passHash: sha256.Sum256([]byte(o.Password)), openGet: o.OpenGet, logf: logf}, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := instanceID(r.URL.Path)
	if !ok {
		reply(w, http.StatusNotFound, map[string]string{"status": "not_found"})
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, HEAD, PUT, DELETE")
		reply(w, http.StatusMethodNotAllowed, map[string]string{"status": "error", "error": "method not allowed"})
		return
	}
	readOnly := r.Method == http.MethodGet || r.Method == http.MethodHead
	if !(readOnly && s.openGet) && !s.authorized(r) {
		// Nothing about the instance or the credentials is said.
		w.Header().Set("WWW-Authenticate", `Basic realm="Bosh Registry"`)
		reply(w, http.StatusUnauthorized, map[string]string{"status": "access_denied"})
		return
	}
	if ValidID(id) != nil {
		reply(w, http.StatusBadRequest, map[string]string{"status": "error", "error": "invalid instance id"})
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.get(w, id)
	case http.MethodPut:
		s.put(w, r, id)
	case http.MethodDelete:
		if _, err := s.store.Delete(id); err != nil {
			s.fail(w, "DELETE", err)
			return
		}
		reply(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

// instanceID takes <id> out of /instances/<id>/settings. The id is
// validated after authentication, so that a caller without credentials
// learns nothing, not even which ids are well formed.
func instanceID(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/instances/")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "/settings")
}

func (s *Server) authorized(r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	u, p := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(pass))
	// Both compared whatever the first says: the time taken tells nothing.
	userOK := subtle.ConstantTimeCompare(u[:], s.userHash[:])
	passOK := subtle.ConstantTimeCompare(p[:], s.passHash[:])
	return userOK&passOK == 1
}

func (s *Server) get(w http.ResponseWriter, id string) {
	settings, err := s.store.Get(id)
	if errors.Is(err, ErrNotFound) {
		reply(w, http.StatusNotFound, map[string]string{"status": "not_found"})
		return
	}
	if err != nil {
		s.fail(w, "GET", err)
		return
	}
	reply(w, http.StatusOK, map[string]string{"status": "ok", "settings": string(settings)})
}

func (s *Server) put(w http.ResponseWriter, r *http.Request, id string) {
	if r.ContentLength > MaxSettingsSize {
		reply(w, http.StatusRequestEntityTooLarge, map[string]string{"status": "error", "error": "settings too large"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxSettingsSize))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		reply(w, http.StatusRequestEntityTooLarge, map[string]string{"status": "error", "error": "settings too large"})
		return
	case err != nil:
		reply(w, http.StatusBadRequest, map[string]string{"status": "error", "error": "reading the body failed"})
		return
	}
	if err := checkSettings(body); err != nil {
		reply(w, http.StatusBadRequest, map[string]string{"status": "error", "error": err.Error()})
		return
	}
	created, err := s.store.Put(id, body)
	if err != nil {
		s.fail(w, "PUT", err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	reply(w, status, map[string]string{"status": "ok"})
}

func (s *Server) fail(w http.ResponseWriter, method string, err error) {
	s.logf("registry %s failed: %s", method, err)
	reply(w, http.StatusInternalServerError, map[string]string{"status": "error"})
}

func reply(w http.ResponseWriter, status int, body map[string]string) {
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
