package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Fault stages.
const (
	StageRequest = "request" // answer the API request itself with the error
	StageJob     = "job"     // let the async job fail (jobstatus 2); the default for async commands
)

// Fault is a fault-injection rule (a simulator feature: no CloudStack Java
// behind it). Rules are tried in the order they were added; the first one
// whose command matches and that fires is applied.
//
// A rule lets its first Skip matching calls pass, then fires on the next
// Times matching calls; with Probability set it
// fires on each matching call with that probability instead (at most Times
// times when Times is also set). A rule with neither fires once. Probability
// draws come from a seeded generator, so runs are reproducible.
type Fault struct {
	Command     string        `json:"command"`               // API command, case-insensitive; "*" matches every command
	Times       int           `json:"times,omitempty"`       // fire on the next N matching calls
	Skip        int           `json:"skip,omitempty"`        // let the first N matching calls pass first
	Probability float64       `json:"probability,omitempty"` // fire with this probability (0..1)
	ErrorCode   int           `json:"errorcode,omitempty"`   // HTTP status and errorcode, e.g. 530, 533, 431, 429
	CSErrorCode int           `json:"cserrorcode,omitempty"` // defaults to what CloudStack pairs with ErrorCode
	ErrorText   string        `json:"errortext,omitempty"`   // defaults to CloudStack's generic error text
	Delay       time.Duration `json:"-"`                     // extra latency before the request is processed, ended early by clearing the rules; JSON "delay": "1.5s" or milliseconds
	Pending     bool          `json:"pending,omitempty"`     // the async job never completes
	Lost        bool          `json:"lost,omitempty"`        // the command runs, then the connection is dropped before the answer
	Raw         bool          `json:"raw,omitempty"`         // plain-text HTTP error without a CloudStack body (e.g. 503 from a proxy)
	Stage       string        `json:"stage,omitempty"`       // StageRequest or StageJob

	Fired int `json:"fired,omitempty"` // output only: how often the rule has fired

	// cleared ends Delay early: it is closed when the rules are cleared,
	// so a test can hold a request until it has done what must come
	// first, then let it go on.
	cleared <-chan struct{}
}

type faultJSON Fault

