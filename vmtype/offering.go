package vmtype

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// ErrNoCustomOffering is PickCustom's answer when CloudStack offers no
// customized compute offering at all.
var ErrNoCustomOffering = errors.New("cpu and ram need a customized compute offering, and CloudStack offers none")

// ErrNotCustomized is CheckNamedCustom's answer for a fixed offering named
// beside cpu and ram.
var ErrNotCustomized = errors.New("is not customized, so cpu and ram cannot be set")

// PickCustom chooses among offerings the customized one for cpu, ram and
// speed (0: any), as create_vm does when compute_offering names none: a
// custom constrained offering whose limits take them first, else another
// customized one that does. The error names every customized offering's
// limits, or is ErrNoCustomOffering.
func PickCustom(offerings []cloudstack.ServiceOffering, cpu, ram, speed int) (*cloudstack.ServiceOffering, error) {
	var pick *cloudstack.ServiceOffering
	var misfits []string
	for i := range offerings {
		o := &offerings[i]
		switch {
		case !o.Customized:
		case !o.Takes(cpu, ram, speed):
			misfits = append(misfits, fmt.Sprintf("%q takes %s", o.Name, o.Limits()))
		case pick == nil || o.Constrained && !pick.Constrained:
			pick = o
		}
	}
	switch {
	case pick != nil:
		return pick, nil
	case len(misfits) > 0:
		return nil, fmt.Errorf("no customized compute offering takes %d CPUs and %d MiB of memory%s: %s",
			cpu, ram, speedText(speed), strings.Join(misfits, "; "))
	}
	return nil, ErrNoCustomOffering
}

func speedText(mhz int) string {
	if mhz == 0 {
		return ""
	}
	return fmt.Sprintf(" at %d MHz", mhz)
}

// CheckNamedCustom checks the offering compute_offering names (ref) beside
// cpu and ram: it must be customized (else ErrNotCustomized) and its
// limits must take them.
func CheckNamedCustom(o *cloudstack.ServiceOffering, ref string, cpu, ram, speed int) error {
	if !o.Customized {
		return fmt.Errorf("compute offering %q %w", ref, ErrNotCustomized)
	}
	return o.CheckCustom(cpu, ram, speed)
}

// CheckFixed checks the offering a VM type without cpu and ram runs on
// (compute_offering, or cloudstack.default_compute_offering): only a fixed
// one says how big the VM is.
func CheckFixed(o *cloudstack.ServiceOffering, ref string) error {
	if o.Customized {
		return fmt.Errorf("compute offering %q is customized: give cpu and ram instead", ref)
	}
	return nil
}
