package simtesting

import (
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// AddFault is a shared test helper.
func AddFault(t *testing.T, s *Sim, f kernel.Fault) {
	t.Helper()
	if err := s.Admin.AddFault(f); err != nil {
		t.Fatal(err)
	}
}
