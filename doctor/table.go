package doctor

import "github.com/bosh-cloudstack/cloudstack-cpi/internal/termtable"

// Table lays the results out for o. On a terminal each check is a row of
// check, status and result, and a failure's fix is a row of its own below,
// so that only the last column wraps; otherwise each check is one line of
// check, status, result and fix, for grep and cut.
func Table(results []Result, o termtable.Output) termtable.Table {
	if o.Width <= 0 {
		t := termtable.Table{Header: []string{"CHECK", "STATUS", "RESULT", "FIX"}}
		for _, r := range results {
			t.Rows = append(t.Rows, []string{r.Check, status(r), r.Result, r.Fix})
		}
		return t
	}
	t := termtable.Table{Header: []string{"CHECK", "STATUS", "RESULT / WHAT TO DO"}}
	for _, r := range results {
		t.Rows = append(t.Rows, []string{r.Check, status(r), r.Result})
		if r.Fix != "" {
			t.Rows = append(t.Rows, []string{"", "", "→ " + r.Fix})
		}
	}
	return t
}

func status(r Result) string {
	if r.OK {
		return "ok"
	}
	return "FAIL"
}
