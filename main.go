// Command cloudstack-cpi is the BOSH external CPI for Apache CloudStack: it
// reads one JSON request on stdin, answers one JSON response on stdout and
// logs on stderr, once per call. `cloudstack-cpi serve` runs the registry
// and the WebDAV daemon instead (servecmd.go); `cloudstack-cpi doctor`
// checks what the CPI needs of CloudStack (doctorcmd.go); `cloudstack-cpi
// orphans` lists and removes what interrupted calls left (orphanscmd.go).
package main

import (
	"encoding/json"
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
	if len(args) > 0 && args[0] == "serve" {
		return serveCommand(args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "doctor" {
		return doctorCommand(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "orphans" {
		return orphansCommand(args[1:], stdout, stderr)
	}
	flags := flag.NewFlagSet("cloudstack-cpi", flag.ContinueOnError)
	flags.SetOutput(stderr)
	configPath := flags.String("configPath", "", "path to cpi.json")
	stateDir := flags.String("stateDir", "", "directory of the state this host's CPI processes share "+
		"(cloudstack.state_dir overrides it)")
	showVersion := flags.Bool("version", false, "print the version and exit")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, version)
		return 0
	}
	request, err := io.ReadAll(stdin)
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
	cfg, request, err := prepareCall(where.configPath, request, logger)
	if err != nil {
		writeCPIError(stdout, "invalid CPI config: "+err.Error())
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
	dispatcher := rpc.NewJSONDispatcher(withUpdateDisk(apiv1.NewActionFactory(factory), factory), rpc.NewJSONCaller(), quiet)
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
