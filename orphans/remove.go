package orphans

import (
	"fmt"
	"sort"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// Removal is how -delete removes: as the CPI's delete_vm does.
type Removal struct {
	// Expunge destroys VMs with expunge (cloudstack.expunge_vm); refused,
	// a VM is destroyed without it, as delete_vm does.
	Expunge bool
	// JobTimeout bounds the wait for a job still working on a VM.
	JobTimeout time.Duration
	// Progress is told of each row once it is removed or failed.
	Progress func(Row)
	// ForgetSettings deletes an old stemcell's registry settings of a VM
	// (keyed by its name), absent already being success; nil without a
	// registry.
	ForgetSettings func(vmName string) error
}

// Delete removes the rows, in the order that lets each go (a rule and an
// address before the VM behind them, a VM before its ISO), and marks each
// Deleted or with its Error. Gone already counts as removed, so a second
// run finds nothing and a run after a failure finishes the rest. It
// returns how many could not be removed.
func Delete(cloud Cloud, rows []Row, rm Removal) int {
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return kindOrder[rows[order[a]].Kind] < kindOrder[rows[order[b]].Kind] })
	d := remover{cloud: cloud, rm: rm}
	failed := 0
	for _, i := range order {
		if err := d.remove(rows[i]); err != nil {
			rows[i].Error = err.Error()
			failed++
		} else {
			rows[i].Deleted = true
		}
		if rm.Progress != nil {
			rm.Progress(rows[i])
		}
	}
	return failed
}

type remover struct {
	cloud Cloud
	rm    Removal
}

func (d remover) remove(r Row) error {
	var err error
	switch r.Kind {
	case KindLBRule:
		err = d.cloud.DeleteLBRule(r.ID)
	case KindPublicIP:
		err = d.cloud.ReleasePublicIP(r.ID)
	case KindVM:
		err = d.vm(r)
	case KindISO:
		err = d.iso(r.ID)
	case KindVolume:
		err = d.cloud.DeleteVolume(r.ID)
	case KindSnapshot:
		err = d.cloud.DeleteSnapshot(r.ID)
	case KindTemplate:
		err = d.template(r.ID)
	default:
		return fmt.Errorf("%s %s: not a kind orphans removes", r.Kind, r.ID)
	}
	if cloudstack.IsNoSuchEntity(err) {
		return nil
	}
	return err
}

// vm removes a VM as delete_vm does: its registry settings, its static NAT (the address released
// when the CPI acquired it), its place behind load-balancer rules, its
// ISO, then the VM with its ephemeral disk. Looked up again first: a VM
// that no longer carries the mark it was listed for is refused.
func (d remover) vm(r Row) error {
	vm, err := d.cloud.FindVM(r.ID)
	if err != nil || vm == nil {
		return err
	}
	if _, incomplete := vm.IncompleteMark(); r.incomplete && !incomplete || !r.incomplete && vm.Tags[marks.DirectorTag] == "" {
		return fmt.Errorf("VM %s (%s) no longer carries the CPI's marks it was listed for (display name %q): left alone",
			vm.ID, vm.Name, vm.DisplayName)
	}
	if vm.Busy() {
		// A job (the killed call's deploy) may still run: what is sent now
		// would queue behind it.
		if vm, err = d.cloud.SettledVM(vm.ID, time.Now().Add(d.rm.JobTimeout)); err != nil || vm == nil {
			return err
		}
	}
	// Settings go first, as delete_vm's do: a retry after a failed destroy
	// still knows the VM's name, which keys them.
	if d.rm.ForgetSettings != nil {
		if err := d.rm.ForgetSettings(vm.Name); err != nil {
			return fmt.Errorf("deleting the registry settings of VM %s (%s): %w", vm.ID, vm.Name, err)
		}
	}
	if err := d.dropStaticNAT(vm); err != nil {
		return fmt.Errorf("the public IP of VM %s: %w", vm.ID, err)
	}
	if err := d.leaveRules(vm); err != nil {
		return err
	}
	if vm.ISOID != "" && !vm.Gone() {
		if err := d.cloud.DetachISO(vm.ID); err != nil && !cloudstack.IsNoISOAttached(err) {
			return fmt.Errorf("detaching ISO %s from VM %s: %w", vm.ISOID, vm.ID, err)
		}
	}
	return d.destroy(vm)
}

