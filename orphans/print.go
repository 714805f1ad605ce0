package orphans

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/termtable"
)

// Table is the rows as termtable prints them: aligned on a terminal, one
// tab-separated line per row otherwise. A director-less row shows "-".
func Table(rows []Row, now time.Time) termtable.Table {
	t := termtable.Table{Header: []string{"DIRECTOR", "KIND", "ID", "NAME", "AGE", "SIZE", "WHY"}}
	for _, r := range rows {
		why := r.Why
		switch {
		case r.Deleted:
			why = "deleted; " + why
		case r.Error != "":
			why = "NOT deleted: " + r.Error + "; " + why
		}
		t.Rows = append(t.Rows, []string{firstOf(r.Director, "-"), r.Kind, r.ID, firstOf(r.Name, "-"),
			age(r, now), size(r.SizeBytes), why})
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
