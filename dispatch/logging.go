package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
)

// noRequestID tags the log of a request without a readable request_id.
const noRequestID = "no-request-id"

// maxLogged bounds what the log shows of the request_id every line starts
// with, and of the method: a director's request_id is "cpi-" and six
// digits, and a request of any length is answered, but a long request_id
// would be repeated on every line.
const maxLogged = 64

// cutForLog is s cut to maxLogged characters and "…".
func cutForLog(s string) string {
	if len(s) <= maxLogged {
		return s
	}
	if r := []rune(s); len(r) > maxLogged {
		return string(r[:maxLogged]) + "…"
	}
	return s
}

// requestID reads context.request_id from a request that may be malformed,
// cut for the log.
func requestID(request []byte) string {
	var req struct {
		Context struct {
			RequestID string `json:"request_id"`
		} `json:"context"`
	}
	if json.Unmarshal(request, &req) != nil || req.Context.RequestID == "" {
		return noRequestID
	}
	return cutForLog(req.Context.RequestID)
}

// describeRequest names the method and the argument count, never the
// arguments: they can hold passwords and certificates.
func describeRequest(request []byte) string {
	var req struct {
		Method     string            `json:"method"`
		Arguments  []json.RawMessage `json:"arguments"`
		APIVersion int               `json:"api_version"`
	}
	if json.Unmarshal(request, &req) != nil {
		return "request is not valid JSON"
	}
	return fmt.Sprintf("method=%s arguments=%d api_version=%d", cutForLog(req.Method), len(req.Arguments), req.APIVersion)
}

// newLogger tags every stderr line with the request id, so a director task
// log that interleaves many CPI calls can be read per call.
func newLogger(w io.Writer, id string) boshlog.Logger {
	return boshlog.NewWriterLogger(boshlog.LevelDebug, &prefixWriter{w: w, prefix: []byte("[" + id + "] ")})
}

type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	body := bytes.TrimSuffix(b, []byte("\n"))
	lines := bytes.Split(body, []byte("\n"))
	var out bytes.Buffer
	for _, line := range lines {
		out.Write(p.prefix)
		out.Write(line)
		out.WriteByte('\n')
	}
	if _, err := p.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}
