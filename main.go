// Command cloudstack-cpi is the BOSH external CPI for Apache CloudStack. This
// package only routes the command line: a CPI call (one JSON request on
// stdin, one JSON response on stdout, logs on stderr) goes to package
// dispatch; `cloudstack-cpi serve` runs the registry and the WebDAV daemon
// (servecmd.go); `cloudstack-cpi doctor` checks what the CPI needs of
// CloudStack (doctorcmd.go); `cloudstack-cpi orphans` lists and removes what
// interrupted calls left (orphanscmd.go); `cloudstack-cpi help` explains
// all of it (help.go).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/bosh-cloudstack/cloudstack-cpi/dispatch"
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
	return dispatch.Answer(dispatch.Files{ConfigPath: *configPath, StateDir: *stateDir}, stdin, stdout, stderr)
}
