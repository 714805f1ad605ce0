package doctor

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docChecks are the check names docs/operators/troubleshooting.md's rows may name in
// their last column.
var docChecks = []string{CheckEndpoint, CheckKeys, CheckVersion, CheckCommands, CheckExpunge, CheckZone, CheckOfferings,
	CheckKeyPairs, CheckNetworks, CheckWebDAV, CheckUploads, CheckPolling}

// TestTroubleshootingNamesRealChecks: every row of docs/operators/troubleshooting.md
// names, in its last column, checks doctor has (in backquotes, with asides
// in parentheses) or "—" where doctor cannot see the cause, and every check
// finds some row's cause.
func TestTroubleshootingNamesRealChecks(t *testing.T) {
	doc, err := os.ReadFile("../docs/operators/troubleshooting.md")
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile("`([^`]+)`")
	aside := regexp.MustCompile(`\([^)]*\)`) // "(reads the interval where …)": config keys, not checks
	named := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| Symptom") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		last := strings.TrimSpace(aside.ReplaceAllString(cells[len(cells)-1], ""))
		rows++
		if last == "—" {
			continue
		}
		names := quoted.FindAllStringSubmatch(last, -1)
		if len(names) == 0 || !strings.HasPrefix(last, "`") {
			t.Errorf("row %q: its last column %q names no doctor check", cells[0], last)
		}
		for _, m := range names {
			if !slices.Contains(docChecks, m[1]) {
				t.Errorf("row %q names check %q, which doctor does not have (it has %q)", cells[0], m[1], docChecks)
			}
			named[m[1]] = true
		}
	}
	if rows < 10 {
		t.Fatalf("docs/operators/troubleshooting.md has %d rows", rows)
	}
	for _, c := range docChecks {
		if !named[c] {
			t.Errorf("no row of docs/operators/troubleshooting.md names the %q check", c)
		}
	}
}

// TestDocChecksAreTheChecksRunMakes: docChecks lists every check Run makes,
// so that a check added to Run is also looked for in the troubleshooting
// table.
func TestDocChecksAreTheChecksRunMakes(t *testing.T) {
	var ran []string
	for _, r := range Run(testConfig(t, nil), &fakeCloud{hypervisor: "KVM"}, Options{}) {
		if !slices.Contains(ran, r.Check) {
			ran = append(ran, r.Check)
		}
	}
	if !slices.Equal(ran, docChecks) {
		t.Fatalf("Run makes the checks %q, docChecks lists %q", ran, docChecks)
	}
}
