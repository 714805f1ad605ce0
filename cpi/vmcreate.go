package cpi

import (
	"fmt"
	"strings"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
	"github.com/bosh-cloudstack/cloudstack-cpi/registry"
	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// vmCreation is one create_vm: what it resolved and everything it created,
// so that a failure at any step removes exactly what this call made.
type vmCreation struct {
	vms               vms // the part it runs in; its lbs and placement serve the rules and names
	agentID           string
	props             vmtype.Props
	plan              networkPlan
	env               apiv1.VMEnv
	spec              cloudstack.DeploySpec
	vmID              string
	vm                *cloudstack.VM
	ipID              string // a public IP this call acquired
	vipAddr           *cloudstack.PublicIP
	lbs               []lbPlan
	withEphemeralDisk bool // an ephemeral disk is created with the VM
	registry          bool // settings were written to the registry
	deployed          bool // deployVirtualMachine was sent
	mark              marks.VM
	settingsFrom      settingsDrive // where the stemcell's agent reads its settings
	drive             madeDrive     // the config drive ISO this call created
}

func (c vms) createVM(agentID apiv1.AgentID, stemcellCID apiv1.StemcellCID, cp apiv1.VMCloudProps,
	networks apiv1.Networks, env apiv1.VMEnv) (*vmCreation, error) {
	props, err := vmtype.Read(cp)
	if err != nil {
		return nil, vmCreationRefused(err)
	}
	plan, refs, err := planNetworks(networks)
	if err == nil {
		err = plan.addRoutes(props.Routes)
	}
	if err != nil {
		return nil, vmCreationRefused(err)
	}
	v := &vmCreation{vms: c, agentID: agentID.AsString(), props: props, plan: plan, env: env}
	cid := stemcellCID.AsString()
	v.settingsFrom, cid = stemcellDrive(cid)
	v.spec.TemplateID = strings.TrimPrefix(cid, lightPrefix)
	if err := v.resolve(refs); err != nil {
		return nil, vmCreationFailed(err)
	}
	if err := v.create(); err != nil {
		return nil, v.cleanup(err)
	}
	return v, nil
}

// create removes what earlier attempts left, checks the vip, writes the
// settings, deploys, then acquires the vip and points it at the VM. Every
// step records what it made for cleanup. The VM carries its Mark from the
// instant it exists (as display name: deployVirtualMachine takes no tags)
// until the last step clears it, so a crash at any point leaves a VM the
// next create_vm recognises. The vip is acquired only after the deploy has
// implemented the network: CloudStack makes the first address associated
// with an Isolated network that was never implemented its source NAT
// address (IpAddressManagerImpl.isSourceNatAvailableForNetwork), which can
// be neither static-NATed nor released.
func (v *vmCreation) create() error {
	name, err := newVMName()
	if err != nil {
		return err
	}
	v.spec.Name = name
	if err := v.converge(); err != nil {
		return err
	}
	if v.plan.vip != nil {
		if err := v.checkVIP(); err != nil {
			return err
		}
	}
	v.mark = marks.NewVM(v.vms.ctx.DirectorUUID, v.intendedVIP(), v.agentID)
	if err := v.planLBs(); err != nil {
		return err
	}
	v.spec.DisplayName = v.mark.DisplayName()
	v.spec.Tags = v.vmTags()
	if err := v.settings(name); err != nil {
		return err
	}
	v.deployed = true
	id, vm, err := v.vms.cloud.DeployVM(v.spec)
	v.vmID = id
	if err != nil {
		return v.explainAddress(err)
	}
	v.vm = vm
	if err := v.bootWithDrive(); err != nil {
		return err
	}
	if v.plan.vip != nil {
		if err := v.acquireVIP(); err != nil {
			return err
		}
		if err := v.vms.cloud.EnableStaticNAT(v.vipID(), vm.ID, v.plan.nics[0].network.ID); err != nil {
			return err
		}
	}
	if err := v.joinLBs(); err != nil {
		return err
	}
	if err := v.completeDrive(); err != nil {
		return err
	}
	// The mark goes last: from here on the VM is the director's to delete.
	return v.vms.cloud.SetDisplayName(vm.ID, name)
}

// vmTags are the marks that outlive create_vm, which the deploy puts on the
// VM as soon as it exists. Until they are there the display name's Mark
// says whose the VM is.
func (v *vmCreation) vmTags() map[string]string {
	tags := map[string]string{marks.DirectorTag: v.vms.ctx.DirectorUUID, marks.AgentTag: v.agentID}
	if len(v.props.LBs) > 0 {
		tags[marks.LBTag] = "true"
	}
	if v.settingsFrom != noDrive {
		tags[marks.ConfigDriveTag] = "true"
	}
	return tags
}

// intendedVIP is the vip this call will acquire: none when the operator
// allocated the address, which then only gets static NAT.
func (v *vmCreation) intendedVIP() string {
	if v.plan.vip == nil || v.vipAddr != nil {
		return ""
	}
	return v.plan.vip.IP()
}

// converge removes this director's VMs whose create_vm never finished and
// that stand in this one's way: the same agent_id (the director's retry),
// a requested static IP, or the requested vip (static NAT to it, or an
// intent to acquire it). The director's next attempt after a crash has a
// new agent_id but the same addresses, so they are what finds the
// leftover. A complete VM, another director's or the operator's is never
// touched: then explainAddress says who holds the address.
func (v *vmCreation) converge() error {
	c := v.vms
	vms, err := c.cloud.IncompleteVMs(c.ctx.DirectorUUID)
	if err != nil {
		return err
	}
	for _, vm := range vms {
		if !v.supersedes(vm) {
			continue
		}
		mark, _ := vm.IncompleteMark()
		c.logger.Warn("vm", "removing VM %s (%s, %s), left incomplete by an earlier create_vm for agent %s",
			vm.ID, vm.Name, vm.State, mark.Agent)
		if err := c.removeVM(vm); err != nil {
			return fmt.Errorf("removing VM %s (%s), left incomplete by an earlier create_vm for agent %s: %w",
				vm.ID, vm.Name, mark.Agent, err)
		}
	}
	return nil
}

// supersedes says an incomplete VM is an earlier attempt at this one.
func (v *vmCreation) supersedes(vm *cloudstack.VM) bool {
	mark, ok := vm.IncompleteMark()
	own := marks.NewVM(v.vms.ctx.DirectorUUID, "", v.agentID)
	switch {
	case !ok || mark.Director != own.Director:
		return false
	case mark.Agent == own.Agent:
		return true
	case v.plan.vip != nil && (mark.VIP == v.plan.vip.IP() || vm.PublicIP == v.plan.vip.IP()):
		return true
	}
	for _, want := range v.spec.NICs {
		for _, nic := range vm.NICs {
			if want.IP != "" && nic.NetworkID == want.NetworkID && nic.IP == want.IP {
				return true
			}
		}
	}
	return false
}

// explainAddress names who holds a requested static IP when CloudStack
// could not allocate it. A VM destroyed without expunge (delete_vm of an
// account that may not expunge) keeps its addresses until CloudStack's
// expunge thread removes it, so BOSH's recreate with the same IP fails
// until then.
func (v *vmCreation) explainAddress(err error) error {
	if !cloudstack.IsGuestIPUnavailable(err) {
		return err
	}
	var unexplained []string
	for _, n := range v.plan.nics {
		ip := n.net.IP()
		if n.net.Type() != "manual" || ip == "" {
			continue
		}
		holder, lookupErr := v.vms.cloud.VMWithIP(n.network.ID, ip)
		switch {
		case lookupErr != nil || holder == nil:
			unexplained = append(unexplained, ip)
		case holder.AwaitingExpunge():
			return fmt.Errorf("static IP %s on CloudStack network %s is still held by VM %s (%s), destroyed but not "+
				"yet expunged: CloudStack frees a destroyed VM's addresses only when it expunges it, after the global "+
				"setting expunge.delay; an admin (or an account allowed by allow.user.expunge.recover.vm) can expunge "+
				"it now, otherwise retry later: %w", ip, n.network.Name, holder.ID, holder.Name, err)
		default:
			return fmt.Errorf("static IP %s on CloudStack network %s is in use by VM %s (%s, %s): %w",
				ip, n.network.Name, holder.ID, holder.Name, holder.State, err)
		}
	}
	if len(unexplained) > 0 {
		// Accounts that are not admins do not see Destroyed VMs unless
		// allow.user.view.destroyed.vm is set (QueryManagerImpl).
		return fmt.Errorf("CloudStack could not allocate static IP %s and no VM this account can list holds it: "+
			"perhaps a VM destroyed but not yet expunged does (CloudStack frees a destroyed VM's addresses only when "+
			"it expunges it, after the global setting expunge.delay; accounts without allow.user.view.destroyed.vm "+
			"cannot list such VMs), or the address is reserved or outside the network's IP range: %w",
			strings.Join(unexplained, ", "), err)
	}
	return err
}

// checkVIP refuses, before anything is created, a vip that is already
// another VM's or is its network's source NAT address, and remembers an
// address the operator allocated.
func (v *vmCreation) checkVIP() error {
	ip := v.plan.vip.IP()
	addr, err := v.vms.cloud.FindPublicIP(v.spec.ZoneID, ip)
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
	v.vipAddr = addr
	return nil
}

// acquireVIP associates the vip with the VM's first network (its VPC when
// that is a tier) unless the operator had allocated it.
func (v *vmCreation) acquireVIP() error {
	if v.vipAddr != nil {
		return nil
	}
	addr, err := v.vms.cloud.AcquirePublicIP(v.plan.nics[0].network, v.plan.vip.IP())
	if addr != nil {
		v.ipID, v.vipAddr = addr.ID, addr
	}
	return err
}

func (v *vmCreation) vipID() string { return v.vipAddr.ID }

// userData is the full agent settings for current stemcells, or the
// registry envelope with the settings PUT to the registry for old ones.
func (v *vmCreation) userData(name string) (string, error) {
	c := v.vms
	settings := c.agentSettings(v.agentID, name, v.plan, v.withEphemeralDisk, v.env)
	if c.ctx.StemcellAPIVersion >= 2 {
		return encodeUserData(settings, "the agent settings")
	}
	reg, err := c.registryClient()
	if err != nil {
		return "", vmCreationRefused(err)
	}
	raw, err := jsonMarshal(settings)
	if err != nil {
		return "", err
	}
	// The settings go to the registry once the VM exists, before its job
	// ends and it boots: a crash before then leaves no entry that no VM
	// names, and the VM's removal takes the entry with it.
	v.spec.Accepted = func(string) error {
		err := reg.Put(name, raw)
		// A write the registry refused, or that never reached it, stored
		// nothing for the cleanup to delete.
		v.registry = err == nil || !registry.Unchanged(err)
		if err != nil {
			return fmt.Errorf("writing the agent settings of VM %s to the registry: %w", name, err)
		}
		return nil
	}
	return encodeUserData(registryEnvelope(name, c.cfg.Registry, v.plan), "the registry user data")
}
