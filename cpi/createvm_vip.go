package cpi

// create_vm's vip: checked before anything is made (after the
// convergence, which may free it), acquired and pointed at the VM once it
// is deployed.

import "fmt"

// checkVIP refuses, before anything is created, a vip that is already
// another VM's or is its network's source NAT address, and remembers an
// address the operator allocated.
func (d *deployment) checkVIP() error {
	if d.plan.networks.vip == nil {
		return nil
	}
	ip := d.plan.networks.vip.IP()
	addr, err := d.vms.cloud.FindPublicIP(d.spec.ZoneID, ip)
	switch {
	case err != nil:
		return err
	case addr == nil:
		return nil
	case addr.StaticNAT && addr.VMID != "":
		return vmCreationRefused(fmt.Errorf("vip %s is already static NAT to VM %s", ip, addr.VMID))
	case addr.SourceNAT:
		return vmCreationRefused(fmt.Errorf("vip %s is the source NAT address of its CloudStack network, which CloudStack "+
			"cannot static-NAT to a VM: choose another public IP", ip))
	}
	d.vipAddr = addr
	return nil
}

// intendedVIP is the vip this call will acquire: none when the operator
// allocated the address, which then only gets static NAT.
func (d *deployment) intendedVIP() string {
	if d.plan.networks.vip == nil || d.vipAddr != nil {
		return ""
	}
	return d.plan.networks.vip.IP()
}

// pointVIP acquires the vip (unless the operator had allocated it) for
// the VM's first network, its VPC when that is a tier, and gives it
// static NAT to the VM.
func (d *deployment) pointVIP() error {
	if d.plan.networks.vip == nil {
		return nil
	}
	first := d.plan.networks.nics[0].network
	if d.vipAddr == nil {
		addr, err := d.vms.cloud.AcquirePublicIP(first, d.plan.networks.vip.IP())
		if addr != nil {
			d.ipID, d.vipAddr = addr.ID, addr
		}
		if err != nil {
			return err
		}
	}
	return d.vms.cloud.EnableStaticNAT(d.vipAddr.ID, d.vm.ID, first.ID)
}
