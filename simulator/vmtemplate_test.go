package simulator

import (
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/template"
)

// testTemplateID is the template every deployVirtualMachine test deploys
// from: the seeded builtin template, ready in the seeded zone.
func testTemplateID(t *testing.T, s *Server) string {
	t.Helper()
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, tpl := range s.State.Templates {
		if tpl.Name == template.BuiltinTemplateName && tpl.Removed == nil {
			return tpl.ID
		}
	}
	t.Fatal("the simulator has no builtin template")
	return ""
}
