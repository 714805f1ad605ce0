package orphans

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/termtable"
)

// Write prints the rows for out: on a terminal one aligned table per
// director, under a line naming it; otherwise one tab-separated line per
// row, its director first, for grep, cut and awk.
func Write(w io.Writer, out termtable.Output, rows []Row, now time.Time) error {
	if out.Width <= 0 {
		return Table(rows, now, true).Write(w, out)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no orphans")
		return err
	}
	for start := 0; start < len(rows); {
		end := start
		for end < len(rows) && rows[end].Director == rows[start].Director {
			end++
		}
		title := "director " + rows[start].Director
		if rows[start].Director == "" {
			title = "no director named (the mark names none)"
		}
		if start > 0 {
			title = "\n" + title
		}
		if _, err := fmt.Fprintf(w, "%s: %d\n", title, end-start); err != nil {
			return err
		}
		if err := Table(rows[start:end], now, false).Write(w, out); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// terminalName is the longest name a terminal's table shows whole.
const terminalName = 40

// Table is the rows as termtable prints them, with a DIRECTOR column
// ("-" for none) or, for one director's rows on a terminal, without it and
// with long names cut. -delete's outcome opens WHY; its errors are on
// stderr and in -json.
func Table(rows []Row, now time.Time, withDirector bool) termtable.Table {
	t := termtable.Table{Header: []string{"KIND", "ID", "NAME", "AGE", "SIZE", "WHY"}}
	if withDirector {
		t.Header = append([]string{"DIRECTOR"}, t.Header...)
	}
	for _, r := range rows {
		why := r.Why
		switch {
		case r.Deleted:
			why = "deleted; " + why
		case r.Error != "":
			why = "NOT deleted; " + why
		}
		name := firstOf(r.Name, "-")
		if n := []rune(name); !withDirector && len(n) > terminalName {
			name = string(n[:terminalName-1]) + "…"
		}
		row := []string{r.Kind, r.ID, name, age(r, now), size(r.SizeBytes), why}
		if withDirector {
			row = append([]string{firstOf(r.Director, "-")}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// WriteJSON prints {"orphans": [...]}, each row with its creation time
// and age in seconds (null when CloudStack gives no time).
func WriteJSON(w io.Writer, rows []Row, now time.Time) error {
	type jsonRow struct {
		Row
		Created    *time.Time `json:"created"`
		AgeSeconds *int64     `json:"age_seconds"`
	}
	out := struct {
		Orphans []jsonRow `json:"orphans"`
	}{Orphans: []jsonRow{}}
	for _, r := range rows {
		j := jsonRow{Row: r}
		if !r.Created.IsZero() {
			created, secs := r.Created.UTC(), int64(r.Age(now)/time.Second)
			j.Created, j.AgeSeconds = &created, &secs
		}
		out.Orphans = append(out.Orphans, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// age is a row's age, to the minute beyond an hour; "-" when unknown.
func age(r Row, now time.Time) string {
	if r.Created.IsZero() {
		return "-"
	}
	d := r.Age(now)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// size is bytes in binary units; "-" when CloudStack gives none.
func size(b int64) string {
	const unit = 1024
	if b <= 0 {
		return "-"
	}
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
