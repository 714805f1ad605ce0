package storage

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// What a Linux guest sees of its disks, per hypervisor, served at
// /metadata/<vm-uuid>/sim/disks (metadata.go). No CloudStack service
// answers this: it stands in for the guest's /dev, so that a test can lay
// out the devices a real guest would have and run the BOSH agent's own
// resolver against them.
//
//   - XenServer: the VBD's userdevice is the volume's device id
//     (CitrixResourceBase.createVbd when the VM starts,
//     XenServerStorageProcessor.attachVolume on hot attach) and blkfront
//     names the disk xvd<letter> after it: device 4 is xvde.
//   - KVM: libvirt gets the serial diskUuidToSerial(volume UUID)
//     (LibvirtComputingResource.createVbd, LibvirtComputingResource.diskUuidToSerial)
//     and udev links /dev/disk/by-id/virtio-<serial> to the disk; the
//     kernel's vd<letter> is not the target name libvirt was given.
//   - VMware: a hot-added disk takes the lowest free SCSI unit
//     (VirtualMachineMO.attachDisk leaves it to VmwareHelper.prepareDiskDevice,
//     which asks getNextDeviceNumber); there is no serial.
//
// KVM's and VMware's kernel names are the guest's own choice: Linux gives
// a disk that appears the lowest free index (vd and sd alike), so the
// simulator keeps the index a disk got when it was attached (GuestIndex).
// Departures: a disk attached while its VM is stopped is named as if the VM
// ran (at the next boot the guest would name its disks in device order,
// which gives the same letters unless a lower disk was detached meanwhile),
// and a reboot keeps the letters.

// GuestDisk is one disk as the guest sees it.
type GuestDisk struct {
	VolumeID string `json:"volumeid"`
	Type     string `json:"type"`
	DeviceID int    `json:"deviceid"`
	// Name is the kernel's name under /dev, empty where the simulator
	// cannot say (a hypervisor without guests, such as Simulator).
	Name string `json:"name,omitempty"`
	// Links are udev's links under /dev/disk to the disk, by path below
	// /dev ("disk/by-id/virtio-…").
	Links []string `json:"links,omitempty"`
	// Bus is a VMware disk's controller bus and unit as CloudStack's
	// chaininfo says it ("scsi0:1", model/vmwarebus.go), from which a test
	// lays out the guest's /sys/bus/scsi/devices.
	Bus string `json:"bus,omitempty"`
}

// guestDisks lists a VM's disks as its guest sees them, in device id order.
func guestDisks(st *model.State, vm *model.VirtualMachine) []GuestDisk {
	hypervisor := st.VMHypervisor(vm)
	var out []GuestDisk
	for _, v := range st.VolumesOf(vm.ID) {
		if v.DeviceID == nil {
			continue
		}
		d := GuestDisk{VolumeID: v.ID, Type: v.Type, DeviceID: *v.DeviceID}
		index := -1
		if v.GuestIndex != nil {
			index = *v.GuestIndex
		}
		switch hypervisor {
		case "XenServer":
			d.Name = "xvd" + driveLetters(d.DeviceID)
		case "KVM":
			d.Links = []string{"disk/by-id/virtio-" + diskUUIDToSerial(v.ID)}
			if index >= 0 {
				d.Name = "vd" + driveLetters(index)
			}
		case "VMware":
			if index >= 0 {
				d.Name = "sd" + driveLetters(index)
			}
			d.Bus = v.BusName
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].DeviceID < out[j].DeviceID })
	return out
}

// GuestDisksJSON is the body of /metadata/<vm>/sim/disks.
func GuestDisksJSON(st *model.State, vm *model.VirtualMachine) string {
	disks := guestDisks(st, vm)
	if disks == nil {
		disks = []GuestDisk{}
	}
	b, _ := json.Marshal(map[string]any{"hypervisor": st.VMHypervisor(vm), "disks": disks})
	return string(b)
}

// diskUUIDToSerial is LibvirtComputingResource.diskUuidToSerial: the UUID
// without hyphens, at most 20 characters.
func diskUUIDToSerial(uuid string) string {
	s := strings.ReplaceAll(uuid, "-", "")
	if len(s) > 20 {
		s = s[:20]
	}
	return s
}

// driveLetters is Linux's disk suffix for an index: a … z, aa … az, ba …
func driveLetters(n int) string {
	name := ""
	for n >= 0 {
		name = string(rune('a'+n%26)) + name
		n = n/26 - 1
	}
	return name
}