// dropStaticNAT ends a VM's static NAT: an address the CPI acquired for it
// is released (its row went first, unless it was spared), another's only
// unhooked.
func (d remover) dropStaticNAT(vm *cloudstack.VM) error {
	if vm.PublicIPID == "" {
		return nil
	}
	addr, err := d.cloud.PublicIPByID(vm.PublicIPID)
	switch {
	case err != nil || addr == nil:
		return err
	case addr.AcquiredFor(vm):
		return d.cloud.ReleasePublicIP(addr.ID)
	}
	return d.cloud.DisableStaticNAT(addr.ID)
}

// leaveRules takes the VM from behind the rules it is still behind: the
// CPI's rules only listed VMs were behind went first.
func (d remover) leaveRules(vm *cloudstack.VM) error {
	if vm.Gone() {
		return nil
	}
	rules, err := d.cloud.VMLBRules(vm.ID)
	if err != nil {
		return fmt.Errorf("listing the load-balancer rules of VM %s: %w", vm.ID, err)
	}
	for _, rule := range rules {
		if err := d.cloud.RemoveFromLBRule(rule.ID, vm.ID); err != nil {
			return fmt.Errorf("removing VM %s from load-balancer rule %s (%s): %w", vm.ID, rule.ID, rule.Name, err)
		}
	}
	return nil
}

// destroy destroys the VM with its ephemeral disk, or expunges it when it
// is Destroyed already.
func (d remover) destroy(vm *cloudstack.VM) error {
	if vm.AwaitingExpunge() {
		if !d.rm.Expunge {
			return fmt.Errorf("VM %s is Destroyed and cloudstack.expunge_vm is false: CloudStack expunges it after expunge.delay", vm.ID)
		}
		return d.cloud.ExpungeVM(vm.ID)
	}
	vols, err := d.cloud.VMVolumes(vm.ID)
	if err != nil {
		return fmt.Errorf("listing the volumes of VM %s: %w", vm.ID, err)
	}
	var ephemeral []string
	for _, v := range vols {
		if v.IsEphemeralOf(vm) {
			ephemeral = append(ephemeral, v.ID)
		}
	}
	err = d.cloud.DestroyVM(vm.ID, d.rm.Expunge, ephemeral)
	if d.rm.Expunge && cloudstack.IsExpungeRefused(err) {
		err = d.cloud.DestroyVM(vm.ID, false, ephemeral)
	}
	return err
}

// iso deletes a config drive ISO; CloudStack keeps one whose upload it has
// not settled, or that a VM not yet expunged holds.
func (d remover) iso(id string) error {
	err := d.cloud.DeleteISO(id)
	switch {
	case cloudstack.IsISOBusy(err):
		return fmt.Errorf("CloudStack has not settled the upload of ISO %s (it abandons it after upload.operation.timeout, "+
			"60 minutes by default): run orphans -delete again then: %w", id, err)
	case cloudstack.IsISOInUse(err):
		return fmt.Errorf("ISO %s is attached to a VM CloudStack has not expunged yet: %w", id, err)
	}
	return err
}

// template deletes a stemcell's template as delete_stemcell does: forced
// when only VMs not yet expunged use it.
func (d remover) template(id string) error {
	err := d.cloud.DeleteTemplate(id, false)
	switch {
	case cloudstack.IsTemplateInUse(err):
		err = d.cloud.DeleteTemplate(id, true)
	case cloudstack.IsTemplateBusy(err):
		return fmt.Errorf("CloudStack has not settled the transfer of template %s (an upload is abandoned after "+
			"upload.operation.timeout, 60 minutes by default): run orphans -delete again then: %w", id, err)
	}
	return err
}
