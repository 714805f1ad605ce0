package cloudstack_test

import (
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

func TestSupported(t *testing.T) {
	for version, want := range map[string][2]bool{
		"4.19.0.0": {true, true}, "4.20.1.0": {true, true}, "4.22.0.0": {true, true}, "5.0": {true, true},
		"4.18.2.5": {false, true}, "3.0.7": {false, true}, "4.9.3.0": {false, true},
		"unknown": {false, false}, "": {false, false}, "4": {false, false}, "4.x.1": {false, false},
	} {
		if ok, known := cloudstack.Supported(version); ok != want[0] || known != want[1] {
			t.Errorf("Supported(%q) = %v, %v; want %v", version, ok, known, want)
		}
	}
}