// MarshalJSON writes Delay as a Go duration string.
func (f Fault) MarshalJSON() ([]byte, error) {
	type wire struct {
		faultJSON
		Delay string `json:"delay,omitempty"`
	}
	w := wire{faultJSON: faultJSON(f)}
	if f.Delay > 0 {
		w.Delay = f.Delay.String()
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads Delay as a duration string ("250ms") or a number of
// milliseconds.
func (f *Fault) UnmarshalJSON(b []byte) error {
	var w struct {
		faultJSON
		Delay json.RawMessage `json:"delay"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*f = Fault(w.faultJSON)
	f.Delay = 0
	if len(w.Delay) == 0 || string(w.Delay) == "null" {
		return nil
	}
	var ms float64
	if err := json.Unmarshal(w.Delay, &ms); err == nil {
		f.Delay = time.Duration(ms * float64(time.Millisecond))
		return nil
	}
	var s string
	if err := json.Unmarshal(w.Delay, &s); err != nil {
		return fmt.Errorf("delay: %w", err)
	}
	d, err := time.ParseDuration(s)
	f.Delay = d
	return err
}

// Check rejects rules that would do nothing or cannot apply.
func (f *Fault) Check() error {
	switch {
	case strings.TrimSpace(f.Command) == "":
		return fmt.Errorf("fault: command is required")
	case f.Times < 0 || f.Skip < 0 || f.Probability < 0 || f.Probability > 1:
		return fmt.Errorf("fault: times and skip must be >= 0 and probability within 0..1")
	case f.Stage != "" && f.Stage != StageRequest && f.Stage != StageJob:
		return fmt.Errorf("fault: stage must be %q or %q", StageRequest, StageJob)
	case f.ErrorCode != 0 && (f.ErrorCode < 400 || f.ErrorCode > 599):
		return fmt.Errorf("fault: errorcode must be an HTTP error status")
	case f.Lost && (f.ErrorCode != 0 || f.Raw):
		return fmt.Errorf("fault: a lost answer has no errorcode and is not raw: the command runs and its answer never arrives")
	case f.ErrorCode == 0 && !f.Raw && !f.Pending && !f.Lost && f.Delay <= 0:
		return fmt.Errorf("fault: set errorcode, raw, pending, lost or delay")
	}
	return nil
}

// apiError is the error the rule injects.
func (f *Fault) apiError() *APIError {
	e := &APIError{Code: f.ErrorCode, CSCode: f.CSErrorCode, Text: f.ErrorText}
	if e.CSCode == 0 {
		e.CSCode = defaultCSCode(e.Code)
	}
	if e.Text == "" {
		e.Text = DefaultErrorText
	}
	return e
}

// RawReply is the plain-text answer of a raw fault.
func (f *Fault) RawReply() *Reply {
	code := f.ErrorCode
	if code == 0 {
		code = http.StatusServiceUnavailable
	}
	text := f.ErrorText
	if text == "" {
		text = fmt.Sprintf("%d %s", code, http.StatusText(code))
	}
	return &Reply{Status: code, Raw: text}
}

// failsJob reports whether the rule's error belongs to the async job rather
// than to the request.
func (f *Fault) failsJob(async bool) bool {
	return async && !f.Raw && f.ErrorCode != 0 && f.Stage != StageRequest
}

func (f *Fault) String() string {
	var parts []string
	if f.Delay > 0 {
		parts = append(parts, "delay "+f.Delay.String())
	}
	if f.Raw {
		parts = append(parts, "raw")
	}
	if f.ErrorCode != 0 {
		parts = append(parts, fmt.Sprintf("error %d", f.ErrorCode))
	}
	if f.Pending {
		parts = append(parts, "pending")
	}
	if f.Lost {
		parts = append(parts, "answer lost")
	}
	if f.Stage != "" {
		parts = append(parts, "stage "+f.Stage)
	}
	return strings.Join(parts, ", ")
}

// Hold waits out the rule's Delay, or less: until the client goes away or
// the rules are cleared. Fault rules are a test instrument with no
// CloudStack Java behind them (simulator-fidelity.md, "Simulator features
// with no Java").
func (f *Fault) Hold(ctx context.Context) {
	if f.Delay <= 0 {
		return
	}
	t := time.NewTimer(f.Delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-f.cleared:
	}
}

// FaultSet is the ordered list of active rules.
type FaultSet struct {
	mu      sync.Mutex
	rules   []*Fault
	rng     *rand.Rand
	cleared chan struct{} // closed and replaced by Clear
}

// NewFaultSet is an empty rule list whose probabilistic rules draw from seed.
func NewFaultSet(seed int64) *FaultSet {
	if seed == 0 {
		seed = 1
	}
	return &FaultSet{rng: rand.New(rand.NewSource(seed)), cleared: make(chan struct{})}
}

// Add checks a rule and appends it; a rule with neither times nor a
// probability fires once.
func (fs *FaultSet) Add(f Fault) error {
	if err := f.Check(); err != nil {
		return err
	}
	if f.Times == 0 && f.Probability == 0 {
		f.Times = 1
	}
	f.Fired = 0
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.rules = append(fs.rules, &f)
	return nil
}

// List is a copy of the active rules, in order.
func (fs *FaultSet) List() []Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]Fault, 0, len(fs.rules))
	for _, f := range fs.rules {
		out = append(out, *f)
	}
	return out
}

// Clear removes every rule and lets the requests they delay go on.
func (fs *FaultSet) Clear() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.rules = nil
	close(fs.cleared)
	fs.cleared = make(chan struct{})
}

// Match consumes and returns the first rule that fires for command, or nil.
// Exhausted rules are dropped.
func (fs *FaultSet) Match(command string) *Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, f := range fs.rules {
		if f.Command != "*" && !strings.EqualFold(f.Command, command) {
			continue
		}
		if f.Skip > 0 {
			f.Skip--
			continue
		}
		if f.Probability > 0 && fs.rng.Float64() >= f.Probability {
			continue
		}
		f.Fired++
		fired := *f
		fired.cleared = fs.cleared
		if f.Times > 0 && f.Fired >= f.Times {
			fs.rules = append(fs.rules[:i], fs.rules[i+1:]...)
		}
		return &fired
	}
	return nil
}
