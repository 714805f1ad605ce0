package vmtype_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// PickCustom prefers a custom constrained offering that takes cpu and ram
// over an unconstrained one listed before it, and names every customized
// offering's limits when none takes them.
func TestPickCustomPrefersAConstrainedOffering(t *testing.T) {
	fixed := cloudstack.ServiceOffering{Name: "Small", CPUs: 1, MemoryMB: 512}
	open := cloudstack.ServiceOffering{Name: "Open", Customized: true}
	bounded := cloudstack.ServiceOffering{Name: "Bounded", Customized: true, Constrained: true, MinCPUs: 1, MaxCPUs: 2,
		MinMemoryMB: 512, MaxMemoryMB: 4096}
	o, err := vmtype.PickCustom([]cloudstack.ServiceOffering{fixed, open, bounded}, 2, 2048, 0)
	if err != nil || o.Name != "Bounded" {
		t.Fatalf("picked %+v, %v; want Bounded", o, err)
	}
	o, err = vmtype.PickCustom([]cloudstack.ServiceOffering{fixed, open, bounded}, 4, 2048, 0)
	if err != nil || o.Name != "Open" {
		t.Fatalf("beyond Bounded's limits: picked %+v, %v; want Open", o, err)
	}
	_, err = vmtype.PickCustom([]cloudstack.ServiceOffering{fixed, bounded}, 4, 2048, 1000)
	if err == nil || !strings.Contains(err.Error(), `takes 4 CPUs and 2048 MiB of memory at 1000 MHz: "Bounded" takes 1 to 2 CPUs`) {
		t.Fatalf("none takes them: %v", err)
	}
	if _, err = vmtype.PickCustom([]cloudstack.ServiceOffering{fixed}, 1, 512, 0); !errors.Is(err, vmtype.ErrNoCustomOffering) {
		t.Fatalf("none customized: %v", err)
	}
}

func TestNamedOfferingsFitWhatTheVMTypeGives(t *testing.T) {
	fixed := &cloudstack.ServiceOffering{Name: "Small", CPUs: 1, MemoryMB: 512}
	bounded := &cloudstack.ServiceOffering{Name: "Bounded", Customized: true, Constrained: true, MinCPUs: 1, MaxCPUs: 2,
		MinMemoryMB: 512, MaxMemoryMB: 4096}
	if err := vmtype.CheckNamedCustom(fixed, "Small", 1, 512, 0); !errors.Is(err, vmtype.ErrNotCustomized) ||
		!strings.Contains(err.Error(), `compute offering "Small" is not customized`) {
		t.Errorf("cpu and ram on a fixed offering: %v", err)
	}
	if err := vmtype.CheckNamedCustom(bounded, "Bounded", 4, 512, 0); err == nil || errors.Is(err, vmtype.ErrNotCustomized) {
		t.Errorf("beyond its limits: %v", err)
	}
	if err := vmtype.CheckNamedCustom(bounded, "Bounded", 2, 512, 0); err != nil {
		t.Errorf("within its limits: %v", err)
	}
	if err := vmtype.CheckFixed(bounded, "Bounded"); err == nil || !strings.Contains(err.Error(), "is customized") {
		t.Errorf("a customized offering without cpu and ram: %v", err)
	}
	if err := vmtype.CheckFixed(fixed, "Small"); err != nil {
		t.Errorf("a fixed offering: %v", err)
	}
}
