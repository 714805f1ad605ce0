package cloudstack

// VMState is a VM's state as CloudStack reports it (VirtualMachine.State).
// Only the states the CPI treats apart are constants; the predicates on VM
// say what they mean to it.
type VMState string

// VirtualMachine.State's names.
const (
	VMStarting  VMState = "Starting"
	VMStopping  VMState = "Stopping"
	VMStopped   VMState = "Stopped"
	VMDestroyed VMState = "Destroyed"
	VMExpunging VMState = "Expunging"
	VMMigrating VMState = "Migrating"
	VMRestoring VMState = "Restoring"
	// vmExpunged is no VirtualMachine.State (an expunged VM's row is
	// removed, and listVirtualMachines no longer shows it); the CPI has
	// always taken it as expunged too, should a listing say so.
	vmExpunged VMState = "Expunged"
)

// Expunged says CloudStack is expunging the VM or has expunged it: nothing
// of it is the CPI's to list or to clean up any more.
func (vm *VM) Expunged() bool { return vm.State == VMExpunging || vm.State == vmExpunged }

// Gone says CloudStack has let go of the VM, or is about to.
func (vm *VM) Gone() bool { return vm.State == VMDestroyed || vm.Expunged() }

// AwaitingExpunge says the VM is Destroyed but not expunged: it still holds
// its host name and guest addresses until CloudStack's expunge thread
// removes it, expunge.delay after the destroy (UserVmManagerImpl.expunge
// releases them; VirtualMachineManagerImpl.advanceExpunge cleans the NICs).
func (vm *VM) AwaitingExpunge() bool { return vm.State == VMDestroyed }

// Stopped says the VM is stopped: a reboot starts it, and XenServer
// resizes its disks.
func (vm *VM) Stopped() bool { return vm.State == VMStopped }

// Busy says a job is working on the VM: its state is one of those
// VirtualMachine.State marks transitional (Starting, Stopping, Migrating,
// Restoring; Expunging counts as Gone). CloudStack queues a VM's work
// (VirtualMachineManagerImpl's VM work jobs), so what is sent meanwhile
// runs only after that job.
func (vm *VM) Busy() bool {
	switch vm.State {
	case VMStarting, VMStopping, VMMigrating, VMRestoring:
		return true
	}
	return false
}
