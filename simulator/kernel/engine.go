// Package kernel is what every API command runs on, ApiServer's share of the
// management server: the Call a handler gets, its Params, the command table
// and Register, schema validation, the JSON envelope and APIError codes,
// async jobs, signature and session authentication, fault injection, list
// paging and the request log. It knows the model, never an API family.
package kernel

import (
	"fmt"
	"log"
	"net/http"
	"sync"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/transfers"
)

// Engine is what every API request runs on (ApiServer and the async job
// manager's share of the management server): the state and its lock,
// sessions, jobs, faults and the request log. Simulator plumbing.
type Engine struct {
	Faults     *FaultSet
	Reqlog     requestLog
	Xfer       *transfers.Pool // template downloads, uploads and copies (simulator plumbing; the work cites its Java)
	JobLatency time.Duration
	// JobLatencyFor overrides JobLatency for the commands it names: a test
	// instrument, as JobLatency is, with no CloudStack Java behind it.
	// Throttle below follows ApiRateLimitServiceImpl (kernel/throttle.go).
	JobLatencyFor map[string]time.Duration
	StatePath     string
	Logger        *log.Logger
	// Started is when this management server started (mshost.last_jvm_start).
	Started time.Time
	// Ext is the Server the engine runs for, for the handlers that start
	// template transfers (serverOf).
	Ext any
	// Schema is the API of the CloudStack release served: the commands it
	// has and their parameters (the release's own listApis dump).
	Schema *schema.Schema

	Mu       sync.Mutex // guards everything below
	State    *model.State
	Throttle *Throttle // the API rate limit, configured at start
	Sessions map[string]*Session
	Timers   map[string]*time.Timer
	Dirty    bool
	Closed   bool
	SaveErr  error
}

// Now is the management server's clock, in UTC.
func (s *Engine) Now() time.Time { return time.Now().UTC() }

// Persist saves the state if it changed; the caller holds the lock. A failed
// save is remembered and reported by Close.
func (s *Engine) Persist() {
	if !s.Dirty || s.StatePath == "" {
		s.Dirty = false
		return
	}
	s.Dirty = false
	if err := s.State.Save(s.StatePath); err != nil {
		s.SaveErr = err
		s.Logf("saving state: %v", err)
	}
}

// Logf writes one line to the Options.Logger, if any.
func (s *Engine) Logf(format string, args ...any) {
	if s.Logger != nil {
		s.Logger.Printf(format, args...)
	}
}

// outcome is a reply plus what the request log needs to know about it.
type outcome struct {
	*Reply
	command string
	jobID   string
	fault   string
	lost    bool // a fault drops the connection instead of answering
}

// ServeAPI is the /client/api endpoint: ApiServlet.doGet/doPost.
func (s *Engine) ServeAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		// The servlet only implements doGet and doPost.
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "HTTP method "+r.Method+" is not supported by this URL", http.StatusMethodNotAllowed)
		return
	}
	start := time.Now()
	raw, err := readParams(r)
	if err != nil {
		raw = rawParams{}
	}
	out := s.process(r, raw, start)
	// Logged before the answer goes out: whoever has the answer finds the
	// request in the log. The request log and the lost answer are the
	// simulator's own, with no CloudStack Java behind them
	// (docs/development/simulator-fidelity.md, "Simulator features with no Java").
	latency := time.Since(start)
	s.Reqlog.Add(LoggedRequest{Time: start.UTC(), Method: r.Method, Command: out.command,
		Params: redact(raw), Status: out.Status, LatencyMS: float64(latency.Microseconds()) / 1000,
		JobID: out.jobID, Fault: out.fault})
	s.Logf("api %s %q %d %s", r.Method, out.command, out.Status, latency.Round(time.Microsecond))
	if !out.lost {
		out.write(w)
	}
	if out.lost {
		// The command has run; the client sees the connection end with
		// no answer, as when a proxy or the network fails on the way back.
		panic(http.ErrAbortHandler)
	}
}

// exactAPI finds a command by its exact name: ApiServer.getCmdClass looks it
// up in s_apiNameCmdClassMap, which is case-sensitive, so "listzones" does not exist.
// A command the release served does not have is as unknown as a misspelt
// one: that release's s_apiNameCmdClassMap has no class for it.
func (s *Engine) exactAPI(command string) *schema.API {
	api, ok := s.Schema.Lookup(command)
	if !ok || api.Name != command {
		return nil
	}
	return api
}

