package network_test

import (
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// vmEnv is simtesting's VM environment with this package's own helpers.
type vmEnv struct{ *simtesting.VMEnv }

func newVMEnv(t *testing.T, opts simulator.Options) *vmEnv {
	t.Helper()
	return &vmEnv{simtesting.NewVMEnv(t, opts)}
}
