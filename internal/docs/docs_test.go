package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// root is the repository, two levels above this package.
const root = "../.."

const (
	readmeMaxLines = 250 // README.md is a guide, not a log
	firstScreen    = 60  // what an operator sees before scrolling
	kvmQuickstart  = "#quickstart-on-kvm"
)

func readme(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func TestReadmeIsShort(t *testing.T) {
	if n := len(readme(t)); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to docs/operators or docs/development", n, readmeMaxLines)
	}
}

// TestReadmeFirstScreen: the support table (rows by hypervisor, each with
// the stemcell it takes, what the CPI does, what is verified here and what
// only on a real cloud) and a link to the KVM quickstart come before line
// 60, and the quickstart is a heading of README.md.
func TestReadmeFirstScreen(t *testing.T) {
	lines := readme(t)
	screen := lines[:min(firstScreen, len(lines))]
	header := slices.IndexFunc(screen, func(l string) bool {
		return strings.HasPrefix(l, "| Hypervisor |") && strings.Contains(l, "Stemcell") &&
			strings.Contains(l, "Verified here") && strings.Contains(l, "Only on a real cloud")
	})
	if header < 0 {
		t.Fatalf("no support table (a header \"| Hypervisor | Stemcell … Verified here … Only on a real cloud …\") in README.md's first %d lines", firstScreen)
	}
	rows := map[string]string{} // a hypervisor's rows, joined
	for _, l := range screen[header+2:] {
		if !strings.HasPrefix(l, "|") {
			break
		}
		cells := strings.Split(l, "|")
		rows[strings.TrimSpace(cells[1])] += l
	}
	for hv, wants := range map[string][]string{
		"KVM":                {"bosh-openstack-kvm-ubuntu-"},
		"XenServer / XCP-ng": {"bosh-openstack-kvm-ubuntu-", "bosh-cloudstack-xen-ubuntu-"},
		"VMware":             {"bosh-vsphere-esxi-ubuntu-"},
	} {
		for _, want := range wants {
			if !strings.Contains(rows[hv], want) {
				t.Errorf("the support table's rows %q do not name %q: %q", hv, want, rows[hv])
			}
		}
	}
	if !slices.ContainsFunc(screen, func(l string) bool { return strings.Contains(l, "CloudStack 4.22") }) {
		t.Errorf("README.md's first %d lines do not say which CloudStack version the table holds for", firstScreen)
	}
	if !strings.Contains(rows["KVM"], "https://bosh.io/stemcells/bosh-openstack-kvm-ubuntu-jammy-go_agent") {
		t.Errorf("the KVM row does not link bosh.io's stemcell page: %q", rows["KVM"])
	}
	if !slices.ContainsFunc(screen, func(l string) bool { return strings.Contains(l, "]("+kvmQuickstart+")") }) {
		t.Errorf("no link to %s in README.md's first %d lines", kvmQuickstart, firstScreen)
	}
	if !slices.Contains(anchors(strings.Join(lines, "\n")), strings.TrimPrefix(kvmQuickstart, "#")) {
		t.Errorf("README.md has no heading for %s", kvmQuickstart)
	}
}

// TestReadmeNamesExistingGuides: every docs/operators or docs/development
// path README.md names exists, and every guide there is named by it.
func TestReadmeNamesExistingGuides(t *testing.T) {
	text := strings.Join(readme(t), "\n")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`docs/(?:operators|development)/[\w.-]+\.md`).FindAllString(text, -1) {
		named[m] = true
		if _, err := os.Stat(filepath.Join(root, m)); err != nil {
			t.Errorf("README.md names %s, which does not exist", m)
		}
	}
	for _, dir := range []string{"docs/operators", "docs/development"} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.md"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no guides (%v)", dir, err)
		}
		for _, f := range files {
			if p := dir + "/" + filepath.Base(f); !named[p] {
				t.Errorf("README.md does not link %s", p)
			}
		}
	}
}

var (
	linkRE  = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	fenceRE = regexp.MustCompile("(?ms)^```.*?^```")
	codeRE  = regexp.MustCompile("`[^`\n]*`")
)

// markdownFiles are the guides whose links are checked: README.md, every
// file under docs/, and the READMEs of hack/e2e and tools.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "hack/e2e/README.md", "tools/README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRelativeLinksResolve: every relative link reaches an existing file,
// and its #fragment a heading of that file (GitHub's anchors).
func TestRelativeLinksResolve(t *testing.T) {
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		text := codeRE.ReplaceAllString(fenceRE.ReplaceAllString(string(b), ""), "")
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			if err := checkLink(file, m[1]); err != nil {
				t.Errorf("%s: link %s: %v", file, m[1], err)
			}
		}
	}
}

func checkLink(file, link string) error {
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
		return nil
	}
	path, frag, _ := strings.Cut(link, "#")
	target := filepath.Join(filepath.Dir(filepath.Join(root, file)), path)
	if path == "" {
		target = filepath.Join(root, file)
	}
	info, err := os.Stat(target)
	if err != nil {
		return fmt.Errorf("no such file %s", path)
	}
	if frag == "" {
		return nil
	}
	if info.IsDir() || !strings.HasSuffix(target, ".md") {
		return fmt.Errorf("#%s points into %s, which is no Markdown file", frag, path)
	}
	b, err := os.ReadFile(target)
	if err != nil {
		return err
	}
	if !slices.Contains(anchors(string(b)), frag) {
		return fmt.Errorf("no heading with the anchor #%s", frag)
	}
	return nil
}

// anchors are the ids GitHub gives a file's headings: lower case, letters,
// digits, spaces, '-' and '_' kept, spaces turned into '-', and -1, -2 …
// after repeats.
func anchors(text string) []string {
	var ids []string
	seen := map[string]int{}
	for _, line := range strings.Split(fenceRE.ReplaceAllString(text, ""), "\n") {
		heading := strings.TrimLeft(line, "#")
		if heading == line || !strings.HasPrefix(heading, " ") {
			continue
		}
		id := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				return unicode.ToLower(r)
			}
			return -1
		}, strings.TrimSpace(heading))
		if n := seen[id]; n > 0 {
			ids = append(ids, fmt.Sprintf("%s-%d", id, n))
		} else {
			ids = append(ids, id)
		}
		seen[id]++
	}
	return ids
}

func TestAnchorsAsGitHubMakesThem(t *testing.T) {
	got := anchors("# A\n## Quickstart on KVM\n```\n# not a heading\n```\n## `cloudstack-cpi serve`: the registry\n" +
		"## bosh-deployment with this repository's `manifests/cpi.yml`\n## A\n#nospace\n")
	want := []string{"a", "quickstart-on-kvm", "cloudstack-cpi-serve-the-registry",
		"bosh-deployment-with-this-repositorys-manifestscpiyml", "a-1"}
	if !slices.Equal(got, want) {
		t.Errorf("anchors: got %q, want %q", got, want)
	}
}

// TestRoleListsEveryCommand: the account's role in logs-and-role.md names
// every command the CloudStack layer sends, so a new command reaches the
// operators' list.
func TestRoleListsEveryCommand(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "docs/operators/logs-and-role.md"))
	if err != nil {
		t.Fatal(err)
	}
	all := slices.Concat(cloudstack.Commands, cloudstack.OptionalCommands, cloudstack.DoctorCommands)
	for _, c := range all {
		if !strings.Contains(string(b), "`"+c+"`") {
			t.Errorf("docs/operators/logs-and-role.md does not list the command %s", c)
		}
	}
}
