package marks_test

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

func TestVMMarkReadsBackFromTheDisplayName(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, m := range []marks.VM{
		marks.NewVM("dir-1", "192.168.2.5", "agent-1"),
		marks.NewVM("dir-1", "", "agent with spaces bosh-cpi-vip=1.2.3.4"),
		marks.NewVM("", "", ""),
		marks.NewVM("dir-1", "192.168.2.5", long),
	} {
		name := m.DisplayName()
		if n := len([]rune(name)); n > 255 {
			t.Errorf("display name of %d characters: vm_instance.display_name is varchar(255)", n)
		}
		if !strings.HasPrefix(name, marks.DirectorKeyword(m.Director)) {
			t.Errorf("%q does not start with its director's keyword", name)
		}
		got, ok := marks.ReadVM(name)
		if !ok || got != m {
			t.Errorf("%q reads back as %+v (%v), want %+v", name, got, ok, m)
		}
	}
	if m := marks.NewVM("d", "", long); m != marks.NewVM("d", "", long+"b") || !strings.HasPrefix(long, m.Agent) {
		t.Errorf("a cut agent id must compare equal to itself cut the same way: %q", m.Agent)
	}
	for _, name := range []string{"vm-1234", "web_0", "bosh-cpi-incomplete", "bosh-cpi-incomplete bosh-director-uuid=d",
		"x bosh-cpi-incomplete bosh-director-uuid=d bosh-cpi-vip= bosh-agent-id=a"} {
		if m, ok := marks.ReadVM(name); ok {
			t.Errorf("%q is no mark, read as %+v", name, m)
		}
	}
}

func TestLBMarkReadsBackFromTheDescription(t *testing.T) {
	m := marks.LB{Director: "dir-1", Agent: "agent-1"}
	if got, ok := marks.ReadLB(m.Description()); !ok || got != m {
		t.Errorf("%q reads back as %+v (%v)", m.Description(), got, ok)
	}
	for _, desc := range []string{"", "web servers", "bosh-cpi-created", "bosh-cpi-created bosh-director-uuid=dir-1"} {
		if got, ok := marks.ReadLB(desc); ok {
			t.Errorf("an operator's rule described %q is read as the CPI's: %+v", desc, got)
		}
	}
}
