package simulator

import "testing"

// testTemplateID is the template every deployVirtualMachine test deploys
// from. For now templateForDeploy accepts any UUID.
// MERGE: register a template ready in the seeded zone (or find the seeded
// one) through the templates family and return its id.
func testTemplateID(t *testing.T, s *Server) string {
	t.Helper()
	return "7d4a2c6e-1b3f-4e8a-9c0d-5f6e7a8b9c0d"
}
