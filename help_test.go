package main

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/dispatch"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/ptytest"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testconfig"
)

// -h, -help and help (also after bin/cpi's -configPath) show the stdin
// protocol, the flags, every method and every command with an example.
func TestHelpExplainsTheCommandLine(t *testing.T) {
	want := []string{"one JSON request on stdin", `{"method":"…","arguments":[…],"context":{…},"api_version":2}`,
		"one JSON answer on stdout", "logs on stderr", "-configPath", "-version"}
	want = append(want, dispatch.Methods()...)
	for _, c := range commands {
		want = append(want, "\n  "+c.name+" ", c.what, "\n           "+c.example+"\n")
	}
	for _, args := range [][]string{{"-h"}, {"-help"}, {"help"}, {"-configPath", "cpi.json", "help"}} {
		var out, errOut bytes.Buffer
		code := run(args, strings.NewReader(""), &out, &errOut)
		if code != 0 || errOut.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut.String())
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%q: help lacks %q:\n%s", args, w, out.String())
			}
		}
	}
}

// The help's piping example, run as it is printed, gets info's answer.
func TestHelpsExampleWorks(t *testing.T) {
	var help bytes.Buffer
	run([]string{"help"}, strings.NewReader(""), &help, &bytes.Buffer{})
	example := regexp.MustCompile(`echo '(.*)' \| cloudstack-cpi -configPath cpi.json`).FindStringSubmatch(help.String())
	if example == nil {
		t.Fatalf("no piping example in the help:\n%s", help.String())
	}
	var out bytes.Buffer
	run([]string{"-configPath", testconfig.Write(t, testconfig.Good)}, strings.NewReader(example[1]), &out, &bytes.Buffer{})
	var resp struct{ Result, Error any }
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil || resp.Error != nil || resp.Result == nil {
		t.Fatalf("the example %s answered %s", example[1], out.String())
	}
}

// Each command keeps its own -h, and help COMMAND shows it.
func TestEachCommandHasItsOwnHelp(t *testing.T) {
	for _, c := range commands {
		for _, args := range [][]string{{c.name, "-h"}, {"help", c.name}} {
			var out, errOut bytes.Buffer
			run(args, strings.NewReader(""), &out, &errOut)
			if !strings.Contains(errOut.String(), "cloudstack-cpi "+c.name) || !strings.Contains(errOut.String(), "-configPath") {
				t.Errorf("%q: stderr %q", args, errOut.String())
			}
		}
	}
}

// A bad flag or a stray word is refused, pointing to help, and no request
// is read.
func TestABadCommandLinePointsToHelp(t *testing.T) {
	for args, want := range map[string]string{"-configpath": "flag provided but not defined", "docter": `unexpected "docter"`,
		"-configPath cpi.json info": `unexpected "info"`, "help docter": `no command "docter"`} {
		var out, errOut bytes.Buffer
		code := run(strings.Fields(args), strings.NewReader(`{"method":"info","arguments":[]}`), &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), want) || out.Len() != 0 ||
			!strings.Contains(errOut.String(), "help") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
	}
}

const terminalHint = "reading one JSON request from stdin"

// A terminal on stdin gets a line on stderr saying what the CPI waits
// for, and the call then goes on as from a pipe.
func TestATerminalOnStdinGetsAHint(t *testing.T) {
	ptmx, pts := ptytest.Open(t)
	// A line, then Ctrl-D at the start of the next: end of input.
	if _, err := ptmx.WriteString(`{"method":"info","arguments":[],"context":{}}` + "\n\x04"); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run([]string{"-configPath", testconfig.Write(t, testconfig.Good)}, pts, &out, &errOut)
	first, _, _ := strings.Cut(errOut.String(), "\n")
	if !strings.Contains(first, terminalHint) || !strings.Contains(first, "cloudstack-cpi help") {
		t.Fatalf("stderr begins %q", first)
	}
	if code != 0 || !strings.Contains(out.String(), `"api_version":2`) {
		t.Fatalf("exit %d, stdout %q", code, out.String())
	}
}

func TestAPipeOnStdinGetsNoHint(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.WriteString(`{"method":"info","arguments":[],"context":{}}`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var out, errOut bytes.Buffer
	run([]string{"-configPath", testconfig.Write(t, testconfig.Good)}, r, &out, &errOut)
	if strings.Contains(errOut.String(), terminalHint) || !strings.Contains(out.String(), `"api_version":2`) {
		t.Fatalf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}
