package doctor

import (
	"errors"
	"fmt"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// checkOfferings finds the offerings cpi.json's defaults and the
// cloud-config's VM and disk types name, and checks they fit as create_vm
// and create_disk use them.
func (r *run) checkOfferings() {
	cs := r.cfg.CloudStack
	before := len(r.results)
	if ref := cs.DefaultComputeOffering; ref != "" {
		r.computeOffering("cloudstack.default_compute_offering", ref)
	}
	for _, d := range []struct{ key, ref string }{
		{"cloudstack.default_disk_offering", cs.DefaultDiskOffering},
		{"cloudstack.default_ephemeral_disk_offering", cs.DefaultEphemeralDiskOffering},
	} {
		if d.ref != "" {
			r.diskOffering(d.key, d.ref, false)
		}
	}
	if ref := cs.DefaultCustomDiskOffering; ref != "" {
		r.diskOffering("cloudstack.default_custom_disk_offering", ref, true)
	}
	if cc := r.opts.CloudConfig; cc != nil {
		for _, t := range cc.VMTypes {
			r.vmType(t)
		}
		for _, t := range cc.DiskTypes {
			r.diskType(t)
		}
	}
	if len(r.results) == before {
		r.pass(CheckOfferings, "none named: no cloudstack.default_*_offering, and no -cloud-config")
	}
}

// computeOffering checks a fixed compute offering: create_vm refuses a
// customized one where no cpu and ram are given.
func (r *run) computeOffering(what, ref string) {
	o, err := r.cloud.FindServiceOffering(ref)
	if err != nil {
		r.fail(CheckOfferings, what+": "+err.Error(), "name an existing compute offering (listServiceOfferings) in "+what)
		return
	}
	if err := vmtype.CheckFixed(o, ref); err != nil {
		r.fail(CheckOfferings, what+": "+err.Error(), "name a fixed compute offering, or give the VM types cpu and ram")
		return
	}
	r.pass(CheckOfferings, fmt.Sprintf("%s: compute offering %q (%s)", what, o.Name, o.ID))
}

// diskOffering checks a disk offering exists and, when custom, takes a size.
func (r *run) diskOffering(what, ref string, custom bool) {
	o, err := r.cloud.FindDiskOffering(ref)
	switch {
	case err != nil:
		r.fail(CheckOfferings, what+": "+err.Error(), "name an existing disk offering (listDiskOfferings) in "+what)
	case custom && !o.Customized:
		r.fail(CheckOfferings, fmt.Sprintf("%s: disk offering %q is not customized", what, ref),
			"name a customized disk offering (one that takes a size)")
	default:
		r.pass(CheckOfferings, fmt.Sprintf("%s: disk offering %q (%s)", what, o.Name, o.ID))
	}
}

// vmType checks a VM type's compute and ephemeral disk offerings.
func (r *run) vmType(t ccVMType) {
	p := t.CloudProperties
	what := fmt.Sprintf("vm_type %q", t.Name)
	switch {
	case p.Custom():
		r.customCompute(what, p)
	case p.ComputeOffering != "":
		r.computeOffering(what, p.ComputeOffering)
	case r.cfg.CloudStack.DefaultComputeOffering == "":
		r.fail(CheckOfferings, what+": names no compute_offering, nor cpu and ram, and there is no "+
			"cloudstack.default_compute_offering", "give the VM type compute_offering, or cpu and ram")
	}
	if ref := p.EphemeralDiskOffering; ref != "" {
		r.diskOffering(what+" ephemeral_disk_offering", ref, false)
	}
}

// customCompute checks a customized offering takes cpu, ram and speed:
// the one named, or the one create_vm picks (vmtype.PickCustom).
func (r *run) customCompute(what string, p vmtype.Props) {
	if ref := p.ComputeOffering; ref != "" {
		o, err := r.cloud.FindServiceOffering(ref)
		if err != nil {
			r.fail(CheckOfferings, what+": "+err.Error(), "name an existing compute offering in its compute_offering")
			return
		}
		if err := vmtype.CheckNamedCustom(o, ref, p.CPU, p.RAM, p.CPUSpeed); err != nil {
			fix := "fit cpu and ram to the offering's limits, or change its limits"
			if errors.Is(err, vmtype.ErrNotCustomized) {
				fix = "name a customized compute offering, or drop cpu and ram"
			}
			r.fail(CheckOfferings, what+": "+err.Error(), fix)
			return
		}
		r.passCustom(what, o, p)
		return
	}
	offerings, err := r.cloud.ServiceOfferings()
	if err != nil {
		r.fail(CheckOfferings, what+": "+err.Error(), "give the account a role that may call listServiceOfferings")
		return
	}
	o, err := vmtype.PickCustom(offerings, p.CPU, p.RAM, p.CPUSpeed)
	switch {
	case errors.Is(err, vmtype.ErrNoCustomOffering):
		r.fail(CheckOfferings, what+": "+err.Error(), "create a customized compute offering, or give the VM type a compute_offering")
	case err != nil:
		r.fail(CheckOfferings, what+": "+err.Error(), "fit cpu and ram to an offering's limits, or widen them")
	default:
		r.passCustom(what, o, p)
	}
}

func (r *run) passCustom(what string, o *cloudstack.ServiceOffering, p vmtype.Props) {
	r.pass(CheckOfferings, fmt.Sprintf("%s: customized compute offering %q takes %d CPUs and %d MiB", what, o.Name, p.CPU, p.RAM))
}

// diskType checks a disk type's offering, or that a customized one exists
// for create_disk's size alone.
func (r *run) diskType(t ccDiskType) {
	what := fmt.Sprintf("disk_type %q", t.Name)
	if ref := t.CloudProperties.DiskOffering; ref != "" {
		r.diskOffering(what, ref, false)
		return
	}
	if r.cfg.CloudStack.DefaultDiskOffering != "" || r.cfg.CloudStack.DefaultCustomDiskOffering != "" {
		return // checked as cpi.json's defaults
	}
	o, err := r.cloud.CustomDiskOffering()
	if err != nil {
		r.fail(CheckOfferings, what+": names no disk_offering: "+err.Error(),
			"give the disk type a disk_offering, or set cloudstack.default_custom_disk_offering")
		return
	}
	r.pass(CheckOfferings, fmt.Sprintf("%s: customized disk offering %q", what, o.Name))
}

// checkKeyPairs finds the SSH key pairs cpi.json and the VM types name.
func (r *run) checkKeyPairs() {
	names := map[string]string{}
	var order []string
	add := func(name, what string) {
		if name != "" && names[name] == "" {
			names[name] = what
			order = append(order, name)
		}
	}
	add(r.cfg.CloudStack.DefaultKeyPair, "cloudstack.default_key_pair")
	if cc := r.opts.CloudConfig; cc != nil {
		for _, t := range cc.VMTypes {
			add(t.CloudProperties.KeyPair, fmt.Sprintf("vm_type %q keypair", t.Name))
		}
	}
	if len(order) == 0 {
		r.pass(CheckKeyPairs, "none named: VMs get no SSH key pair")
		return
	}
	for _, name := range order {
		ok, err := r.cloud.HasKeyPair(name)
		switch {
		case err != nil:
			r.fail(CheckKeyPairs, names[name]+": "+err.Error(), "give the account a role that may call listSSHKeyPairs")
		case !ok:
			r.fail(CheckKeyPairs, fmt.Sprintf("%s: the account has no SSH key pair %q", names[name], name),
				"register it as the account (registerSSHKeyPair), or fix the name")
		default:
			r.pass(CheckKeyPairs, fmt.Sprintf("%s: key pair %q", names[name], name))
		}
	}
}
