package cpi

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/registry"
)

// Old stemcells' agents find their persistent disks in the registry, so
// attach_disk and detach_disk keep CloudStack and the registry in step: a
// registry write is tried a few times, and when it still fails the
// CloudStack side is undone before the error returns.

// registryAttempts bounds the writes of disks.persistent; registryBackoff
// is the wait before the second, doubled before each later one.
const registryAttempts = 3

var registryBackoff = 500 * time.Millisecond

// updateRegistryDisks rewrites disks.persistent for old stemcells, whose
// agents read it from the registry.
func (c disks) updateRegistryDisks(vm *cloudstack.VM, change func(map[string]any)) error {
	if c.ctx.StemcellAPIVersion >= 2 || c.cfg.Registry.Endpoint == "" {
		return nil
	}
	reg, err := c.registryClient()
	if err != nil {
		return cloudError(err)
	}
	wait := registryBackoff
	for attempt := 1; ; attempt++ {
		err = rewriteRegistryDisks(reg, vm, change)
		if err == nil || attempt == registryAttempts {
			return err
		}
		c.logger.Warn("disk", "registry settings of VM %s (attempt %d of %d): %s; trying again in %s",
			vm.ID, attempt, registryAttempts, err, wait)
		time.Sleep(wait)
		wait *= 2
	}
}

func rewriteRegistryDisks(reg *registry.Client, vm *cloudstack.VM, change func(map[string]any)) error {
	raw, err := reg.Get(vm.Name)
	if errors.Is(err, registry.ErrNotFound) {
		return nil // a VM created by another CPI, or with a current stemcell
	}
	if err != nil {
		return err
	}
	var settings map[string]any
	if err := json.Unmarshal(raw, &settings); err != nil {
		return fmt.Errorf("registry settings of VM %s: %w", vm.ID, err)
	}
	disks, _ := settings["disks"].(map[string]any)
	if disks == nil {
		disks = map[string]any{}
		settings["disks"] = disks
	}
	persistent, _ := disks["persistent"].(map[string]any)
	if persistent == nil {
		persistent = map[string]any{}
	}
	change(persistent)
	disks["persistent"] = persistent
	updated, err := json.Marshal(settings)
	if err != nil {
		return err
	}
	return reg.Put(vm.Name, updated)
}

// undoAttach detaches the disk this attach_disk attached when the registry
// could not be told, so that the agent and CloudStack agree it is not there.
func (c disks) undoAttach(vm *cloudstack.VM, vol *cloudstack.Volume, attached bool, regErr error) error {
	if !attached {
		return cloudError(fmt.Errorf("disk %s was attached to VM %s already, but writing it into the registry failed: %w",
			vol.ID, vm.ID, regErr))
	}
	if err := c.cloud.DetachVolume(vol.ID); err != nil {
		return cloudError(fmt.Errorf("attaching disk %s to VM %s: writing the registry failed (%v), and detaching the disk "+
			"again failed too (%v): it stays attached in CloudStack while the registry does not list it", vol.ID, vm.ID, regErr, err))
	}
	return cloudError(fmt.Errorf("attaching disk %s to VM %s: writing the registry failed, so the disk was detached again: %w",
		vol.ID, vm.ID, regErr))
}

// undoDetach attaches the disk this detach_disk detached again when the
// registry could not be told, so that the agent and CloudStack agree it is
// still there.
func (c disks) undoDetach(vm *cloudstack.VM, vol *cloudstack.Volume, detached bool, regErr error) error {
	if !detached {
		return cloudError(fmt.Errorf("disk %s was detached from VM %s already, but removing it from the registry failed: %w",
			vol.ID, vm.ID, regErr))
	}
	again, err := c.cloud.AttachVolume(vol.ID, vm.ID)
	if err != nil {
		return cloudError(fmt.Errorf("detaching disk %s from VM %s: removing it from the registry failed (%v), and attaching "+
			"it again failed too (%v): it is detached in CloudStack while the registry still lists it", vol.ID, vm.ID, regErr, err))
	}
	moved := ""
	if again.DeviceID != vol.DeviceID {
		moved = fmt.Sprintf(" (now as device %d, not %d: the registry's hint is stale)", again.DeviceID, vol.DeviceID)
	}
	return cloudError(fmt.Errorf("detaching disk %s from VM %s: removing it from the registry failed, so the disk was "+
		"attached again%s: %w", vol.ID, vm.ID, moved, regErr))
}
