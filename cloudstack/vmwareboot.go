package cloudstack

import (
	"encoding/json"
	"strconv"
	"strings"
)

// VMwareGuest asks deployVirtualMachine for the VMware VM that bosh.io's
// vSphere stemcell needs: EFI firmware, as the stemcell's image.ovf has,
// and root and data disks on one SCSI controller type, so that the agent's
// scsi resolver, which looks for the SCSI host of the root disk (*:0:0:0),
// finds the data disks on the same host by their unit.
//
//   - boottype UEFI needs a bootmode (BaseDeployVMCmd.getBootMode refuses
//     UEFI without one; its values are LEGACY and SECURE), and getDetails
//     records them as the VM detail UEFI=LEGACY, which
//     StartCommandExecutor.setBootOptions turns into firmware "efi",
//     without secure boot unless the mode is SECURE. The stemcell's boot
//     loader is not signed for secure boot, so LEGACY.
//   - the details rootDiskController and dataDiskController
//     (VmDetailConstants) win over vmware.root.disk.controller, which
//     defaults to ide (Config.java): StartCommandExecutor.getDiskController
//     puts ROOT on that controller type, and data disks on theirs.
//     lsilogic is the controller of the stemcell's own root disk
//     (bosh-linux-stemcell-builder's image_ovf_vmx).
type VMwareGuest struct{}

// The values VMwareGuest sends.
const (
	bootTypeUEFI       = "UEFI"
	bootModeLegacy     = "LEGACY"
	vmwareSCSIType     = "lsilogic"
	rootDiskController = "rootDiskController"
	dataDiskController = "dataDiskController"
)

// The SCSI units of a VMware VM's disks at its first start:
// StartCommandExecutor.execute gives the disks, sorted by device id, the
// next unit of their controller from 0 (skipping 7, the controller's own,
// VmwareHelper.isReservedScsiDeviceNumber), the CD-ROM going on IDE; with
// ROOT (device 0) and the data disk the deploy creates (device 1) on SCSI,
// they are units 0 and 1.
const (
	RootSCSIUnit             = 0
	DeployedDataDiskSCSIUnit = 1
)

// vmwareDetails are VMwareGuest's deployVirtualMachine details.
func vmwareDetails() map[string]string {
	return map[string]string{rootDiskController: vmwareSCSIType, dataDiskController: vmwareSCSIType}
}

// diskInfo is the JSON of a VMware volume's chaininfo
// (VirtualMachineDiskInfo: diskDeviceBusName, diskChain), which listVolumes
// answers to every caller (VolumeJoinDaoImpl.newVolumeResponse,
// setChainInfo) once the volume has been on a running VM.
type diskInfo struct {
	BusName string `json:"diskDeviceBusName"`
}

// parseSCSIUnit reads the unit of a disk on a SCSI controller from its
// chaininfo: "scsi0:1" is unit 1 of bus 0. A disk on IDE, or without a
// chaininfo yet, has none (ok false).
func parseSCSIUnit(chainInfo string) (unit int, ok bool) {
	var info diskInfo
	if chainInfo == "" || json.Unmarshal([]byte(chainInfo), &info) != nil {
		return 0, false
	}
	bus, unitText, found := strings.Cut(info.BusName, ":")
	if !found || !strings.HasPrefix(bus, "scsi") {
		return 0, false
	}
	n, err := strconv.Atoi(unitText)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
