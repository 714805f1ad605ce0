package termtable_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/ptytest"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/termtable"
)

var table = termtable.Table{
	Header: []string{"CHECK", "RESULT", "WHAT TO DO"},
	Rows: [][]string{
		{"endpoint", "ok", "nothing"},
		{"keys", "FAILED", "set cloudstack.api_key and cloudstack.secret_access_key to the keys of a user of the account"},
	},
}

func TestPlainLinesAreTabSeparatedWithoutHeader(t *testing.T) {
	var out bytes.Buffer
	if err := table.Write(&out, termtable.Output{}); err != nil {
		t.Fatal(err)
	}
	want := "endpoint\tok\tnothing\n" +
		"keys\tFAILED\tset cloudstack.api_key and cloudstack.secret_access_key to the keys of a user of the account\n"
	if out.String() != want {
		t.Fatalf("plain output:\n%q\nwant\n%q", out.String(), want)
	}
}

func TestTerminalTableAlignsAndWrapsTheLastColumn(t *testing.T) {
	var out bytes.Buffer
	if err := table.Write(&out, termtable.Output{Width: 50}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if lines[0] != "CHECK     RESULT  WHAT TO DO" || lines[1] != "endpoint  ok      nothing" {
		t.Fatalf("header and first row not aligned:\n%s", out.String())
	}
	if len(lines) < 4 {
		t.Fatalf("the long cell was not wrapped at 50 columns:\n%s", out.String())
	}
	for _, l := range lines[2:] {
		if len(l) > 50 {
			t.Fatalf("line longer than the terminal: %q", l)
		}
		if !strings.HasPrefix(l, "keys      FAILED  ") && !strings.HasPrefix(l, strings.Repeat(" ", 18)) {
			t.Fatalf("continuation not under its column: %q", l)
		}
	}
}

func TestAPipeIsNotATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if o := termtable.For(w); o.Width != 0 {
		t.Fatalf("a pipe taken for a terminal of %d columns", o.Width)
	}
	if o := termtable.For(&bytes.Buffer{}); o.Width != 0 {
		t.Fatalf("a buffer taken for a terminal of %d columns", o.Width)
	}
	if termtable.IsTerminal(w) || termtable.IsTerminal(r) {
		t.Fatal("a pipe taken for a terminal")
	}
}

// A pseudo-terminal of 100 columns.
func TestATerminalGivesItsWidth(t *testing.T) {
	_, pts := ptytest.Open(t)
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: 100, Row: 30}); err != nil {
		t.Fatal(err)
	}
	if o := termtable.For(pts); o.Width != 100 {
		t.Fatalf("terminal width %d, want 100", o.Width)
	}
	if !termtable.IsTerminal(pts) {
		t.Fatal("a pseudo-terminal not taken for a terminal")
	}
}
