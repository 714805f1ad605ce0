package cloudstack

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
)

// RootDiskPath and DeployedDataDiskPath are the devices of a VM's ROOT disk
// and of the data disk deployVirtualMachine creates with it (the CPI's
// ephemeral disk), in the /dev/sdX form, for settings written before the VM
// exists: the stemcell's agent resolves them with
// its virtio resolver, whose mapped lookup tries /dev/xvdX (XenServer),
// /dev/vdX (KVM) and /dev/sdX (VMware) in turn, so one form serves every
// hypervisor. User data is written before CloudStack creates the disks, so
// the ephemeral disk's UUID (and KVM serial) is not known yet; its letter
// is: deployVirtualMachine makes ROOT device 0 and the ephemeral disk
// device 1, and every hypervisor presents boot-time disks in device order —
// XenServer by userdevice (CitrixResourceBase.createVbd), KVM in a domain
// whose disks are sorted by device id (LibvirtComputingResource.createVbd),
// so virtio probes them vda, vdb, and VMware on SCSI units counted up over
// the disks sorted by device id (VmwareResource's StartCommand).
const (
	RootDiskPath             = "/dev/sda"
	DeployedDataDiskPath     = "/dev/sdb"
	DeployedDataDiskDeviceID = 1
)

// GuestPath is the device the guest has for the data disk, on a VM that
// runs on hypervisor.
//
//   - XenServer: the VBD's userdevice is CloudStack's device id
//     (CitrixResourceBase.createVbd at start, XenServerStorageProcessor.
//     attachVolume on hot attach), and blkfront names xvd<letter> after it,
//     so device 4 is xvde.
//   - KVM: the guest kernel names virtio disks in PCI probe order, which a
//     hot-plug can make anything; udev links /dev/disk/by-id/virtio-<serial>
//     to the disk, with the serial libvirt was given
//     (LibvirtComputingResource.createVbd and AttachVolume set it to
//     diskUuidToSerial of the volume's UUID).
//   - VMware: a hot-added disk takes the lowest free SCSI unit
//     (VirtualMachineMO.attachDisk leaves the unit to
//     VmwareHelper.prepareDiskDevice, which asks getNextDeviceNumber) and
//     Linux the lowest free sd letter; CloudStack's device ids are the
//     lowest free too, skipping the CD-ROM's 3, so the disk of device id n
//     is the data disk of rank n, or n-1 past the CD-ROM: 4 is sdd.
//   - Other hypervisors: the mapped /dev/sdX form of the device id, which
//     the agent also tries as xvdX and vdX.
func (v *Volume) GuestPath(hv Hypervisor) string {
	switch hv {
	case hypervisor.XenServer:
		return "/dev/xvd" + driveLetters(v.DeviceID)
	case hypervisor.KVM:
		return "/dev/disk/by-id/virtio-" + v.KVMSerial()
	case hypervisor.VMware:
		return "/dev/sd" + driveLetters(scsiRank(v.DeviceID))
	}
	return "/dev/sd" + driveLetters(v.DeviceID)
}

// cdromDeviceID is the device id CloudStack keeps for the CD-ROM on every
// hypervisor; no disk has it.
const cdromDeviceID = 3

// scsiRank is the place among a VM's disks (ROOT is 0) of the disk with
// CloudStack device id n.
func scsiRank(n int64) int64 {
	if n > cdromDeviceID {
		return n - 1
	}
	return n
}

// driveLetters names the nth disk as Linux does: a … z, aa … az, ba …
// The simulator has its own copy on purpose: it is an independent reading
// of CloudStack and the guest, so a mistake shared with the CPI cannot
// hide behind a test that passes.
func driveLetters(n int64) string {
	name := ""
	for n >= 0 {
		name = string(rune('a'+n%26)) + name
		n = n/26 - 1
	}
	return name
}

// KVMSerial is the serial libvirt gives the disk on KVM, which agents may
// match on: LibvirtComputingResource.diskUuidToSerial, the volume's UUID
// without hyphens, cut to 20 characters.
func (v *Volume) KVMSerial() string {
	s := strings.ReplaceAll(v.ID, "-", "")
	if len(s) > 20 {
		s = s[:20]
	}
	return s
}
