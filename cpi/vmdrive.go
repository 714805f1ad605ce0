package cpi

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell"
)

// create_vm's steps for a stemcell whose agent reads a config drive:
// the ISO is made and handed to CloudStack before the deploy, the VM is
// deployed stopped while CloudStack installs the ISO (an upload is ready
// only at its upload monitor's next poll), and started once the ISO is
// ready and attached: deployVirtualMachine startvm=false, attachIso on the
// Stopped VM (a database change only: TemplateManagerImpl.attachISOToVM),
// startVirtualMachine.

// settings puts the agent settings where the stemcell's agent reads them:
// the config drive ISO, or user data (and the registry for old stemcells).
func (v *vmCreation) settings(name string) error {
	if v.settingsFrom == noDrive {
		var err error
		v.spec.UserData, err = v.userData(name)
		return err
	}
	c := v.vms
	c.drives.sweep(v.agentID)
	settings := c.agentSettings(v.agentID, name, v.plan, v.withEphemeralDisk, v.env)
	if v.settingsFrom == cdromDrive {
		settings.Disks = unitDisks(v.withEphemeralDisk)
		v.spec.VMware = &cloudstack.VMwareGuest{}
	}
	var err error
	v.drive, err = c.drives.create(name, v.agentID, settings, v.spec.ZoneID, v.settingsFrom)
	v.spec.Stopped = true
	return err
}

// unitDisks are the disk hints of a vSphere stemcell's VM, as the vSphere
// CPI writes them without disk UUIDs (vm_creator.rb generate_disk_env): the
// SCSI unit numbers as strings, which the agent's scsi resolver looks up
// on the root disk's SCSI host. CloudStack gives the disks of a starting
// VM their units in device id order (cloudstack.RootSCSIUnit,
// cloudstack.DeployedDataDiskSCSIUnit).
func unitDisks(ephemeral bool) diskSettings {
	d := diskSettings{System: strconv.Itoa(cloudstack.RootSCSIUnit), Persistent: map[string]apiv1.DiskHint{}}
	if ephemeral {
		d.Ephemeral = strconv.Itoa(cloudstack.DeployedDataDiskSCSIUnit)
	}
	return d
}

// bootWithDrive waits for the ISO, attaches it and starts the VM.
func (v *vmCreation) bootWithDrive() error {
	if v.settingsFrom == noDrive {
		return nil
	}
	c := v.vms
	err := c.drives.ready(v.drive.id)
	v.stopServing()
	if err != nil {
		return err
	}
	if err := c.drives.cloud.AttachISO(v.drive.id, v.vm.ID); err != nil {
		return fmt.Errorf("attaching the config drive ISO %s to VM %s: %w", v.drive.id, v.vm.ID, err)
	}
	if err := c.cloud.StartVM(v.vm.ID); err != nil {
		// Left untyped: cleanup types it VMCreationFailed.
		return fmt.Errorf("starting VM %s with its config drive: %w", v.vm.ID, err)
	}
	return nil
}

func (v *vmCreation) stopServing() {
	if v.drive.stop != nil {
		v.drive.stop()
		v.drive.stop = nil
	}
}

// completeDrive clears the ISO's incomplete mark: from here on it goes
// with its VM.
func (v *vmCreation) completeDrive() error {
	if v.settingsFrom == noDrive {
		return nil
	}
	err := v.vms.drives.complete(v.drive.id, v.spec.Name, v.agentID, v.settingsFrom)
	return wrap(err, "marking the config drive ISO %s complete", v.drive.id)
}

// cleanupDrive deletes the ISO this call made, if the VM's removal did not
// take it, waiting for CloudStack to settle an upload it received (its
// upload monitor's next poll: drives.settle). An ISO whose creating call
// went unanswered is found by its name and not waited for: no bytes were
// sent to it, and CloudStack keeps such an upload NotUploaded until
// upload.operation.timeout. What is left is a problem, so the director
// never takes ok_to_retry for nothing left when an ISO is.
func (v *vmCreation) cleanupDrive(drives configDrives, note func(string, error), removed []string) []string {
	v.stopServing()
	ids, patience := []string{v.drive.id}, drives.settle
	if v.drive.id == "" {
		if !v.drive.asked {
			return removed
		}
		var err error
		ids, err = drives.named(v.spec.Name)
		note("looking for the config drive ISO named "+v.spec.Name, err)
		patience = 0
	}
	if len(ids) == 0 {
		return removed
	}
	err := drives.removeAll(ids, patience)
	note("deleting config drive ISO "+strings.Join(ids, ", "), err)
	if err == nil {
		removed = append(removed, "config drive ISO "+strings.Join(ids, ", "))
	}
	return removed
}

// driveTransferFailed says the ISO did not reach CloudStack: the SSVM
// refused the POST, CloudStack gave up installing it, or it was not ready
// in time. Once what was made is removed, a retry may well succeed.
func driveTransferFailed(err error) bool {
	var refused *stemcell.UploadRefusedError
	var failed *cloudstack.ISOFailedError
	return errors.As(err, &refused) || errors.As(err, &failed) || cloudstack.IsISOTimeout(err)
}
