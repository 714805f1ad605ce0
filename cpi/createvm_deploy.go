package cpi

// create_vm's execution: the deployment of a plan, step by step in the
// order run names them, each recording what it made for the cleanup
// (createvm_undo.go).

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// deployment is one create_vm's execution: the plan, the spec it
// completes, and everything it made, so that a failure at any step
// removes exactly what this call made.
type deployment struct {
	vms      vms // the part it runs in; its lbs and drives serve the rules and the ISO
	plan     deployPlan
	spec     cloudstack.DeploySpec
	vmID     string
	vm       *cloudstack.VM
	ipID     string // a public IP this call acquired
	vipAddr  *cloudstack.PublicIP
	lbs      []lbPlan
	registry bool // settings were written to the registry
	deployed bool // deployVirtualMachine was sent
	mark     marks.VM
	drive    madeDrive // the config drive ISO this call created
}

// run removes what earlier attempts left, checks the vip and the lbs,
// writes the settings, deploys, then acquires the vip and points it at the
// VM. The VM carries its Mark from the instant it exists (as display name:
// deployVirtualMachine takes no tags) until the last step clears it, so a
// crash at any point leaves a VM the next create_vm recognises. The vip is
// acquired only after the deploy has implemented the network: CloudStack
// makes the first address associated with an Isolated network that was
// never implemented its source NAT address
// (IpAddressManagerImpl.isSourceNatAvailableForNetwork), which can be
// neither static-NATed nor released.
func (d *deployment) run() error {
	name, err := newVMName()
	if err != nil {
		return err
	}
	d.spec.Name = name
	// The vip and the lbs are checked after the convergence: an earlier
	// attempt's VM holds them until it is removed.
	if err := d.converge(); err != nil {
		return err
	}
	if err := d.checkVIP(); err != nil {
		return err
	}
	d.mark = marks.NewVM(d.vms.ctx.DirectorUUID, d.intendedVIP(), d.plan.agentID)
	if err := d.planLBs(); err != nil {
		return err
	}
	d.spec.DisplayName = d.mark.DisplayName()
	d.spec.Tags = d.vmTags()
	if err := d.settings(); err != nil {
		return err
	}
	if err := d.deploy(); err != nil {
		return err
	}
	if err := d.bootWithDrive(); err != nil {
		return err
	}
	if err := d.pointVIP(); err != nil {
		return err
	}
	if err := d.joinLBs(); err != nil {
		return err
	}
	if err := d.completeDrive(); err != nil {
		return err
	}
	// The mark goes last: from here on the VM is the director's to delete.
	return d.vms.cloud.SetDisplayName(d.vm.ID, name)
}

// deploy sends deployVirtualMachine, recording that it did before the
// answer, which may be lost with the VM made.
func (d *deployment) deploy() error {
	d.deployed = true
	id, vm, err := d.vms.cloud.DeployVM(d.spec)
	d.vmID = id
	if err != nil {
		return d.explainAddress(err)
	}
	d.vm = vm
	return nil
}

// vmTags are the marks that outlive create_vm, which the deploy puts on the
// VM as soon as it exists. Until they are there the display name's Mark
// says whose the VM is.
func (d *deployment) vmTags() map[string]string {
	tags := map[string]string{marks.DirectorTag: d.vms.ctx.DirectorUUID, marks.AgentTag: d.plan.agentID}
	if len(d.plan.props.LBs) > 0 {
		tags[marks.LBTag] = "true"
	}
	if d.plan.drive != noDrive {
		tags[marks.ConfigDriveTag] = "true"
	}
	return tags
}

// explainAddress names who holds a requested static IP when CloudStack
// could not allocate it; the operators' troubleshooting table says why a
// destroyed VM keeps it and what to do.
func (d *deployment) explainAddress(err error) error {
	if !cloudstack.IsGuestIPUnavailable(err) {
		return err
	}
	var unexplained []string
	for _, n := range d.plan.networks.nics {
		ip := n.net.IP()
		if n.net.Type() != "manual" || ip == "" {
			continue
		}
		holder, lookupErr := d.vms.cloud.VMWithIP(n.network.ID, ip)
		switch {
		case lookupErr != nil || holder == nil:
			unexplained = append(unexplained, ip)
		case holder.AwaitingExpunge():
			return fmt.Errorf("static IP %s on CloudStack network %s is still held by VM %s (%s), destroyed but not "+
				"yet expunged, until expunge.delay (docs/operators/troubleshooting.md, VMs and disks): %w",
				ip, n.network.Name, holder.ID, holder.Name, err)
		default:
			return fmt.Errorf("static IP %s on CloudStack network %s is in use by VM %s (%s, %s): %w",
				ip, n.network.Name, holder.ID, holder.Name, holder.State, err)
		}
	}
	if len(unexplained) > 0 {
		return fmt.Errorf("CloudStack could not allocate static IP %s and no VM this account can list holds it: "+
			"perhaps a VM destroyed but not yet expunged does (docs/operators/troubleshooting.md, VMs and disks): %w",
			strings.Join(unexplained, ", "), err)
	}
	return err
}

// newVMName is a host name CloudStack accepts: a letter first, letters,
// digits and hyphens, 39 characters.
func newVMName() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("vm-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
