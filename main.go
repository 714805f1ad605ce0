// Command cloudstack-cpi is the BOSH external CPI for Apache CloudStack: it
// reads one JSON request on stdin, answers one JSON response on stdout and
// logs on stderr, once per call. `cloudstack-cpi serve` runs the registry
// and the WebDAV daemon instead (servecmd.go); `cloudstack-cpi doctor`
// checks what the CPI needs of CloudStack (doctorcmd.go); `cloudstack-cpi
// orphans` lists and removes what interrupted calls left (orphanscmd.go).
// `cloudstack-cpi help` explains all of it (help.go). A request is checked
// at this boundary before bosh-cpi-go's dispatcher reads it (request.go,
// methods.go, arguments.go), so that what is wrong is named in JSON words.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"github.com/cloudfoundry/bosh-cpi-go/rpc"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cpi"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("cloudstack-cpi", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {} // a bad flag is named, then pointed to help, below
	configPath := flags.String("configPath", "", "path to cpi.json")
	stateDir := flags.String("stateDir", "", "directory of the state this host's CPI processes share "+
		"(cloudstack.state_dir overrides it)")
	showVersion := flags.Bool("version", false, "print the version and exit")
	if len(args) > 0 {
		switch args[0] {
		case "serve":
			return serveCommand(args[1:], stderr)
		case "doctor":
			return doctorCommand(args[1:], stdout, stderr)
		case "orphans":
			return orphansCommand(args[1:], stdout, stderr)
		case "help":
			return helpCommand(args[1:], flags, stdout, stderr)
		}
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, flags)
			return 0
		}
		fmt.Fprintln(stderr, "see cloudstack-cpi help for the request on stdin, the flags and the commands")
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, version)
		return 0
	}
	if flags.NArg() > 0 {
		// The release's bin/cpi puts -configPath before what it is given.
		if flags.Arg(0) == "help" {
			return helpCommand(flags.Args()[1:], flags, stdout, stderr)
		}
		fmt.Fprintf(stderr, "cloudstack-cpi: unexpected %q: a CPI call takes its request on stdin, and the commands are "+
			"serve, doctor, orphans and help; see cloudstack-cpi help\n", flags.Arg(0))
		return 2
	}
	stdinHint(stdin, stderr)
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
	return serveOnce(callFiles{configPath: *configPath, stateDir: *stateDir}, request, stdout, logger)
}

// callFiles is where a CPI call's configuration comes from: cpi.json, and the
// state directory bin/cpi names, used unless cloudstack.state_dir is set.
type callFiles struct {
	configPath, stateDir string
}

// serveOnce answers one request. A panic anywhere becomes a CpiError on
// stdout: the director must always get JSON, never a stack trace.
func serveOnce(where callFiles, request []byte, stdout io.Writer, logger boshlog.Logger) int {
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

func dispatch(where callFiles, request []byte, stdout io.Writer, logger boshlog.Logger) int {
	if where.configPath == "" {
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
	cfg, request, err := prepareCall(where.configPath, request, logger)
	if err != nil {
		writeCPIError(stdout, "invalid CPI config: "+inJSONWords(err))
		return 1
	}
	if cfg.CloudStack.StateDir == "" {
		cfg.CloudStack.StateDir = where.stateDir
	}
	cloud, err := cloudstack.New(cfg.CloudStack, logger)
	if err != nil {
		writeCPIError(stdout, "invalid CPI config: "+err.Error())
		return 1
	}
	logger.Info("main", "%s", describeRequest(request))
	factory := cpi.NewFactory(cfg, cloud, logger)
	// The dispatcher logs whole requests at debug level, and requests carry
	// secrets (env, blobstore credentials): it only gets warnings.
	quiet := boshlog.NewWriterLogger(boshlog.LevelWarn, io.Discard)
	actions := servedActions{withUpdateDisk(apiv1.NewActionFactory(factory), factory)}
	dispatcher := rpc.NewJSONDispatcher(actions, argumentCaller{Caller: rpc.NewJSONCaller(), logger: logger}, quiet)
	if _, err := stdout.Write(capResponse(dispatcher.Dispatch(request))); err != nil {
		logger.Error("main", "writing the response: %s", err)
		return 1
	}
	return 0
}

func writeCPIError(w io.Writer, message string) {
	resp := rpc.Response{Error: &rpc.ResponseError{Type: "Bosh::Clouds::CpiError", Message: capMessage(message)}}
	b, _ := json.Marshal(resp)
	_, _ = w.Write(b)
}
