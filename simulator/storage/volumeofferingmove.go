package storage

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// What changeDiskOfferingForVolumeInternal does once a Ready volume passed
// its checks: find whether it must be resized and moved, then migrate and
// resize it.

// placeForOffering decides the resize (a new size or IOPS, compared as
// compareEqualsIncludingNullOrZero does: the simulator's volumes keep no IOPS,
// so any non-zero IOPS of the new offering count as a change) and, from the
// pools listStoragePoolsForSystemMigrationOfVolume finds suitable, whether the
// volume must move, which needs automigrate.
func placeForOffering(c *kernel.Call, r *offeringChange) error {
	v := r.volume
	if v.SizeBytes != r.newSize || nonZero(r.newMinIOPS) || nonZero(r.newMaxIOPS) {
		r.resizeNeeded = true
		if err := resizeReadyChecks(c, r); err != nil {
			return err
		}
	}
	suitable := suitablePools(c.State, v.ZoneID, r.target)
	for _, p := range suitable {
		if p.Name == v.Storage {
			return nil
		}
	}
	if !r.autoMigrate {
		return kernel.ParamError("Failed to change offering for volume %s since automigrate is set to false but volume needs to migrated", v.ID)
	}
	if len(suitable) == 0 { // a ServerApiException(INTERNAL_ERROR)
		return &kernel.APIError{Code: kernel.CodeInternalError, CSCode: kernel.CsServerAPIException,
			Text: "Volume change offering operation failed for volume ID: " + v.ID + " as no suitable pool(s) found for migrating to support new disk offering"}
	}
	// Departure: CloudStack shuffles the suitable pools; the simulator takes the first.
	if err := migrateForOffering(c, r, suitable[0]); err != nil {
		return kernel.InternalError("Volume change offering operation failed for volume ID: %s migration failed to storage pool %d due to %s",
			v.ID, suitable[0].InternalID, kernel.AsAPIError(err).Text)
	}
	r.migrated = true
	return nil
}

func nonZero(n *int64) bool { return n != nil && *n != 0 }

// suitablePools are the zone's pools a volume of the offering may live on: the
// storage pool allocators' tag match (doesTargetStorageSupportDiskOffering:
// the offering's tags a subset of the pool's). The simulator's pools are all
// shared, so a local-storage offering finds none.
func suitablePools(st *model.State, zoneID string, o *model.DiskOffering) []*model.StoragePool {
	if o.LocalStorage {
		return nil
	}
	var out []*model.StoragePool
	for _, p := range st.StoragePools {
		if !strings.EqualFold(p.ZoneID, zoneID) {
			continue
		}
		want, have := tagsArray(o.Tags), tagsArray(&p.Tags)
		if len(want) == 0 || (len(have) > 0 && subset(want, have)) {
			out = append(out, p)
		}
	}
	return out
}

// resizeReadyChecks is validateVolumeReadyStateAndHypervisorChecks.
func resizeReadyChecks(c *kernel.Call, r *offeringChange) error {
	v := r.volume
	if snapshotInProgress(c.State, v.ID) {
		return kernel.InternalError("There is/are unbacked up snapshot(s) on this volume, resize volume is not permitted, please try again later.")
	}
	hv, err := resizableOn(v)
	if err != nil {
		return err
	}
	if hv == "VMware" && r.newSize < v.SizeBytes {
		return kernel.ParamError("VMware doesn't support shrinking volume from larger size: %d GB to a smaller size: %d GB", v.SizeBytes, r.newSize)
	}
	if hv == "VMware" && v.Type == model.VolumeRoot && r.vm != nil && r.vm.State != model.VMStopped {
		return kernel.ParamError("VM current state is : PowerOn. But VM should be in PowerOff state.")
	}
	return nil
}

// migrateForOffering is the MigrateVolumeCmd (livemigrate true) that
// changeDiskOfferingForVolumeInternal runs, through migrateVolume's checks
// for a volume on a running VM: KVM refuses live volume migration between
// pools that are not both StorPool (isSourceOrDestNotOnStorPool; the
// simulator's pools are NFS); XenServer and VMware move it (storage motion);
// the Simulator hypervisor does not. Departure: no capacity, encryption or
// storage policy checks.
func migrateForOffering(c *kernel.Call, r *offeringChange, pool *model.StoragePool) error {
	v := r.volume
	if v.State != model.VolumeReady {
		return kernel.ParamError("Volume must be in ready state")
	}
	if r.vm != nil && r.vm.State == model.VMRunning {
		switch c.State.VMHypervisor(r.vm) {
		case "KVM":
			return kernel.ParamError("KVM does not support volume live migration due to the limited possibility to refresh VM XML domain. " +
				"Therefore, to live migrate a volume between storage pools, one must migrate the VM to a different host as well to force the VM XML domain update. " +
				"Use 'migrateVirtualMachineWithVolumes' instead.")
		case "XenServer", "VMware":
		default:
			return kernel.ParamError("Volume needs to be detached from VM")
		}
	}
	v.Storage = pool.Name
	return nil
}

// resizeForOffering is resizeVolumeInternal and orchestrateResizeVolume:
// XenServer resizes a disk only while its VM is stopped or it is detached.
// A failed resize after a migration only warns (the volume keeps its size,
// on the new offering); otherwise the change fails.
func resizeForOffering(c *kernel.Call, r *offeringChange) error {
	v := r.volume
	if v.SizeBytes != r.newSize && r.vm != nil && v.Hypervisor == "XenServer" && r.vm.State != model.VMStopped {
		if r.migrated {
			return nil
		}
		return kernel.InternalError("Volume change offering operation failed for volume ID: %s due to resize volume operation failed", v.ID)
	}
	v.SizeBytes = r.newSize
	return nil
}
