package cpi

import (
	"fmt"
	"strings"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// vms is the part behind the VM methods: the VM, its public address by
// static NAT and its tags here (create_vm in createvm.go and its steps);
// its load-balancer rules, the catalog its names are resolved in and its
// config drive in parts of their own.
type vms struct {
	callDeps
	cloud   vmCloud
	lbs     lbs
	catalog catalog
	drives  configDrives
}

// vmCloud is what the VM part asks of CloudStack itself.
type vmCloud interface {
	cloudstack.VMs
	cloudstack.Addresses
	cloudstack.Tags
	cloudstack.OwnedISOs
}

// DeleteVM implements apiv1.CPI: gone already is success; persistent disks
// are detached by CloudStack and survive; the ephemeral disk goes with the
// VM; a public IP the CPI acquired is released.
func (c vms) DeleteVM(cid apiv1.VMCID) error {
	vm, err := c.cloud.FindVM(cid.AsString())
	if err != nil {
		return wrap(err, "looking up VM %s", cid.AsString())
	}
	if vm == nil {
		c.logger.Info("vm", "VM %s is already gone", cid.AsString())
		return c.forgetSettings(cid.AsString())
	}
	return c.removeVM(vm)
}

// removeVM removes a VM with its registry settings, the vip the CPI
// acquired for it and its ephemeral disk: delete_vm, and create_vm's
// removal of what it or an earlier attempt left.
func (c vms) removeVM(vm *cloudstack.VM) error {
	vm, err := c.settledVM(vm)
	if err != nil || vm == nil {
		return err
	}
	// Settings go first: a retry after a failed destroy still knows the
	// VM's name, which keys them.
	if err := c.forgetSettings(vm.Name); err != nil {
		return err
	}
	return c.removeSettledVM(vm)
}

// settledVM is the VM once no job works on it: an interrupted call's
// deploy (or another job) may still run, and what is sent now would queue
// behind it in CloudStack, so the removal waits for it to end and acts on
// what it left. Nil when the VM is gone meanwhile.
func (c vms) settledVM(vm *cloudstack.VM) (*cloudstack.VM, error) {
	if !vm.Busy() {
		return vm, nil
	}
	settled, err := c.cloud.SettledVM(vm.ID, time.Now().Add(c.cfg.CloudStack.JobTimeout.D()))
	if err != nil || settled == nil {
		return nil, wrap(err, "waiting for the job on VM %s to end", vm.ID)
	}
	return settled, nil
}

// removeSettledVM removes a VM no job works on (or one whose job create_vm
// has stopped waiting for), with all that removeVM removes but its
// registry settings.
func (c vms) removeSettledVM(vm *cloudstack.VM) error {
	// The vip goes before the VM: a Destroyed VM still holds its static
	// NAT until CloudStack expunges it, and an incomplete VM's intent is
	// the only thing that makes an untagged address the CPI's.
	if err := c.releaseVIP(vm); err != nil {
		return wrap(err, "releasing the vip of VM %s", vm.ID)
	}
	// Its load-balancer rules go before it too: CloudStack takes a VM
	// from behind them only when it expunges it (UserVmManagerImpl.
	// cleanupVmResources), and a VM that is gone no longer finds them.
	if err := c.lbs.leaveLBs(vm); err != nil {
		return wrap(err, "taking VM %s from its load-balancer rules", vm.ID)
	}
	if err := c.detachDrive(vm); err != nil {
		return err
	}
	if err := c.endVM(vm); err != nil {
		return stillHeld(vm, err)
	}
	if !hasConfigDrive(vm) {
		return nil
	}
	return wrap(c.drives.ofVM(vm), "removing the config drive ISO of VM %s", vm.ID)
}

// endVM destroys the VM with its ephemeral disk, or expunges it when it is
// Destroyed already.
func (c vms) endVM(vm *cloudstack.VM) error {
	if vm.AwaitingExpunge() && *c.cfg.CloudStack.ExpungeVM {
		// Destroyed but not expunged (by hand, or by an account that
		// may not expunge) it still holds its host name and addresses.
		err := c.cloud.ExpungeVM(vm.ID)
		if cloudstack.IsExpungeRefused(err) {
			c.logger.Warn("vm", "VM %s is destroyed and this account may not expunge it (%s): it keeps its host name "+
				"and IP addresses until CloudStack expunges it (global setting expunge.delay)", vm.ID, err)
			return nil
		}
		return wrap(err, "expunging VM %s", vm.ID)
	}
	if vm.Gone() {
		c.logger.Info("vm", "VM %s is already %s", vm.ID, vm.State)
		return nil
	}
	vols, err := c.cloud.VMVolumes(vm.ID)
	if err != nil {
		return wrap(err, "listing the volumes of VM %s", vm.ID)
	}
	return wrap(c.destroyVM(vm.ID, ephemeralIDs(vm, vols)), "destroying VM %s", vm.ID)
}

// hasConfigDrive says the VM has, or was made to have, a config drive ISO.
func hasConfigDrive(vm *cloudstack.VM) bool {
	return vm.ISOID != "" || vm.HadConfigDrive()
}

// stillHeld explains the failed end of a VM a job still held: CloudStack
// accepts its destroy but runs the stop the destroy begins with through
// the VM's work queue, behind the job that holds it
// (VirtualMachineManagerImpl.advanceStop, stopVmThroughJobQueue), so the
// destroy's own job did not end in time either.
func stillHeld(vm *cloudstack.VM, err error) error {
	if !vm.Busy() || !cloudstack.IsJobTimeout(err) {
		return err
	}
	iso := ""
	if vm.ISOID != "" {
		iso = fmt.Sprintf("; its config drive ISO %s stays until the VM is expunged, and a later create_vm deletes it",
			vm.ISOID)
	}
	return leftBehind(err, "VM %s (%s) is still %s: CloudStack destroys it only once the job that holds it ends, "+
		"and that job did not end in time; the destroy stays queued in CloudStack%s (the orphans command lists what "+
		"is left)", vm.ID, vm.Name, vm.State, iso)
}

// detachDrive detaches a live VM's ISO before it is destroyed: CloudStack
// refuses to delete an ISO that a VM not yet expunged has attached,
// Destroyed ones included (TemplateManagerImpl.deleteIso), and to detach
// from a Destroyed VM (TemplateManagerImpl.detachIso). It also refuses to
// detach from a VM that is neither Stopped nor Running (detachIso): one a
// job still holds is destroyed with its ISO attached, and the ISO deleted
// once the destroy has expunged the VM.
func (c vms) detachDrive(vm *cloudstack.VM) error {
	if vm.ISOID == "" || vm.Gone() || vm.Busy() {
		return nil
	}
	err := c.cloud.DetachISO(vm.ID)
	if cloudstack.IsNoISOAttached(err) {
		return nil
	}
	return wrap(err, "detaching the config drive ISO %s of VM %s", vm.ISOID, vm.ID)
}

// destroyVM destroys with expunge when configured, and without it when the
// account may not expunge, which leaves the VM Destroyed until CloudStack's
// expunge interval.
func (c vms) destroyVM(id string, volumes []string) error {
	expunge := *c.cfg.CloudStack.ExpungeVM
	err := c.cloud.DestroyVM(id, expunge, volumes)
	if expunge && cloudstack.IsExpungeRefused(err) {
		c.logger.Warn("vm", "expunging VM %s is not allowed for this account (%s); destroying without expunge: "+
			"the VM keeps its host name and IP addresses until CloudStack expunges it (global setting expunge.delay)",
			id, err)
		err = c.cloud.DestroyVM(id, false, volumes)
	}
	return err
}

// releaseVIP ends a VM's static NAT, releasing the address when the CPI
// acquired it, and releases the address an incomplete VM's create_vm
// meant to acquire if it did so without tagging it yet.
func (c vms) releaseVIP(vm *cloudstack.VM) error {
	if vm.PublicIPID != "" {
		addr, err := c.cloud.PublicIPByID(vm.PublicIPID)
		if err != nil {
			return err
		}
		// Releasing an address the CPI acquired also ends its static NAT;
		// doing it in one step leaves nothing unfindable if a retry is
		// needed.
		switch {
		case addr == nil:
		case addr.AcquiredFor(vm):
			return c.cloud.ReleasePublicIP(addr.ID)
		default:
			return c.cloud.DisableStaticNAT(addr.ID)
		}
	}
	mark, incomplete := vm.IncompleteMark()
	if !incomplete || mark.VIP == "" || mark.VIP == vm.PublicIP {
		return nil
	}
	addr, err := c.cloud.FindPublicIP(vm.ZoneID, mark.VIP)
	if err != nil || addr == nil || !addr.AcquiredFor(vm) {
		return err
	}
	c.logger.Warn("vm", "releasing public IP %s (%s), acquired for VM %s by a create_vm that never finished",
		addr.IP, addr.ID, vm.ID)
	return c.cloud.ReleasePublicIP(addr.ID)
}

// ephemeralIDs are the VM's ephemeral disks, which go with it in the one
// destroyVirtualMachine (its volumeids), so no step between leaves one
// behind: DATA-<vm id> for this CPI's VMs, and the separately attached
// cpi-ephemeral-disk-… of the earlier CPIs' cpivm-… VMs. Any other attached
// volume — a persistent disk of this or an earlier CPI, or an operator's —
// survives.
func ephemeralIDs(vm *cloudstack.VM, vols []cloudstack.Volume) []string {
	var ids []string
	for _, vol := range vols {
		if vol.IsEphemeralOf(vm) {
			ids = append(ids, vol.ID)
		}
	}
	return ids
}

// HasVM implements apiv1.CPI: a VM CloudStack is destroying counts as gone,
// so cloudcheck recreates it rather than waiting on a corpse.
func (c vms) HasVM(cid apiv1.VMCID) (bool, error) {
	vm, err := c.cloud.FindVM(cid.AsString())
	if err != nil {
		return false, wrap(err, "looking up VM %s", cid.AsString())
	}
	return vm != nil && !vm.Gone(), nil
}

// RebootVM implements apiv1.CPI; a stopped VM is started.
func (c vms) RebootVM(cid apiv1.VMCID) error {
	vm, err := mustFindVM(c.cloud, cid)
	if err != nil {
		return err
	}
	return wrap(c.cloud.RebootVM(vm), "rebooting VM %s", vm.ID)
}

func mustFindVM(cloud cloudstack.VMFinder, cid apiv1.VMCID) (*cloudstack.VM, error) {
	vm, err := cloud.FindVM(cid.AsString())
	if err != nil {
		return nil, wrap(err, "looking up VM %s", cid.AsString())
	}
	if vm == nil || vm.Gone() {
		return nil, vmNotFound(cid.AsString())
	}
	return vm, nil
}

// SetVMMetadata implements apiv1.CPI: tags with replace semantics, and the
// display name from the instance's name or group.
func (c vms) SetVMMetadata(cid apiv1.VMCID, meta apiv1.VMMeta) error {
	vm, err := mustFindVM(c.cloud, cid)
	if err != nil {
		return err
	}
	tags := metadataTags(meta)
	if err := c.cloud.SetTags(cloudstack.ResourceVM, vm.ID, vm.Tags, tags); err != nil {
		return wrap(err, "tagging VM %s", vm.ID)
	}
	display := displayName(tags)
	if display == "" {
		return nil
	}
	return wrap(c.cloud.SetDisplayName(vm.ID, display), "naming VM %s", vm.ID)
}

// displayName: "name" is instance_group/uuid; compilation VMs have none.
func displayName(tags map[string]string) string {
	name := firstOf(tags["name"], tags["instance_group"], tags["job"])
	if name == "" {
		return ""
	}
	if tags["compiling"] != "" {
		name = "compiling-" + tags["compiling"]
	}
	return truncate(strings.NewReplacer("/", "_").Replace(name), 255)
}

// GetDisks implements apiv1.CPI: persistent disks only, never an
// ephemeral one (ours or an earlier CPI's).
func (c vms) GetDisks(cid apiv1.VMCID) ([]apiv1.DiskCID, error) {
	vm, err := mustFindVM(c.cloud, cid)
	if err != nil {
		return nil, err
	}
	vols, err := c.cloud.VMVolumes(vm.ID)
	if err != nil {
		return nil, wrap(err, "listing the volumes of VM %s", vm.ID)
	}
	var disks []apiv1.DiskCID
	for _, v := range vols {
		if v.IsDataDisk() && !v.IsEphemeralOf(vm) {
			disks = append(disks, apiv1.NewDiskCID(v.ID))
		}
	}
	return disks, nil
}
