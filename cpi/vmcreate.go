package cpi

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/registry"
)

// vmCreation is one create_vm: what it resolved and everything it created,
// so that a failure at any step removes exactly what this call made.
type vmCreation struct {
	vms               vms // the part it runs in; its lbs and placement serve the rules and names
	agentID           string
	props             vmProps
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
	mark              cloudstack.Mark
	settingsFrom      settingsDrive // where the stemcell's agent reads its settings
	drive             madeDrive     // the config drive ISO this call created
}

func (c vms) createVM(agentID apiv1.AgentID, stemcellCID apiv1.StemcellCID, cp apiv1.VMCloudProps,
	networks apiv1.Networks, env apiv1.VMEnv) (*vmCreation, error) {
	props, err := readVMProps(cp)
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
	v.mark = cloudstack.NewMark(v.vms.ctx.DirectorUUID, v.intendedVIP(), v.agentID)
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
	tags := map[string]string{cloudstack.DirectorTag: v.vms.ctx.DirectorUUID, cloudstack.AgentTag: v.agentID}
	if len(v.props.LBs) > 0 {
		tags[cloudstack.LBTag] = "true"
	}
	if v.settingsFrom != noDrive {
		tags[cloudstack.ConfigDriveTag] = "true"
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
	own := cloudstack.NewMark(v.vms.ctx.DirectorUUID, "", v.agentID)
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

// cleanup removes what this create_vm made and returns the cause typed for
// the director; what could not be removed is added to its text, and then
// the director must not retry blindly. The VM is looked up afresh: the
// deploy's answer may have been lost, and static NAT came after it.
func (v *vmCreation) cleanup(cause error) error {
	// The ISO's upload may not be settled yet: its deletion waits.
	v.vms.drives.settle = uploadSettlePatience
	c := v.vms
	var problems []string
	note := func(what string, err error) {
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", what, err))
		}
	}
	var removed []string
	vm, err := v.madeVM()
	note(fmt.Sprintf("looking up VM %s", firstOf(v.vmID, v.spec.Name)), err)
	if err == nil && v.vmID != "" && (vm == nil || vm.Gone()) {
		cause = v.takenOver(cause)
	}
	switch {
	case vm != nil:
		// Its vip (acquired, or intended and untagged), settings,
		// ephemeral disk and config drive go with it.
		// Once a job of this call has had job_timeout, waiting as long
		// again for the job that holds the VM would only double the wait:
		// CloudStack runs the destroy after that job anyway.
		err := v.removeMadeVM(vm, !cloudstack.IsJobTimeout(cause))
		note("removing VM "+vm.ID, err)
		if err == nil {
			removed = append(removed, fmt.Sprintf("VM %s (%s), with its ephemeral disk, any config drive ISO and any "+
				"public IP acquired for it", vm.ID, vm.Name))
		}
	case v.ipID != "":
		note("releasing public IP "+v.plan.vip.IP(), c.cloud.ReleasePublicIP(v.ipID))
	}
	if v.registry && vm == nil {
		if reg, err := c.registryClient(); err == nil {
			note("deleting registry settings", reg.Delete(v.spec.Name))
		}
	}
	if vm == nil || !hasConfigDrive(vm) {
		// Else the VM's removal took its ISO.
		removed = v.cleanupDrive(c.drives, note, removed)
	}
	if len(problems) == 0 {
		c.logger.Warn("vm", "create_vm failed and was cleaned up: %s", cause)
		return v.cleanedUp(cause, removed)
	}
	c.logger.Error("vm", "create_vm failed and its cleanup failed too: %s", strings.Join(problems, "; "))
	err = vmCreationFailed(fmt.Errorf("%w; cleanup left things behind: %s", cause, strings.Join(problems, "; ")))
	var typed *Error
	if errors.As(err, &typed) {
		typed.retry = false // a retry would meet what is left
	}
	return err
}

// removeMadeVM removes the VM this call deployed, with its registry
// settings only when they may be there: a registry that refused them or
// was never reached holds none, and may well refuse their deletion too.
// It waits for a job that holds the VM to end only when settle is set;
// else the VM is removed as it is.
func (v *vmCreation) removeMadeVM(vm *cloudstack.VM, settle bool) error {
	c := v.vms
	if settle {
		var err error
		if vm, err = c.settledVM(vm); err != nil || vm == nil {
			return err
		}
	}
	if v.registry {
		if err := c.forgetSettings(vm.Name); err != nil {
			return err
		}
	}
	return c.removeSettledVM(vm)
}

// cleanedUp types a failure whose cleanup left nothing. An answer lost on
// the way back (CloudStack unreachable in the middle of the call), or a
// job a management server restart cut short, is worth the director's
// retry once what CloudStack did anyway is removed.
func (v *vmCreation) cleanedUp(cause error, removed []string) error {
	err := cause
	if len(removed) > 0 {
		err = fmt.Errorf("%w; removed what this create_vm had made: %s", cause, strings.Join(removed, ", "))
	}
	err = vmCreationFailed(err)
	var typed *Error
	if errors.As(err, &typed) && (cloudstack.IsUnreachable(cause) || cloudstack.IsJobInterrupted(cause) ||
		driveTransferFailed(cause)) {
		typed.retry = true
	}
	return err
}

// madeVM is the VM this call deployed as CloudStack has it now, or nil.
// When the deploy's answer was lost, CloudStack may have the VM anyway:
// its host name, unique to this call, finds it.
func (v *vmCreation) madeVM() (*cloudstack.VM, error) {
	switch {
	case v.vmID != "":
		return v.vms.cloud.FindVM(v.vmID)
	case v.deployed:
		return v.vms.cloud.FindVM(v.spec.Name)
	}
	return nil, nil
}

// vmCreationFailed types a create_vm failure: capacity and time-outs are
// worth retrying; bad input is not.
func vmCreationFailed(err error) error {
	var typed *Error
	if errors.As(err, &typed) {
		return err
	}
	retry := cloudstack.IsJobTimeout(err) || cloudstack.IsCapacity(err)
	if cloudstack.IsGuestIPUnavailable(err) {
		// A capacity code, but an immediate retry will not free the
		// address (explainAddress said who holds it).
		retry = false
	}
	return &Error{kind: "VMCreationFailed", retry: retry, err: err}
}
