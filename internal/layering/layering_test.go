package layering_test

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// root is the repository, two levels above this package.
const root = "../.."

// leaves import nothing of the module but other leaves: the services the CPI
// uses and the helpers tests share. None of them knows the CPI or CloudStack's
// client.
var leaves = []string{
	"cloudstack/hypervisor", "configdrive", "registry", "stemcell", "stemcell/diskimage", "webdav",
	"internal/jsonwords", "internal/loopback", "internal/ptytest", "internal/termtable", "internal/testconfig",
	"internal/testimages", "internal/trust", "internal/fixtures", "internal/launch",
}

// layers are the module's other packages and what each may import of the
// module besides the leaves, as architecture.md's tables say: main -> dispatch
// -> cpi -> cloudstack -> marks; doctor, orphans and vmtype beside cpi, never
// it; marks, the CPI's own vocabulary, below them all but config.
var layers = map[string][]string{
	"":                                 {"dispatch", "doctor", "orphans", "serve", "cloudstack", "config"},
	"dispatch":                         {"cpi", "cloudstack", "config"},
	"cpi":                              {"vmtype", "cloudstack", "marks", "config"},
	"vmtype":                           {"cloudstack", "config"},
	"doctor":                           {"vmtype", "cloudstack", "marks", "config"},
	"orphans":                          {"cloudstack", "marks", "config"},
	"serve":                            {"config"},
	"cloudstack":                       {"marks", "config"},
	"marks":                            {"config"},
	"cloudstack/cloudstackmock":        {"cloudstack", "marks"},
	"config":                           nil,
	"internal/docs":                    nil,
	"internal/layering":                nil,
	"internal/simtest":                 {"simulator"},
	"internal/fixtures/boshdeployment": {"internal/fixtures"},
	"hack/e2e/launcher":                nil,
	"hack/mkimage":                     nil,
	"hack/release/goblob":              nil,
	"manifests":                        nil,
	"spec":                             nil,
}

// simulator is the simulator's own table (architecture.md, "The
// simulator"), its imports named below simulator/ ("." is simulator/
// itself): each package imports only downwards, and nothing of the CPI.
var simulator = map[string][]string{
	"simulator/schema": nil, "simulator/schema/gen": nil, "simulator/imagecheck": nil, "simulator/transfers": nil,
	"simulator/netutils": nil, "simulator/model": nil,
	"simulator/kernel":         {"model", "schema", "transfers"},
	"simulator/views":          {"model", "kernel"},
	"simulator/identity":       {"model", "kernel", "views"},
	"simulator/infrastructure": {"model", "kernel", "views", "netutils", "schema"},
	"simulator/offering":       {"model", "kernel", "views"},
	"simulator/tag":            {"model", "kernel", "views"},
	"simulator/network":        {"model", "kernel", "views", "infrastructure", "tag", "netutils"},
	"simulator/storage":        {"model", "kernel", "views", "offering", "tag"},
	"simulator/template":       {"model", "kernel", "views", "imagecheck", "transfers"},
	"simulator/vm": {"model", "kernel", "views", "identity", "infrastructure", "offering", "tag", "network",
		"storage"},
	"simulator": {"schema", "imagecheck", "transfers", "netutils", "model", "kernel", "views", "identity",
		"infrastructure", "offering", "tag", "network", "storage", "template", "vm"},
	"simulator/cmd/cloudstack-simulator": {".", "schema"},
}

// allowed is what pkg (a path relative to the module) may import of the
// module, and whether pkg has a row at all.
func allowed(pkg string) ([]string, bool) {
	if slices.Contains(leaves, pkg) {
		return leaves, true
	}
	if may, ok := layers[pkg]; ok {
		return append(slices.Clone(leaves), may...), true
	}
	may, ok := simulator[pkg]
	out := make([]string, len(may))
	for i, m := range may {
		out[i] = filepath.ToSlash(filepath.Join("simulator", m))
	}
	return out, ok
}

// violations are the imports of graph (package -> the module's packages it
// imports, relative paths) that no row allows, and the packages without a
// row, one line each.
func violations(graph map[string][]string) []string {
	var out []string
	for pkg, imports := range graph {
		may, ok := allowed(pkg)
		if !ok {
			out = append(out, display(pkg)+" has no row: add it to docs/development/architecture.md and to this test")
			continue
		}
		for _, imp := range imports {
			if imp != pkg && !slices.Contains(may, imp) {
				out = append(out, display(pkg)+" imports "+display(imp)+", which architecture.md does not allow it")
			}
		}
	}
	slices.Sort(out)
	return out
}

func display(pkg string) string {
	if pkg == "" {
		return "the root package (main)"
	}
	return pkg + "/"
}

// TestImportsFollowTheLayers reads every package's imports (not its tests')
// and fails on one the rules above forbid.
func TestImportsFollowTheLayers(t *testing.T) {
	graph := moduleImports(t)
	if len(graph) < 40 {
		t.Fatalf("read %d packages: the walk of the module went wrong", len(graph))
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
}

// TestViolationsAreFound: the rules catch what they are there for.
func TestViolationsAreFound(t *testing.T) {
	for _, c := range []struct {
		pkg, imports string
	}{
		{"stemcell", "cpi"}, {"orphans", "cpi"}, {"doctor", "cpi"}, {"vmtype", "cpi"}, {"cloudstack", "cpi"},
		{"cloudstack", "vmtype"}, {"cpi", "dispatch"}, {"", "cpi"}, {"webdav", "cloudstack"},
		{"simulator/model", "simulator/kernel"}, {"simulator/kernel", "cloudstack"}, {"cpi", "simulator"},
		{"newpackage", "config"}, {"marks", "cloudstack"}, {"marks", "cpi"}, {"marks", "orphans"},
	} {
		if v := violations(map[string][]string{c.pkg: {c.imports}}); len(v) != 1 {
			t.Errorf("%s importing %s: %q, want one violation", display(c.pkg), c.imports, v)
		}
	}
	if v := violations(map[string][]string{"cpi": {"cloudstack", "stemcell"}, "": {"dispatch"}}); len(v) != 0 {
		t.Errorf("allowed imports refused: %q", v)
	}
}

// moduleImports is every package of the module (the repository without the
// modules of its own below it, tools/) and the module's packages it imports.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	module := modulePath(t)
	graph := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		if rel != "" && skipped(path, d.Name()) {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return err
		}
		var mine []string
		for _, imp := range p.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				mine = append(mine, strings.TrimPrefix(strings.TrimPrefix(imp, module), "/"))
			}
		}
		graph[rel] = mine
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

// skipped are the directories go builds nothing of as this module's.
func skipped(path, name string) bool {
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}

func modulePath(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}
