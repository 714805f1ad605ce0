package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/dispatch"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/termtable"
)

// commands are the subcommands, each with what it does and an example;
// run routes them, printHelp lists them.
var commands = []struct{ name, what, example string }{
	{"serve", "run the registry and the WebDAV daemon cpi.json configures, until SIGTERM or SIGINT",
		"cloudstack-cpi serve -configPath cpi.json"},
	{"doctor", "check, read-only, what the CPI needs of CloudStack; exit 0 only when every check passes",
		"cloudstack-cpi doctor -configPath cpi.json -cloud-config cloud-config.yml"},
	{"orphans", "list what interrupted CPI calls left in CloudStack; -delete removes it",
		"cloudstack-cpi orphans -configPath cpi.json -older-than 2h"},
}

// printHelp is `cloudstack-cpi help`: the stdin protocol, the call's
// flags and the subcommands.
func printHelp(w io.Writer, flags *flag.FlagSet) {
	fmt.Fprint(w, `cloudstack-cpi is the BOSH external CPI for Apache CloudStack.

A CPI call (what the director runs, once per call):
  cloudstack-cpi -configPath cpi.json < request.json
reads one JSON request on stdin (at most 2 MiB),
  {"method":"…","arguments":[…],"context":{…},"api_version":2}
writes one JSON answer on stdout,
  {"result":…,"error":null or {"type":…,"message":…,"ok_to_retry":…},"log":""}
and logs on stderr, each line tagged with the context's request_id.
For example:
  echo '{"method":"info","arguments":[],"context":{}}' | cloudstack-cpi -configPath cpi.json

The methods it serves:
`)
	fmt.Fprintf(w, "%s\n\nFlags of a call:\n", wrapList(dispatch.Methods(), "  ", 80))
	out := flags.Output()
	flags.SetOutput(w)
	flags.PrintDefaults()
	flags.SetOutput(out)
	fmt.Fprintln(w, "\nCommands (each takes -h for its own flags):")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n           %s\n", c.name, c.what, c.example)
	}
	fmt.Fprintln(w, "  help     this text; help COMMAND is COMMAND -h")
}

// wrapList joins items with commas in lines of at most width columns,
// each starting with indent.
func wrapList(items []string, indent string, width int) string {
	var lines []string
	line := indent
	for i, item := range items {
		if i < len(items)-1 {
			item += ","
		}
		if line != indent && len(line)+1+len(item) > width {
			lines = append(lines, line)
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += item
	}
	return strings.Join(append(lines, line), "\n")
}

// helpCommand is `cloudstack-cpi help [COMMAND]`.
func helpCommand(args []string, flags *flag.FlagSet, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printHelp(stdout, flags)
		return 0
	}
	for _, c := range commands {
		if args[0] == c.name {
			run([]string{c.name, "-h"}, strings.NewReader(""), stdout, stderr)
			return 0
		}
	}
	fmt.Fprintf(stderr, "cloudstack-cpi help: no command %q; the commands are serve, doctor and orphans\n", args[0])
	return 2
}

// stdinHint tells an operator who ran a call at a terminal what it waits
// for: otherwise it waits silently for a request they may not know to type.
func stdinHint(stdin io.Reader, stderr io.Writer) {
	if f, ok := stdin.(*os.File); ok && termtable.IsTerminal(f) {
		fmt.Fprintln(stderr, "cloudstack-cpi: reading one JSON request from stdin (end it with Ctrl-D); see cloudstack-cpi help")
	}
}
