package cpi

import (
	"errors"
	"fmt"

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
	if !v.configDrive {
		var err error
		v.spec.UserData, err = v.userData(name)
		return err
	}
	c := v.vms
	c.drives.sweep(v.agentID)
	settings := c.agentSettings(v.agentID, name, v.plan, v.withEphemeralDisk, v.env)
	id, stop, err := c.drives.create(name, v.agentID, settings, v.spec.ZoneID)
	v.isoID, v.stopDrive = id, stop
	v.spec.Stopped = true
	return err
}

// bootWithDrive waits for the ISO, attaches it and starts the VM.
func (v *vmCreation) bootWithDrive() error {
	if !v.configDrive {
		return nil
	}
	c := v.vms
	err := c.drives.ready(v.isoID)
	v.stopServing()
	if err != nil {
		return err
	}
	if err := c.drives.cloud.AttachISO(v.isoID, v.vm.ID); err != nil {
		return fmt.Errorf("attaching the config drive ISO %s to VM %s: %w", v.isoID, v.vm.ID, err)
	}
	return wrap(c.cloud.StartVM(v.vm.ID), "starting VM %s with its config drive", v.vm.ID)
}

func (v *vmCreation) stopServing() {
	if v.stopDrive != nil {
		v.stopDrive()
		v.stopDrive = nil
	}
}

// completeDrive clears the ISO's incomplete mark: from here on it goes
// with its VM.
func (v *vmCreation) completeDrive() error {
	if !v.configDrive {
		return nil
	}
	return wrap(v.vms.drives.complete(v.isoID, v.spec.Name, v.agentID), "marking the config drive ISO %s complete", v.isoID)
}

// cleanupDrive deletes the ISO this call made, if the VM's removal did not
// take it. One CloudStack lets go of only at its upload monitor's next
// poll is left marked for the next create_vm's sweep: it stands in no
// retry's way (a retry's ISO has its own name).
func (v *vmCreation) cleanupDrive(note func(string, error), removed []string) []string {
	v.stopServing()
	if v.isoID == "" {
		return removed
	}
	left, err := v.vms.drives.remove(v.isoID)
	note("deleting config drive ISO "+v.isoID, err)
	switch {
	case err != nil:
	case left:
		removed = append(removed, fmt.Sprintf("nothing of config drive ISO %s yet (CloudStack is settling its upload; "+
			"the next create_vm deletes it)", v.isoID))
	default:
		removed = append(removed, "config drive ISO "+v.isoID)
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