// process runs one request through ApiServlet.processRequestInContext's
// stages: authenticators (login/logout, which need no signature),
// authentication, fault injection (a simulator feature), then the command.
// Its checks run at arrived: CloudStack runs each request on a servlet
// thread of its own as it arrives, with no lock around them, so a request
// the simulator's lock held back still counts in the API limit's window of
// its arrival (ApiRateLimitServiceImpl.hasApiRateLimitBeenExceeded, from
// ApiServer.verifyRequest's checkCommandAvailable).
func (s *Engine) process(r *http.Request, raw rawParams, arrived time.Time) outcome {
	command := raw["command"]
	api := s.exactAPI(command)
	out := outcome{command: command}
	name := "errorresponse"
	if api != nil {
		out.command, name = api.Name, commandResponseName(api.Name)
	} else if command == "" && len(raw) > 0 {
		name = "null" // ApiServer.getSerializedApiError leaves the response name null
	}
	if command == "" {
		out.Reply = errorReply(name, s.noCommand(r, raw))
		return out
	}
	var user *model.User
	if command != "login" && command != "logout" {
		var aerr *APIError
		s.Mu.Lock()
		user, aerr = s.authenticate(r, raw, api, arrived)
		s.Mu.Unlock()
		if aerr != nil {
			out.Reply = errorReply(name, aerr)
			return out
		}
	}
	fault := s.Faults.Match(out.command)
	if fault != nil {
		out.fault = fault.String()
		fault.Hold(r.Context())
		if out.Reply = fault.requestReply(name, api != nil && api.IsAsync); out.Reply != nil {
			return out
		}
	}
	if user == nil {
		out.Reply = s.authenticator(r, raw)
		return out
	}
	out.Reply, out.jobID = s.execute(r.Host, api, user, raw, fault, arrived)
	out.lost = fault != nil && fault.Lost
	return out
}

// authenticator answers login and logout.
func (s *Engine) authenticator(r *http.Request, raw rawParams) *Reply {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if raw["command"] == "login" {
		return s.login(r.Method, raw, s.Now())
	}
	return s.logout(r)
}

// requestReply is the answer a fault imposes on the request itself, or nil
// when the request proceeds (delay only, or a job-stage fault).
func (f *Fault) requestReply(name string, async bool) *Reply {
	switch {
	case f.Raw:
		return f.RawReply()
	case f.ErrorCode != 0 && !f.failsJob(async):
		return errorReply(name, f.apiError())
	}
	return nil
}

// noCommand is ApiServlet.processRequestInContext without a command: 400
// "no command specified" for a live session whose key checks out, else
// verifyRequest's refusal.
func (s *Engine) noCommand(r *http.Request, raw rawParams) *APIError {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	now := s.Now()
	sess := s.sessionFor(r, now)
	if sess == nil {
		return unauthorized(BadCredentials)
	}
	if _, err := s.sessionCaller(r, sess, raw); err != nil {
		return err
	}
	return &APIError{Code: http.StatusBadRequest, Text: "no command specified"}
}

// authenticate is the servlet's session check, else ApiServer.verifyRequest,
// as of the request's arrival.
func (s *Engine) authenticate(r *http.Request, raw rawParams, api *schema.API, arrived time.Time) (*model.User, *APIError) {
	now := arrived.UTC()
	if sess := s.sessionFor(r, now); sess != nil {
		return s.sessionUser(r, sess, raw, api, now)
	}
	return s.verifySignature(raw, api, now)
}

// execute is ApiServer.handleRequest and queueCommand: the dispatch chain
// (unpack, validate) then the command, sync or as an async job. An
// unimplemented command is a simulator answer (432, as for an unknown API).
func (s *Engine) execute(host string, api *schema.API, user *model.User, raw rawParams, fault *Fault,
	arrived time.Time) (*Reply, string) {
	name := commandResponseName(api.Name)
	if key, bad := raw.withControlCharacter(); bad {
		return errorReply(name, ServerParamError("Received value containing illegal ASCII non-printable characters for parameter %s", key)), ""
	}
	cmd, ok := Registered[api.Name]
	if !ok {
		return errorReply(name, &APIError{Code: CodeUnsupported, CSCode: CsUnavailableCmd, responseName: "errorresponse",
			Text: fmt.Sprintf("The API command %s is not implemented by the CloudStack simulator", api.Name)}), ""
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	defer s.Persist()
	params, perr := unpack(raw)
	if perr != nil {
		return errorReply(name, perr), ""
	}
	c := &Call{Command: api.Name, API: api, Params: params, User: user,
		Account: s.State.Account(user.AccountID), Host: host, Engine: s, State: s.State, Arrived: arrived}
	if err := c.validate(); err != nil {
		return errorReply(name, err), ""
	}
	if cmd.Sync != nil {
		body, err := cmd.Sync(c)
		if err != nil {
			return errorReply(name, AsAPIError(err)), ""
		}
		return okReply(name, body), ""
	}
	spec, err := cmd.Async(c)
	if err != nil {
		return errorReply(name, AsAPIError(err)), ""
	}
	body, job := s.submit(c, spec, fault)
	return okReply(name, body), job.ID
}

// commandResponseName is the answer's key for a command: CloudStack's
// default unless the implementation names another.
func commandResponseName(command string) string {
	if cmd, ok := Registered[command]; ok && cmd.ResponseName != "" {
		return cmd.ResponseName
	}
	return ResponseName(command)
}
