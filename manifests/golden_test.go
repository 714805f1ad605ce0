package manifests_test

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false,
	"rewrite manifests/testdata/cpi-json/ from this render (only when a change of cpi.json is intended)")

// checkGolden compares a rendered cpi.json, byte for byte, with the one
// recorded in testdata/cpi-json/ for its combination, after the values
// generated for this run (the vars store's passwords and certificates, the
// test's own CA) are put back as ((name)) placeholders. A manifest that sets
// none of the earlier CPIs' properties must keep rendering the same file.
func checkGolden(t *testing.T, combo string, r rendered, extra map[string]string) {
	t.Helper()
	got := r.file(t, "config/cpi.json")
	secrets := storeLeaves(t, r.creds)
	for name, value := range extra {
		secrets[name] = value
	}
	got = placeholders(got, secrets)
	path := filepath.Join(root, "manifests", "testdata", "cpi-json", goldenName(combo)+"."+r.as+".json")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: no recorded cpi.json (go test ./manifests -run %s -update-golden writes it): %v", r.as, t.Name(), err)
	}
	if got != string(want) {
		t.Errorf("%s: cpi.json differs from %s:\n--- got\n%s\n--- recorded\n%s", r.as, path, got, want)
	}
}

var unsafeName = regexp.MustCompile(`[^a-z0-9-]+`)

func goldenName(combo string) string {
	return strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(combo), "-"), "-")
}

// placeholders replaces each secret, as cpi.json spells it (JSON-escaped),
// by ((name)); longer values first, so a certificate is replaced whole
// before a shorter value inside it could be.
func placeholders(text string, secrets map[string]string) string {
	names := make([]string, 0, len(secrets))
	for name, v := range secrets {
		if len(v) >= 8 { // shorter values (a user name) are not generated
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := len(secrets[names[i]]), len(secrets[names[j]]); a != b {
			return a > b
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		quoted, _ := json.Marshal(secrets[name])
		escaped := strings.TrimSuffix(strings.TrimPrefix(string(quoted), `"`), `"`)
		text = strings.ReplaceAll(text, escaped, "(("+name+"))")
	}
	return text
}

// storeLeaves reads a vars store (YAML, read by ruby, which the renderer
// needs anyway) as path → string for every string leaf.
func storeLeaves(t *testing.T, store string) map[string]string {
	t.Helper()
	out, err := exec.Command("ruby", "-ryaml", "-rjson", "-e", "puts JSON.dump(YAML.load_file(ARGV[0]))", store).Output()
	if err != nil {
		t.Fatalf("reading %s: %v", store, err)
	}
	var tree any
	if err := json.Unmarshal(out, &tree); err != nil {
		t.Fatal(err)
	}
	leaves := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				walk(strings.TrimPrefix(prefix+"."+k, "."), child)
			}
		case string:
			leaves[prefix] = v
		}
	}
	walk("", tree)
	return leaves
}
