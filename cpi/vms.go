package cpi

import (
	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
)

// HasVM implements apiv1.CPI: a VM CloudStack is destroying counts as gone,
// so cloudcheck recreates it rather than waiting on a corpse.
func (c CPI) HasVM(cid apiv1.VMCID) (bool, error) {
	vm, err := c.cloud.FindVM(cid.AsString())
	if err != nil {
		return false, wrap(err, "looking up VM %s", cid.AsString())
	}
	return vm != nil && !vm.Gone(), nil
}

// RebootVM implements apiv1.CPI.
func (c CPI) RebootVM(cid apiv1.VMCID) error { return notImplemented("reboot_vm") }

// CreateVM implements apiv1.CPI (API v1).
func (c CPI) CreateVM(apiv1.AgentID, apiv1.StemcellCID, apiv1.VMCloudProps, apiv1.Networks,
	[]apiv1.DiskCID, apiv1.VMEnv) (apiv1.VMCID, error) {
	return apiv1.VMCID{}, notImplemented("create_vm")
}

// CreateVMV2 implements apiv1.CPI (API v2).
func (c CPI) CreateVMV2(apiv1.AgentID, apiv1.StemcellCID, apiv1.VMCloudProps, apiv1.Networks,
	[]apiv1.DiskCID, apiv1.VMEnv) (apiv1.VMCID, apiv1.Networks, error) {
	return apiv1.VMCID{}, nil, notImplemented("create_vm")
}

// DeleteVM implements apiv1.CPI.
func (c CPI) DeleteVM(apiv1.VMCID) error { return notImplemented("delete_vm") }

// CalculateVMCloudProperties implements apiv1.CPI.
func (c CPI) CalculateVMCloudProperties(apiv1.VMResources) (apiv1.VMCloudProps, error) {
	return nil, notImplemented("calculate_vm_cloud_properties")
}

// SetVMMetadata implements apiv1.CPI.
func (c CPI) SetVMMetadata(apiv1.VMCID, apiv1.VMMeta) error { return notImplemented("set_vm_metadata") }

// GetDisks implements apiv1.CPI.
func (c CPI) GetDisks(apiv1.VMCID) ([]apiv1.DiskCID, error) { return nil, notImplemented("get_disks") }
