package cpi

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell"
)

// create_vm's steps after the deploy for a stemcell whose agent reads a
// config drive (made before it: createvm_settings.go): the VM, deployed
// stopped, is started once the ISO is ready and attached
// (deployVirtualMachine startvm=false, attachIso on the Stopped VM, a
// database change only: TemplateManagerImpl.attachISOToVM,
// startVirtualMachine); the ISO's mark is cleared once the VM runs, and a
// failed create_vm deletes it.

// bootWithDrive waits for the ISO, attaches it and starts the VM.
func (d *deployment) bootWithDrive() error {
	if d.plan.drive == noDrive {
		return nil
	}
	c := d.vms
	err := c.drives.ready(d.drive.id)
	d.stopServing()
	if err != nil {
		return err
	}
	if err := c.drives.cloud.AttachISO(d.drive.id, d.vm.ID); err != nil {
		return fmt.Errorf("attaching the config drive ISO %s to VM %s: %w", d.drive.id, d.vm.ID, err)
	}
	if err := c.cloud.StartVM(d.vm.ID); err != nil {
		// Left untyped: cleanup types it VMCreationFailed.
		return fmt.Errorf("starting VM %s with its config drive: %w", d.vm.ID, err)
	}
	return nil
}

func (d *deployment) stopServing() {
	if d.drive.stop != nil {
		d.drive.stop()
		d.drive.stop = nil
	}
}

// completeDrive clears the ISO's incomplete mark: from here on it goes
// with its VM.
func (d *deployment) completeDrive() error {
	if d.plan.drive == noDrive {
		return nil
	}
	err := d.vms.drives.complete(d.drive.id, d.spec.Name, d.plan.agentID, d.plan.drive)
	return wrap(err, "marking the config drive ISO %s complete", d.drive.id)
}

// cleanupDrive deletes the ISO this call made, if the VM's removal did not
// take it, waiting for CloudStack to settle an upload it received (its
// upload monitor's next poll: drives.settle). An ISO whose creating call
// went unanswered is found by its name and not waited for: no bytes were
// sent to it, and CloudStack keeps such an upload NotUploaded until
// upload.operation.timeout. What is left is a problem, so the director
// never takes ok_to_retry for nothing left when an ISO is.
func (d *deployment) cleanupDrive(drives configDrives, note func(string, error), removed []string) []string {
	d.stopServing()
	ids, patience := []string{d.drive.id}, drives.settle
	if d.drive.id == "" {
		if !d.drive.asked {
			return removed
		}
		var err error
		ids, err = drives.named(d.spec.Name)
		note("looking for the config drive ISO named "+d.spec.Name, err)
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
