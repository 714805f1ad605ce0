// Package dispatch answers one CPI call: the request read from stdin (at
// most 2 MiB) and checked before bosh-cpi-go's dispatcher reads it, so that
// what is wrong is named in JSON words (request.go, methods.go,
// arguments.go); the call's cpi.json with the director's cpi-config
// properties (callcontext.go); the request-id tagged stderr logger
// (logging.go); the dispatcher, with update_disk intercepted ahead of it
// (updatedisk.go); errors capped at 4 KiB of what they echo (errcap.go);
// and a panic turned into a CpiError. The root package routes the command
// line here; this package hands the call to cpi.
package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"github.com/cloudfoundry/bosh-cpi-go/rpc"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cpi"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
)

// Files is where a CPI call's configuration comes from: cpi.json
// (-configPath), and the state directory bin/cpi names (-stateDir), used
// unless cloudstack.state_dir is set.
type Files struct {
	ConfigPath, StateDir string
}

// Answer reads one request from stdin and writes its answer on stdout,
// logging on stderr; it returns the process's exit code. Every answer is
// the protocol's JSON, a bad request's included (exit 0: bosh create-env
// reads no answer of a CPI that exits non-zero).
func Answer(where Files, stdin io.Reader, stdout, stderr io.Writer) int {
	request, err := readRequest(stdin)
	if errors.Is(err, errRequestTooLarge) {
		// Answered as a bad request is (dispatch), exit 0 included.
		newLogger(stderr, noRequestID).Error("main", "%s", err)
		writeCPIError(stdout, err.Error())
		return 0
	}
	if err != nil {
		writeCPIError(stdout, "reading the request from stdin: "+err.Error())
		return 1
	}
	logger := newLogger(stderr, requestID(request))
	return serveOnce(where, request, stdout, logger)
}

// serveOnce answers one request. A panic anywhere becomes a CpiError on
// stdout: the director must always get JSON, never a stack trace.
func serveOnce(where Files, request []byte, stdout io.Writer, logger boshlog.Logger) int {
	return guard(stdout, logger, func() int { return dispatch(where, request, stdout, logger) })
}

func guard(stdout io.Writer, logger boshlog.Logger, f func() int) (code int) {
	defer func() {
		if r := recover(); r != nil {
			logger.Error("main", "panic: %v", r)
			writeCPIError(stdout, fmt.Sprintf("internal error in the CloudStack CPI: %v", r))
			code = 1
		}
	}()
	return f()
}

func dispatch(where Files, request []byte, stdout io.Writer, logger boshlog.Logger) int {
	if where.ConfigPath == "" {
		writeCPIError(stdout, "missing -configPath: the CPI needs its cpi.json")
		return 1
	}
	if problem := requestProblem(request); problem != "" {
		// Answered as the dispatcher answers a bad request, exit 0 included:
		// bosh create-env reads no answer of a CPI that exits non-zero, so
		// the operator would never see where the request went wrong.
		writeCPIError(stdout, problem)
		return 0
	}
	cfg, request, err := prepareCall(where.ConfigPath, request, logger)
	if err != nil {
		writeCPIError(stdout, "invalid CPI config: "+jsonwords.Message(err))
		return 1
	}
	if cfg.CloudStack.StateDir == "" {
		cfg.CloudStack.StateDir = where.StateDir
	}
	cloud, err := cloudstack.New(cfg.CloudStack, logger)
	if err != nil {
		writeCPIError(stdout, "invalid CPI config: "+err.Error())
		return 1
	}
	logger.Info("main", "%s", describeRequest(request))
	// The dispatcher logs whole requests at debug level, and requests carry
	// secrets (env, blobstore credentials): it only gets warnings.
	quiet := boshlog.NewWriterLogger(boshlog.LevelWarn, io.Discard)
	dispatcher := rpc.NewJSONDispatcher(actions(cpi.NewFactory(cfg, cloud, logger)),
		argumentCaller{Caller: rpc.NewJSONCaller(), logger: logger}, quiet)
	if _, err := stdout.Write(capResponse(dispatcher.Dispatch(request))); err != nil {
		logger.Error("main", "writing the response: %s", err)
		return 1
	}
	return 0
}

// actions are the methods the dispatcher serves, outermost first:
// servedActions answers an unknown method with the list of those served
// and names each action for argumentCaller; the update_disk interceptor
// builds update_disk, which bosh-cpi-go's action factory does not know; that
// factory builds every other method.
func actions(factory cpi.Factory) rpc.ActionFactory {
	return servedActions{interceptUpdateDisk(apiv1.NewActionFactory(factory), factory)}
}

func writeCPIError(w io.Writer, message string) {
	resp := rpc.Response{Error: &rpc.ResponseError{Type: "Bosh::Clouds::CpiError", Message: capMessage(message)}}
	b, _ := json.Marshal(resp)
	_, _ = w.Write(b)
}
