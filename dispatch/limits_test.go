package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testconfig"
)

// endlessRequest is a request's beginning followed by padding that never
// ends: a test's stdin that fails once read past the byte after
// maxRequest, which is all a reader needs to know the request is too big.
type endlessRequest struct {
	head []byte
	read int
}

func (r *endlessRequest) Read(p []byte) (int, error) {
	if r.read > maxRequest {
		return 0, fmt.Errorf("stdin was read past the limit, to byte %d", r.read)
	}
	n := 0
	for n < len(p) {
		if r.read < len(r.head) {
			c := copy(p[n:], r.head[r.read:])
			n, r.read = n+c, r.read+c
			continue
		}
		p[n] = 'a'
		n, r.read = n+1, r.read+1
	}
	return n, nil
}

// TestAnOversizedRequestIsRefusedUnread (issue 24.6): a request over 2 MiB
// is answered with a CpiError naming the limit, exit 0 as any bad request,
// and stdin is not read past the limit (the reader fails if it is), so the
// rest costs neither memory nor time.
func TestAnOversizedRequestIsRefusedUnread(t *testing.T) {
	stdin := &endlessRequest{head: []byte(`{"method":"info","arguments":[],"context":{"x":"`)}
	var out, errOut bytes.Buffer
	code := Answer(Files{ConfigPath: testconfig.Write(t, testconfig.Good)}, stdin, &out, &errOut)
	resp := decodeResponse(t, out.Bytes())
	if code != 0 || resp.Error == nil || resp.Error.Type != "Bosh::Clouds::CpiError" ||
		!strings.Contains(resp.Error.Message, "over the CloudStack CPI's limit of 2 MiB (2097152 bytes)") {
		t.Fatalf("exit %d, answer %s", code, out.String())
	}
	if !strings.Contains(errOut.String(), "[no-request-id]") || !strings.Contains(errOut.String(), "2 MiB") {
		t.Fatalf("the log does not say why: %q", errOut.String())
	}
}

// TestARequestOfExactlyTheLimitIsServed: the limit is 2 MiB itself.
func TestARequestOfExactlyTheLimitIsServed(t *testing.T) {
	req := `{"method":"info","arguments":[],"context":{"request_id":"cpi-9"}}`
	resp, _ := call(t, Files{ConfigPath: testconfig.Write(t, testconfig.Good)}, req+strings.Repeat(" ", maxRequest-len(req)))
	if resp.Error != nil {
		t.Fatalf("a request of %d bytes: %+v", maxRequest, resp.Error)
	}
}

// TestRequestShapeLimits: a request of more values or deeper nesting than
// a director ever sends is refused, naming the limit and where it was
// passed; within them it is served.
func TestRequestShapeLimits(t *testing.T) {
	good := testconfig.Write(t, testconfig.Good)
	// The request, method, arguments, context and x are 5 values; the
	// request is at depth 1, context at 2, x's arrays from 3.
	many := func(n int) string {
		return `{"method":"info","arguments":[],"context":{"x":[` + strings.Repeat("0,", n-1) + `0]}}`
	}
	deep := func(n int) string {
		return `{"method":"info","arguments":[],"context":{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
	}
	for name, c := range map[string]struct{ stdin, want string }{
		"values": {many(9996), "(10000 values, nested at most 64 deep): context.x[9995]: more than 10000 values"},
		"depth":  {deep(63), "context.x" + strings.Repeat("[0]", 62) + ": objects and arrays nested more than 64 deep"},
	} {
		resp, _ := call(t, Files{ConfigPath: good}, c.stdin)
		if resp.Error == nil || resp.Error.Type != "Bosh::Clouds::CpiError" || !strings.Contains(resp.Error.Message, c.want) {
			t.Errorf("%s: got %+v, want %q", name, resp.Error, c.want)
		}
	}
	for _, within := range []string{many(9995), deep(62)} {
		if resp, _ := call(t, Files{ConfigPath: good}, within); resp.Error != nil {
			t.Errorf("a request within the limits: %+v", resp.Error)
		}
	}
}

// TestALongRequestIDIsCutInTheLog (issue 24.6): every log line starts with
// the request_id cut to 64 characters and "…", not the whole of it.
func TestALongRequestIDIsCutInTheLog(t *testing.T) {
	id := "cpi-" + strings.Repeat("é", 1<<19)
	_, logs := call(t, Files{ConfigPath: testconfig.Write(t, testconfig.Good)},
		`{"method":"info","arguments":[],"context":{"request_id":"`+id+`"}}`)
	prefix := "[" + string([]rune(id)[:64]) + "…] "
	lines := strings.Split(strings.TrimSuffix(logs, "\n"), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, prefix) || len(l) > len(prefix)+1000 {
			t.Fatalf("a log line does not start with the cut request_id: %.200q", l)
		}
	}
}

func decodeResponse(t *testing.T, out []byte) response {
	t.Helper()
	var resp response
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("stdout is not a JSON response: %q (%v)", out, err)
	}
	return resp
}
