package model

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// A VMware VM's disks sit on a controller bus at a unit, which the
// hypervisor reports back and CloudStack keeps in the volume's chaininfo
// (VirtualMachineDiskInfo.diskDeviceBusName, "scsi0:1"): listVolumes shows
// it to every caller (VolumeJoinDaoImpl.newVolumeResponse, setChainInfo).
// The simulator keeps the bus name alone (Volume.BusName); the disk chain
// is its path.
//
// At start (StartCommandExecutor.execute) the CD-ROM is prepared first on
// IDE (VmwareHelper.prepareIsoDevice with ideUnitNumber++, with or without
// an ISO), then the disks sorted by device id (sortVolumesByDeviceId),
// each on its controller type (getDiskController): ROOT on the VM's
// rootDiskController detail, else vmware.root.disk.controller, whose
// default is ide (Config.java); data disks on dataDiskController, else the
// OS's recommended SCSI controller. A disk the VM already had keeps its
// bus (getMatchingExistingDisk). IDE units count on across the two IDE
// controllers (ideUnitNumber % MAX_IDE_CONTROLLER_COUNT, two devices
// each); SCSI units count from 0, skipping 7, the controller's own
// (VmwareHelper.isReservedScsiDeviceNumber). A hot-attached disk takes the
// lowest free unit of the SCSI controller (VirtualMachineMO.attachDisk
// leaves it to VmwareHelper.prepareDiskDevice, which asks
// getNextDeviceNumber), and its bus comes back in the attach answer's
// chainInfo (VolumeApiServiceImpl.sendAttachVolumeCommand). Departures:
// one SCSI controller (bus 0), whatever its type; a detached disk forgets
// its bus (CloudStack keeps the old chaininfo until the next attach
// answers a new one).

// scsiReservedUnit is the SCSI controller's own unit.
const scsiReservedUnit = 7

// ideUnitsPerController is the devices an IDE controller takes.
const ideUnitsPerController = 2

// AssignVMwareBuses gives a starting VMware VM's disks that have no bus
// theirs, as StartCommandExecutor.execute does.
func (st *State) AssignVMwareBuses(vm *VirtualMachine) {
	vols := st.VolumesOf(vm.ID)
	sort.SliceStable(vols, func(i, j int) bool { return deviceOf(vols[i]) < deviceOf(vols[j]) })
	ide, scsi := 1, 0 // the CD-ROM took IDE unit 0
	for _, v := range vols {
		onIDE := vmwareController(vm, v) == "ide"
		if strings.HasPrefix(v.BusName, "ide") {
			onIDE = true
		} else if v.BusName != "" {
			onIDE = false
		}
		if !onIDE && scsi == scsiReservedUnit {
			scsi++
		}
		if v.BusName == "" {
			if onIDE {
				v.BusName = fmt.Sprintf("ide%d:%d", ide/ideUnitsPerController, ide%ideUnitsPerController)
			} else {
				v.BusName = fmt.Sprintf("scsi0:%d", scsi)
			}
		}
		if onIDE {
			ide++
		} else {
			scsi++
		}
	}
}

// HotAttachVMwareBus gives a disk attached to a running VMware VM the
// lowest free unit of its SCSI controller.
func (st *State) HotAttachVMwareBus(vm *VirtualMachine, v *Volume) {
	used := map[int]bool{scsiReservedUnit: true}
	for _, other := range st.VolumesOf(vm.ID) {
		if u, ok := scsiUnit(other.BusName); ok && other != v {
			used[u] = true
		}
	}
	u := 0
	for used[u] {
		u++
	}
	v.BusName = "scsi0:" + strconv.Itoa(u)
}

// vmwareController is the controller type a disk gets at start: the VM's
// rootDiskController or dataDiskController detail, else the defaults.
func vmwareController(vm *VirtualMachine, v *Volume) string {
	key, def := "dataDiskController", "osdefault"
	if v.Type == VolumeRoot {
		key, def = "rootDiskController", "ide"
	}
	if c := vm.Details[key]; c != "" {
		return strings.ToLower(c)
	}
	return def
}

func deviceOf(v *Volume) int {
	if v.DeviceID == nil {
		return 1 << 30
	}
	return *v.DeviceID
}

// scsiUnit reads "scsi0:3" as unit 3.
func scsiUnit(bus string) (int, bool) {
	rest, ok := strings.CutPrefix(bus, "scsi0:")
	if !ok {
		return 0, false
	}
	u, err := strconv.Atoi(rest)
	return u, err == nil
}

// ChainInfo is the volume's chaininfo as CloudStack answers it (the Gson
// of VirtualMachineDiskInfo), empty for a disk without a bus.
func (v *Volume) ChainInfo() string {
	if v.BusName == "" {
		return ""
	}
	return fmt.Sprintf(`{"diskDeviceBusName":%q,"diskChain":["[%s] %s.vmdk"]}`, v.BusName, v.Storage, v.Path)
}
