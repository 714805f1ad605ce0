package simulator

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// outcome is a reply plus what the request log needs to know about it.
type outcome struct {
	*reply
	command string
	jobID   string
	fault   string
	lost    bool // a fault drops the connection instead of answering
}

// serveAPI is the /client/api endpoint: ApiServlet.doGet/doPost.
func (s *engine) serveAPI(w http.ResponseWriter, r *http.Request) {
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
	out := s.process(r, raw)
	// Logged before the answer goes out: whoever has the answer finds the
	// request in the log. The request log and the lost answer are the
	// simulator's own, with no CloudStack Java behind them
	// (docs/simulator-fidelity.md, "Simulator features with no Java").
	latency := time.Since(start)
	s.reqlog.add(LoggedRequest{Time: start.UTC(), Method: r.Method, Command: out.command,
		Params: redact(raw), Status: out.status, LatencyMS: float64(latency.Microseconds()) / 1000,
		JobID: out.jobID, Fault: out.fault})
	s.logf("api %s %q %d %s", r.Method, out.command, out.status, latency.Round(time.Microsecond))
	if !out.lost {
		out.write(w)
	}
	if out.lost {
		// The command has run; the client sees the connection end with
		// no answer, as when a proxy or the network fails on the way back.
		panic(http.ErrAbortHandler)
	}
}

// exactAPI finds a command by its exact name: ApiServer's
// s_apiNameCmdClassMap is case-sensitive, so "listzones" does not exist.
func exactAPI(command string) *schema.API {
	api, ok := schema.Lookup(command)
	if !ok || api.Name != command {
		return nil
	}
	return api
}

// process runs one request through ApiServlet.processRequestInContext's
// stages: authenticators (login/logout, which need no signature),
// authentication, fault injection (a simulator feature), then the command.
func (s *engine) process(r *http.Request, raw rawParams) outcome {
	command := raw["command"]
	api := exactAPI(command)
	out := outcome{command: command}
	name := "errorresponse"
	if api != nil {
		out.command, name = api.Name, commandResponseName(api.Name)
	} else if command == "" && len(raw) > 0 {
		name = "null" // ApiServer.getSerializedApiError leaves the response name null
	}
	if command == "" {
		out.reply = errorReply(name, s.noCommand(r, raw))
		return out
	}
	var user *model.User
	if command != "login" && command != "logout" {
		var aerr *APIError
		s.mu.Lock()
		user, aerr = s.authenticate(r, raw, api)
		s.mu.Unlock()
		if aerr != nil {
			out.reply = errorReply(name, aerr)
			return out
		}
	}
	fault := s.faults.match(out.command)
	if fault != nil {
		out.fault = fault.String()
		sleep(r.Context(), fault.Delay)
		if out.reply = fault.requestReply(name, api != nil && api.IsAsync); out.reply != nil {
			return out
		}
	}
	if user == nil {
		out.reply = s.authenticator(r, raw)
		return out
	}
	out.reply, out.jobID = s.execute(r.Host, api, user, raw, fault)
	out.lost = fault != nil && fault.Lost
	return out
}

// authenticator answers login and logout.
func (s *engine) authenticator(r *http.Request, raw rawParams) *reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if raw["command"] == "login" {
		return s.login(r.Method, raw, s.now())
	}
	return s.logout(r)
}

// requestReply is the answer a fault imposes on the request itself, or nil
// when the request proceeds (delay only, or a job-stage fault).
func (f *Fault) requestReply(name string, async bool) *reply {
	switch {
	case f.Raw:
		return f.rawReply()
	case f.ErrorCode != 0 && !f.failsJob(async):
		return errorReply(name, f.apiError())
	}
	return nil
}

// noCommand is ApiServlet.processRequestInContext without a command: 400
// "no command specified" for a live session whose key checks out, else
// verifyRequest's refusal.
func (s *engine) noCommand(r *http.Request, raw rawParams) *APIError {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	sess := s.sessionFor(r, now)
	if sess == nil {
		return unauthorized(badCredentials)
	}
	if _, err := s.sessionCaller(r, sess, raw); err != nil {
		return err
	}
	return &APIError{Code: http.StatusBadRequest, Text: "no command specified"}
}

// authenticate is the servlet's session check, else ApiServer.verifyRequest.
func (s *engine) authenticate(r *http.Request, raw rawParams, api *schema.API) (*model.User, *APIError) {
	now := s.now()
	if sess := s.sessionFor(r, now); sess != nil {
		return s.sessionUser(r, sess, raw, api, now)
	}
	return s.verifySignature(raw, api, now)
}

// execute is ApiServer.handleRequest and queueCommand: the dispatch chain
// (unpack, validate) then the command, sync or as an async job. An
// unimplemented command is a simulator answer (432, as for an unknown API).
func (s *engine) execute(host string, api *schema.API, user *model.User, raw rawParams, fault *Fault) (*reply, string) {
	name := commandResponseName(api.Name)
	if key, bad := raw.withControlCharacter(); bad {
		return errorReply(name, serverParamError("Received value containing illegal ASCII non-printable characters for parameter %s", key)), ""
	}
	cmd, ok := commands[api.Name]
	if !ok {
		return errorReply(name, &APIError{Code: codeUnsupported, CSCode: csUnavailableCmd, responseName: "errorresponse",
			Text: fmt.Sprintf("The API command %s is not implemented by the CloudStack simulator", api.Name)}), ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.persist()
	params, perr := unpack(raw)
	if perr != nil {
		return errorReply(name, perr), ""
	}
	c := &Call{Command: api.Name, API: api, Params: params, User: user,
		Account: s.st.Account(user.AccountID), host: host, eng: s, st: s.st}
	if err := c.validate(); err != nil {
		return errorReply(name, err), ""
	}
	if cmd.sync != nil {
		body, err := cmd.sync(c)
		if err != nil {
			return errorReply(name, asAPIError(err)), ""
		}
		return okReply(name, body), ""
	}
	spec, err := cmd.async(c)
	if err != nil {
		return errorReply(name, asAPIError(err)), ""
	}
	body, job := s.submit(c, spec, fault)
	return okReply(name, body), job.ID
}

// commandResponseName is the answer's key for a command: CloudStack's
// default unless the implementation names another.
func commandResponseName(command string) string {
	if cmd, ok := commands[command]; ok && cmd.responseName != "" {
		return cmd.responseName
	}
	return responseName(command)
}

// sleep waits d or until the client goes away.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
