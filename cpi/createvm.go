package cpi

// create_vm, read top to bottom: the VM type and networks are read, every
// default applied right after (createvm_read.go, createvm_defaults.go),
// and planned against the catalog into what to deploy, every refusal of
// the input decided there (createvm_plan.go); the affinity group is found
// or made (createvm_affinity.go); then the deployment runs, recording
// what it makes (createvm_deploy.go, with its steps createvm_converge.go,
// createvm_vip.go, createvm_lbs.go, createvm_settings.go and
// createvm_drive.go), and a failure removes exactly that
// (createvm_undo.go).

import (
	"strings"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// CreateVM implements apiv1.CPI (API v1).
func (c vms) CreateVM(agentID apiv1.AgentID, stemcellCID apiv1.StemcellCID, cp apiv1.VMCloudProps,
	networks apiv1.Networks, _ []apiv1.DiskCID, env apiv1.VMEnv) (apiv1.VMCID, error) {
	d, err := c.createVM(agentID, stemcellCID, cp, networks, env)
	if err != nil {
		return apiv1.VMCID{}, err
	}
	return apiv1.NewVMCID(d.vm.ID), nil
}

// CreateVMV2 implements apiv1.CPI (API v2): the networks come back with the
// addresses CloudStack gave each NIC.
func (c vms) CreateVMV2(agentID apiv1.AgentID, stemcellCID apiv1.StemcellCID, cp apiv1.VMCloudProps,
	networks apiv1.Networks, _ []apiv1.DiskCID, env apiv1.VMEnv) (apiv1.VMCID, apiv1.Networks, error) {
	d, err := c.createVM(agentID, stemcellCID, cp, networks, env)
	if err != nil {
		return apiv1.VMCID{}, nil, err
	}
	return apiv1.NewVMCID(d.vm.ID), resultNetworks(networks, d.plan.networks.nics, d.vm.NICs), nil
}

// createVM is create_vm's pipeline. Bad input is refused (not retried)
// before anything is made; a failure of the deployment removes what it
// made and says whether the director may retry.
func (c vms) createVM(agentID apiv1.AgentID, stemcellCID apiv1.StemcellCID, cp apiv1.VMCloudProps,
	networks apiv1.Networks, env apiv1.VMEnv) (*deployment, error) {
	want, err := readVM(c.callDeps, agentID.AsString(), stemcellCID.AsString(), cp, networks, env)
	if err != nil {
		return nil, vmCreationRefused(err)
	}
	plan, err := c.catalog.plan(want)
	if err != nil {
		return nil, vmCreationFailed(err)
	}
	// An affinity group outlives its VMs, so a failure here leaves nothing
	// of this call's to remove.
	if plan.spec.AffinityGroupIDs, err = c.catalog.affinityGroup(want.affinity); err != nil {
		return nil, vmCreationFailed(err)
	}
	d := &deployment{vms: c, plan: plan, spec: plan.spec}
	if err := d.run(); err != nil {
		return nil, d.cleanup(err)
	}
	return d, nil
}

// resultNetworks copies the director's networks with each dynamic NIC's
// real address, found by the MAC the plan gave it.
func resultNetworks(in apiv1.Networks, plans []nicPlan, made []cloudstack.NIC) apiv1.Networks {
	out := apiv1.Networks{}
	for name, n := range in {
		out[name] = n
	}
	for _, plan := range plans {
		nic, ok := nicByMAC(made, plan.mac)
		if !ok || !plan.net.IsDynamic() {
			continue
		}
		net := apiv1.NewNetwork(apiv1.NetworkOpts{Type: plan.net.Type(), IP: nic.IP, Netmask: nic.Netmask,
			Gateway: nic.Gateway, DNS: plan.net.DNS(), Default: plan.net.Default()})
		net.SetMAC(nic.MAC)
		out[plan.name] = net
	}
	return out
}

func nicByMAC(nics []cloudstack.NIC, mac string) (cloudstack.NIC, bool) {
	for _, n := range nics {
		if strings.EqualFold(n.MAC, mac) {
			return n, true
		}
	}
	return cloudstack.NIC{}, false
}
