package kernel

import (
	"strings"
	"sync"
	"time"
)

// LoggedRequest is one API request as the admin endpoint reports it (the
// request log is a simulator feature with no CloudStack counterpart).
type LoggedRequest struct {
	Time      time.Time         `json:"time"`
	Method    string            `json:"method"`
	Command   string            `json:"command"` // canonical spelling when the command exists
	Params    map[string]string `json:"params"`  // secrets replaced by "[redacted]"
	Status    int               `json:"status"`
	LatencyMS float64           `json:"latencyms"`
	JobID     string            `json:"jobid,omitempty"` // job queued by an async command
	Fault     string            `json:"fault,omitempty"` // injected fault, if any
}

// Redacted replaces secret parameter values in the log.
const Redacted = "[redacted]"

// secretWords mark parameters whose values never leave the simulator. Like
// CloudStack's own log masking, a parameter is secret when its lowercased
// name contains one of them.
var secretWords = []string{"apikey", "signature", "secret", "password", "sessionkey", "userdata",
	"token", "accesskey", "credential", "authorization"}

func isSecret(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

func redact(raw rawParams) map[string]string {
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if isSecret(k) {
			v = Redacted
		}
		out[k] = v
	}
	return out
}

// maxLogged bounds memory in long runs; the oldest entries go first.
const maxLogged = 100000

type requestLog struct {
	mu      sync.Mutex
	entries []LoggedRequest
}

func (l *requestLog) Add(e LoggedRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.entries) >= maxLogged {
		l.entries = append(l.entries[:0], l.entries[len(l.entries)-maxLogged+1:]...)
	}
	l.entries = append(l.entries, e)
}

func (l *requestLog) Snapshot() []LoggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LoggedRequest{}, l.entries...)
}

func (l *requestLog) Clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = nil
}
