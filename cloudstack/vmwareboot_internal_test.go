package cloudstack

import "testing"

// chaininfo's diskDeviceBusName gives the SCSI unit; IDE, garbage and no
// chaininfo give none.
func TestParseSCSIUnit(t *testing.T) {
	for _, c := range []struct {
		chain string
		unit  int
		ok    bool
	}{
		{`{"diskDeviceBusName":"scsi0:1","diskChain":["[ds] i-2-3-VM/DATA-4.vmdk"]}`, 1, true},
		{`{"diskDeviceBusName":"scsi0:8"}`, 8, true},
		{`{"diskDeviceBusName":"ide0:1"}`, 0, false},
		{`{"diskDeviceBusName":"scsi0:x"}`, 0, false},
		{`not json`, 0, false},
		{``, 0, false},
	} {
		if unit, ok := parseSCSIUnit(c.chain); unit != c.unit || ok != c.ok {
			t.Errorf("%q: %d %v, want %d %v", c.chain, unit, ok, c.unit, c.ok)
		}
	}
}
