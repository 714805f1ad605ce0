package simtesting

import (
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// AddFault adds a fault rule through the admin API.
func AddFault(t *testing.T, s *Sim, f kernel.Fault) {
	t.Helper()
	if err := s.Admin.AddFault(f); err != nil {
		t.Fatal(err)
	}
}
