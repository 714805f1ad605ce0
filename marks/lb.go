package marks

import (
	"fmt"
	"strings"
)

// lbCreated opens the description of a load-balancer rule the CPI
// created. The description is written by createLoadBalancerRule itself, in
// the row it inserts, so a rule is never the CPI's and unmarked: no crash
// or lost answer between the rule and its mark.
const lbCreated = "bosh-cpi-created"

// LB says which director's create_vm, for which agent, created a
// load-balancer rule.
type LB struct {
	Director string
	Agent    string
}

// Description is the description createLoadBalancerRule gives the rule.
func (m LB) Description() string {
	return fmt.Sprintf("%s %s=%s %s=%s", lbCreated, DirectorTag, m.Director, AgentTag, m.Agent)
}

// ReadLB reads the mark from a rule's description; false for an
// operator's rule.
func ReadLB(description string) (LB, bool) {
	var m LB
	rest, ok := strings.CutPrefix(description, lbCreated+" "+DirectorTag+"=")
	if !ok {
		return m, false
	}
	if m.Director, m.Agent, ok = strings.Cut(rest, " "+AgentTag+"="); !ok {
		return LB{}, false
	}
	return m, true
}
