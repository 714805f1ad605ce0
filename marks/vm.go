package marks

import (
	"fmt"
	"strings"
)

// VM is what an incomplete VM's display name says of it: deployed by
// create_vm for this director and agent, about to acquire this vip (empty
// when the CPI acquires none), and not finished. deployVirtualMachine
// takes no tags, so the display name is the one mark that exists from the
// instant the VM does; create_vm's last step gives the VM its host name
// as display name again, which is what makes it complete.
type VM struct {
	Director string
	VIP      string
	Agent    string
}

// maxDisplayName is the width of the field the mark is written to,
// vm_instance.display_name: varchar(255).
const maxDisplayName = 255

// NewVM is the mark of a create_vm, the agent id cut so that the display
// name fits (the agent id goes last for that reason).
func NewVM(director, vip, agent string) VM {
	m := VM{Director: director, VIP: vip}
	room := maxDisplayName - len([]rune(m.DisplayName()))
	if r := []rune(agent); len(r) > room && room >= 0 {
		agent = string(r[:room])
	}
	m.Agent = agent
	return m
}

// DisplayName is the display name that carries the mark.
func (m VM) DisplayName() string {
	return fmt.Sprintf("%s %s=%s %s=%s %s=%s", IncompleteTag, DirectorTag, m.Director, VIPIntentTag, m.VIP,
		AgentTag, m.Agent)
}

// DirectorKeyword is the start every incomplete mark of the director
// shares: what a listing by keyword narrows to before ReadVM compares
// exactly.
func DirectorKeyword(director string) string {
	return fmt.Sprintf("%s %s=%s", IncompleteTag, DirectorTag, director)
}

// ReadVM reads the mark of a VM whose create_vm never finished from its
// display name; false for a complete VM, the operator's, or one renamed
// since.
func ReadVM(displayName string) (VM, bool) {
	var m VM
	rest, ok := strings.CutPrefix(displayName, IncompleteTag+" "+DirectorTag+"=")
	if !ok {
		return m, false
	}
	if m.Director, rest, ok = strings.Cut(rest, " "+VIPIntentTag+"="); !ok {
		return m, false
	}
	if m.VIP, m.Agent, ok = strings.Cut(rest, " "+AgentTag+"="); !ok {
		return VM{}, false
	}
	return m, true
}
