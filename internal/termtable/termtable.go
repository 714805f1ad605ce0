// Package termtable prints what doctor and orphans report: on a terminal an
// aligned table whose last column wraps to the terminal's width, otherwise
// one tab-separated line per row, which grep, cut and awk take as they are.
package termtable

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Table is a header and its rows; every row has as many cells as the header.
type Table struct {
	Header []string
	Rows   [][]string
}

// Output says how w wants the table: Width > 0 only for a terminal.
type Output struct {
	Width int
}

// For reports whether w is a terminal and, if so, its width (80 when the
// terminal does not say).
func For(w io.Writer) Output {
	f, ok := w.(*os.File)
	if !ok {
		return Output{}
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	switch {
	case err != nil:
		return Output{} // not a terminal: a pipe, a file, /dev/null
	case ws.Col == 0:
		return Output{Width: 80}
	}
	return Output{Width: int(ws.Col)}
}

// IsTerminal reports whether f is a terminal (a pipe, a file or /dev/null
// is not).
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	return err == nil
}

// Write prints t for o.
func (t Table) Write(w io.Writer, o Output) error {
	if o.Width <= 0 {
		return t.writePlain(w)
	}
	return t.writeAligned(w, o.Width)
}

func (t Table) writePlain(w io.Writer) error {
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = strings.Join(strings.Fields(c), " ") // one row, one line
		}
		if _, err := fmt.Fprintln(w, strings.Join(cells, "\t")); err != nil {
			return err
		}
	}
	return nil
}

func (t Table) writeAligned(w io.Writer, width int) error {
	widths := t.widths()
	indent := 0
	for _, cw := range widths[:len(widths)-1] {
		indent += cw + 2
	}
	last := max(width-indent, 20) // a narrow terminal wraps, it never hides a cell
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		lines := wrap(row[len(row)-1], last)
		var b strings.Builder
		for i, c := range row[:len(row)-1] {
			fmt.Fprintf(&b, "%-*s  ", widths[i], c)
		}
		b.WriteString(lines[0])
		for _, l := range lines[1:] {
			b.WriteString("\n" + strings.Repeat(" ", indent) + l)
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

// widths are the columns' widths but the last, which wraps.
func (t Table) widths() []int {
	widths := make([]int, len(t.Header))
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	return widths
}

// wrap breaks s into lines of at most n runes at spaces; a longer word
// (a URL, an id) stands alone on its line rather than being cut.
func wrap(s string, n int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= n:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	return append(lines, line)
}
